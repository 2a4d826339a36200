# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the concurrency tests of module resources share (local and SSH): a stack
of N independent copy resources, the content each file must end with, and how
many resources an event list shows in progress at once."""

from __future__ import annotations

from typing import Any

import yaml


def expected_content(index: int) -> str:
    """Different lengths, so a file written by another resource's call shows."""
    return f"file {index}\n" * (index + 1)


def concurrent_files_template(count: int, host: str | None = None) -> str:
    """``count`` independent ansible.builtin.copy resources into ``root``; each
    copy sends its content as a file first (the copy action plugin), so each call
    needs a remote temporary directory of its own."""
    resources: dict[str, Any] = {}
    for index in range(count):
        dest = {"list_join": ["/", [{"get_param": "root"}, f"file{index}.txt"]]}
        properties: dict[str, Any] = {
            "module": "ansible.builtin.copy",
            "args": {"dest": dest, "content": expected_content(index), "mode": "0640"},
            "delete_module": "ansible.builtin.file",
            "delete_args": {"path": dest, "state": "absent"},
        }
        if host:
            properties["host"] = host
        resources[f"file{index}"] = {"type": "Hotplay::Ansible::Module", "properties": properties}
    template = {
        "heat_template_version": "2021-04-16",
        "parameters": {"root": {"type": "string"}},
        "resources": resources,
        "outputs": {"checksums": {"value": [{"get_attr": [f"file{i}", "checksum"]}
                                            for i in range(count)]}},
    }
    return yaml.safe_dump(template, sort_keys=False)


def most_at_once(events: list[dict[str, Any]], stack_name: str, action: str = "CREATE") -> int:
    """The most resources the events show between IN_PROGRESS and done at once."""
    running: set[str] = set()
    most = 0
    for event in events:
        if event["action"] != action or event["resource_name"] == stack_name:
            continue
        if event["status"] == "IN_PROGRESS":
            running.add(event["resource_name"])
        else:
            running.discard(event["resource_name"])
        most = max(most, len(running))
    return most
