# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which class reads a template: the one its version key asks for, as Heat's
``Template.__new__`` picks a template class by version (heat/engine/template.py)."""

from __future__ import annotations

from .cfn import CfnTemplate
from .hot import HotTemplate
from .loader import TemplateSource
from .versions import version_of


def read_template(source: TemplateSource) -> HotTemplate:
    """A HOT or CFN template, checked; Heat's errors when its version is wrong."""
    version = version_of(source.data, source.path)
    template_class = CfnTemplate if version.is_cfn else HotTemplate
    return template_class(source, version)
