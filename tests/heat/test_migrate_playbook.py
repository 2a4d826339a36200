# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The shipped playbook hotplay.stacks.migrate_from_heat against the real Heat: a
preview writes nothing; the migration adopts the stacks with Heat's ids, Heat
abandons them (forgets them; the abandon data is kept) and the same template
applied afterwards changes nothing."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

from conftest import integration
from test_adopt_from_heat import TEMPLATES, apply_task, heat_inputs

RANDOM_ONLY = {"heat_template_version": "2018-08-31",
               "resources": {"token": {"type": "OS::Heat::RandomString", "properties": {"length": 10}}},
               "outputs": {"token": {"value": {"get_attr": ["token", "value"]}}}}


def migrate(cwd: Path, extra: dict[str, Any], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "ANSIBLE_COLLECTIONS_PATH": str(integration.INSTALLED),
                   "ANSIBLE_NOCOLOR": "1", "ANSIBLE_PYTHON_INTERPRETER": str(integration.BIN / "python"),
                   **env}
    environment.pop("PYTHONPATH", None)
    return subprocess.run(
        [str(integration.BIN / "ansible-playbook"), "-i", "localhost,", "-c", "local",
         "hotplay.stacks.migrate_from_heat", "-e", json.dumps(extra)],
        cwd=cwd, env=environment, capture_output=True, text=True, timeout=600, check=False)


def test_migrate_preview_adopt_and_abandon(heat, cloud_env, run_tasks, store_url, tmp_path) -> None:
    heat.create("mig-app", *heat_inputs())
    heat.create("mig-token", RANDOM_ONLY)
    token = heat.export("mig-token")["resources"]["token"]["resource_data"]["value"]
    app_id = heat.stack_id("mig-app")
    env = {**cloud_env, "HOTPLAY_STORE": store_url}
    extra = {"cloud": "heat", "stacks": "mig-app, mig-token",
             "templates": {"mig-app": {"template": str(TEMPLATES / "main.yaml"),
                                       "environment": [str(TEMPLATES / "env.yaml")]}}}

    preview = migrate(tmp_path, {**extra, "preview": True}, env)
    assert preview.returncode == 0, preview.stdout + preview.stderr
    assert "Would adopt mig-app, mig-token from cloud heat." in preview.stdout
    assert integration.store_rows(store_url, "SELECT name FROM stacks") == []

    done = migrate(tmp_path, {**extra, "abandon": True, "abandon_dir": str(tmp_path / "kept")}, env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert heat.gone("mig-app") and heat.gone("mig-token")
    kept = json.loads((tmp_path / "kept" / "mig-token.json").read_text())
    assert kept["resources"]["token"]["resource_data"] == {"value": token}

    after = run_tasks([
        {"hotplay.stacks.stack_info": {"name": "mig-token"}, "register": "token"},
        apply_task("same", "mig-app"),
    ], env=cloud_env).results
    assert after["token"]["stack"]["outputs"] == {"token": token}
    assert after["same"]["changed"] is False and after["same"]["stack_id"] == app_id
