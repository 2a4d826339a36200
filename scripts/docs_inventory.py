"""Write an intersphinx inventory of the pages of the Ansible docsite the site links to.

The site is built offline, so Sphinx cannot fetch docs.ansible.com's objects.inv.  The
generated pages refer to a few labels of the Ansible docsite (ANSIBLE_LABELS) and to
other collections' plugins (``ansible_collections.NS.NAME.PLUGIN_TYPE`` labels, whose
pages follow one pattern); this writes those, and only those, into an inventory that
conf.py's intersphinx_mapping reads.  A label of this collection is never written here,
so a reference to one of its plugins that does not exist still fails the build.

    python docs_inventory.py RST_DIR OUTPUT.inv
"""

import re
import sys
import zlib
from pathlib import Path

COLLECTION = ("hotplay", "stacks")
# Labels of the Ansible docsite that antsibull-docs' templates refer to.
ANSIBLE_LABELS = {
    "action_plugins": ("plugins/action.html#action-plugins", "Action plugins"),
    "common_return_values": (
        "reference_appendices/common_return_values.html#common-return-values",
        "Return Values",
    ),
    "ansible_configuration_settings": (
        "reference_appendices/config.html#ansible-configuration-settings",
        "Ansible Configuration Settings",
    ),
}
PLUGIN_LABEL = re.compile(r"ansible_collections\.([a-z0-9_]+)\.([a-z0-9_]+)\.([a-z0-9_]+)_([a-z]+)\b")


def lines(rst_dir: Path) -> list[str]:
    entries = [
        f"{label} std:label -1 {uri} {title}" for label, (uri, title) in sorted(ANSIBLE_LABELS.items())
    ]
    seen: set[str] = set()
    for page in sorted(rst_dir.rglob("*.rst")):
        for match in PLUGIN_LABEL.finditer(page.read_text(encoding="utf-8")):
            namespace, name, plugin, plugin_type = match.groups()
            if (namespace, name) == COLLECTION or match.group(0) in seen:
                continue
            seen.add(match.group(0))
            uri = f"collections/{namespace}/{name}/{plugin}_{plugin_type}.html"
            entries.append(f"{match.group(0)} std:label -1 {uri} {namespace}.{name}.{plugin} {plugin_type}")
    return entries


def main() -> None:
    rst_dir, output = Path(sys.argv[1]), Path(sys.argv[2])
    header = "# Sphinx inventory version 2\n# Project: Ansible\n# Version: devel\n"
    header += "# The remainder of this file is compressed using zlib.\n"
    body = "".join(f"{entry}\n" for entry in lines(rst_dir))
    output.write_bytes(header.encode() + zlib.compress(body.encode()))


if __name__ == "__main__":
    main()
