#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: software_deployment
short_description: Run one Heat software deployment on the target host
version_added: 0.1.0
description:
  - The target-side half of C(OS::Heat::SoftwareDeployment) and its relatives in
    M(hotplay.stacks.stack). The stack's engine calls it on the host a deployment
    belongs to, through the play's own connection; there is no agent on the host.
  - Runs a C(script) group config as Heat's script hook does. Inputs are
    environment variables, and each output is read from the file
    C(${heat_outputs_path}.NAME).
  - Idempotent. A marker per deployment id records the hash of what ran (config,
    inputs, action), so the same deployment again runs nothing and returns the
    recorded outputs.
  - You rarely call it yourself; M(hotplay.stacks.stack) does.
options:
  deployment_id:
    description: Identity of the deployment (the stack's resource), used for its marker.
    type: str
    required: true
  action:
    description: Heat's deployment action the config runs for.
    type: str
    choices: [CREATE, UPDATE, DELETE, SUSPEND, RESUME]
    required: true
  config:
    description: The script to run (a C(script) group config).
    type: str
    required: true
  inputs:
    description: Input values by name, as the config's inputs and Heat's C(deploy_*) inputs give them.
    type: dict
    default: {}
  outputs:
    description: Names of the outputs to read after the run; C(error_output) ones fail the deployment when not empty.
    type: list
    elements: dict
    default: []
    suboptions:
      name:
        description: Output name.
        type: str
        required: true
      error_output:
        description: A non-empty value means the deployment failed.
        type: bool
        default: false
  state_dir:
    description: Directory on the host that keeps the deployment markers.
    type: path
    default: /var/lib/hotplay/deployments
  keep_result:
    description:
      - Record the deployment's result in its marker, so the same deployment again
        returns it without running.
      - M(hotplay.stacks.stack) sets it false when the inputs hold a secret, such as a
        hidden parameter's value. The marker then keeps nothing, the stale one is
        removed, and the same deployment again runs again.
    type: bool
    default: true
  forget:
    description: Remove the deployment's marker (after a DELETE) instead of running anything.
    type: bool
    default: false
extends_documentation_fragment:
  - hotplay.stacks.attributes
attributes:
  check_mode:
    support: full
    details: Reports whether the deployment would run; runs nothing.
  diff_mode:
    support: none
  idempotent:
    support: full
    details: The marker of a deployment that succeeded keeps the same run from running again.
  platform:
    description: Target operating systems.
    support: full
    platforms: posix
requirements:
  - Python 3 on the managed host, and there the tool each configuration's group runs (a shell, Python, Ansible)
seealso:
  - module: hotplay.stacks.stack
author:
  - hotplay.stacks maintainers (@hotplay-stacks)
"""

EXAMPLES = r"""
- name: Run a script deployment (normally hotplay.stacks.stack does this)
  hotplay.stacks.software_deployment:
    deployment_id: 5f1c8b7e-deploy
    action: CREATE
    config: |
      #!/bin/sh
      echo "hello $name" > "$heat_outputs_path.greeting"
    inputs:
      name: world
    outputs:
      - name: greeting
"""

RETURN = r"""
deploy_stdout:
  description: What the config printed on standard output.
  returned: always
  type: str
  sample: "configured nginx on port 8080\n"
deploy_stderr:
  description: What the config printed on standard error.
  returned: always
  type: str
  sample: ""
deploy_status_code:
  description: The config's exit status (0 when it succeeded).
  returned: always
  type: int
  sample: 0
outputs:
  description: Declared outputs, read from C(${heat_outputs_path}.NAME).
  returned: always
  type: dict
  sample: {"result": "ok", "port": "8080"}
ran:
  description: False when the marker showed the same deployment had already run.
  returned: always
  type: bool
  sample: true
"""

import hashlib
import json
import os
import shutil
import tempfile

from ansible.module_utils.basic import AnsibleModule


def _digest(params):
    material = json.dumps([params["config"], params["inputs"], params["action"]], sort_keys=True)
    return hashlib.sha256(material.encode("utf-8")).hexdigest()


def _marker_path(state_dir, deployment_id):
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in deployment_id)
    return os.path.join(state_dir, safe + ".json")


def _read_marker(path):
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except (OSError, ValueError):
        return None


def _write_marker(path, content):
    """Atomically: a host cut off mid-write never holds half a marker."""
    directory = os.path.dirname(path)
    os.makedirs(directory, mode=0o700, exist_ok=True)
    descriptor, temporary = tempfile.mkstemp(dir=directory, prefix=".marker-")
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        json.dump(content, handle)
    os.replace(temporary, path)


def _run_script(module, params):
    """Heat's script hook: inputs as environment, outputs from files."""
    workdir = tempfile.mkdtemp(prefix="hotplay-deploy-")
    try:
        script = os.path.join(workdir, "config")
        with open(script, "w", encoding="utf-8") as handle:
            handle.write(params["config"])
        os.chmod(script, 0o700)
        outputs_path = os.path.join(workdir, "outputs")
        env = {name: _as_env(value) for name, value in params["inputs"].items()}
        env["heat_outputs_path"] = outputs_path
        code, stdout, stderr = module.run_command([script], cwd=workdir, environ_update=env)
        outputs = {}
        for declared in params["outputs"]:
            try:
                with open(outputs_path + "." + declared["name"], encoding="utf-8") as handle:
                    outputs[declared["name"]] = handle.read()
            except OSError:
                outputs[declared["name"]] = None
        return {"deploy_stdout": stdout, "deploy_stderr": stderr,
                "deploy_status_code": code, "outputs": outputs}
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def _as_env(value):
    if isinstance(value, str):
        return value
    return json.dumps(value)


def main():
    module = AnsibleModule(
        argument_spec={
            "deployment_id": {"type": "str", "required": True},
            "action": {"type": "str", "required": True,
                       "choices": ["CREATE", "UPDATE", "DELETE", "SUSPEND", "RESUME"]},
            "config": {"type": "str", "required": True},
            "inputs": {"type": "dict", "default": {}},
            "outputs": {"type": "list", "elements": "dict", "default": [],
                        "options": {"name": {"type": "str", "required": True},
                                    "error_output": {"type": "bool", "default": False}}},
            "state_dir": {"type": "path", "default": "/var/lib/hotplay/deployments"},
            "forget": {"type": "bool", "default": False},
            "keep_result": {"type": "bool", "default": True},
        },
        supports_check_mode=True,
    )
    params = module.params
    marker = _marker_path(params["state_dir"], params["deployment_id"])
    if params["forget"]:
        existed = os.path.exists(marker)
        if existed and not module.check_mode:
            os.unlink(marker)
        module.exit_json(changed=existed, ran=False, deploy_stdout="", deploy_stderr="",
                         deploy_status_code=0, outputs={})
    digest = _digest(params)
    recorded = _read_marker(marker)
    if recorded and recorded.get("digest") == digest and recorded.get("deploy_status_code") == 0:
        module.exit_json(changed=False, ran=False, **recorded["result"])
    if module.check_mode:
        module.exit_json(changed=True, ran=False, deploy_stdout="", deploy_stderr="",
                         deploy_status_code=0, outputs={})
    result = _run_script(module, params)
    # Recorded only when it succeeded: a failed or interrupted run is run again.
    # Outputs of secret inputs are never left on the host in plain text.
    if result["deploy_status_code"] == 0 and params["keep_result"]:
        _write_marker(marker, {"digest": digest, "deploy_status_code": 0, "result": result})
    elif os.path.exists(marker):
        os.unlink(marker)
    module.exit_json(changed=True, ran=True, **result)


if __name__ == "__main__":
    main()
