# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The test harness's last task (tests/integration/conftest.py ``run_tasks``): writes
the play's registered results, as JSON text, to a file on the controller.

An action plugin with no module: it runs in the controller's worker, where
``ansible.builtin.copy`` ran two modules (``stat``, then ``copy``), each a Python of its
own, for about a CPU-second per playbook run, on every one of the suite's runs."""

from __future__ import annotations

import os
from typing import Any

from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _requires_connection = False

    def run(self, tmp: Any = None, task_vars: dict[str, Any] | None = None) -> dict[str, Any]:
        dest, content = self._task.args.get("dest"), self._task.args.get("content")
        if not isinstance(dest, str) or not isinstance(content, str):
            raise AnsibleActionFail("dump_registered wants dest and content, both strings")
        # 0600: a test's registered results may hold what a module was given.
        descriptor = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "w", encoding="utf-8") as stream:
            stream.write(content)
        return {"changed": True, "dest": dest}
