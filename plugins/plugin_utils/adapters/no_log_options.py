# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The options a module's own argument spec marks ``no_log``, read from its source.

A module resource stores its arguments; an argument the module itself declares
``no_log`` (``get_url``'s ``url_password``) is a secret even when the template
does not list it in the resource's ``no_log``.  Documentation does not say which
options are ``no_log``, and importing a module on the controller would run its
code, so the module's source is read (never run): every ``name=dict(...,
no_log=True)`` and ``"name": {"no_log": True}`` in the module and in the
module_utils files it imports (``url_argument_spec()`` lives in one).  Reading a
spec entry that is not the module's own only ever masks more.

Only options whose names say they are credentials count (``password``,
``passphrase``, ``secret``, ``token``, ``key``...): modules also mark ``no_log``
what is merely long or often private, such as ``copy``'s ``content``, and taking
that for a secret would hide every check-mode diff of a file's content.  Such an
option is sealed by listing it in the resource's ``no_log``.
"""

from __future__ import annotations

import ast
import importlib.util
import re
from collections.abc import Iterator
from pathlib import Path

from ansible.plugins.loader import module_loader

CREDENTIAL_NAME = re.compile(r"pass|secret|token|key|credential|auth", re.IGNORECASE)


def no_log_options(module: str) -> frozenset[str]:
    """Names of the credential options marked ``no_log`` by ``module``'s argument
    spec (empty when its source cannot be read: it is then only what the template
    lists)."""
    found = module_loader.find_plugin_with_context(module, collection_list=None)
    if not found.resolved or not str(found.plugin_resolved_path or "").endswith(".py"):
        return frozenset()
    path = Path(found.plugin_resolved_path)
    tree = _parsed(path)
    if tree is None:
        return frozenset()
    names = set(_no_log_names(tree))
    for helper in _imported_module_utils(tree):
        helper_tree = _parsed(helper)
        if helper_tree is not None:
            names.update(_no_log_names(helper_tree))
    return frozenset(name for name in names if CREDENTIAL_NAME.search(name))


def _parsed(path: Path) -> ast.Module | None:
    try:
        return ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, UnicodeDecodeError, ValueError):
        return None


def _no_log_names(tree: ast.Module) -> Iterator[str]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):  # name=dict(type='str', no_log=True)
            for keyword in node.keywords:
                if keyword.arg and _is_no_log_spec(keyword.value):
                    yield keyword.arg
        elif isinstance(node, ast.Dict):  # 'name': {'type': 'str', 'no_log': True}
            for key, value in zip(node.keys, node.values):
                if isinstance(key, ast.Constant) and isinstance(key.value, str) and _is_no_log_spec(value):
                    yield key.value


def _is_no_log_spec(node: ast.expr) -> bool:
    """``dict(..., no_log=True)`` or ``{..., 'no_log': True}``."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "dict":
        return any(k.arg == "no_log" and _is_true(k.value) for k in node.keywords)
    if isinstance(node, ast.Dict):
        return any(isinstance(k, ast.Constant) and k.value == "no_log" and _is_true(v)
                   for k, v in zip(node.keys, node.values))
    return False


def _is_true(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is True


def _imported_module_utils(tree: ast.Module) -> Iterator[Path]:
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and ".module_utils" in f".{node.module}":
            origin = _origin(node.module)
            if origin is not None:
                yield origin


def _origin(name: str) -> Path | None:
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.origin or not spec.origin.endswith(".py"):
        return None
    return Path(spec.origin)
