# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""How big the task result of a no-op run of a wide stack is, per ``return_resources``
and ``events_limit``: one real ansible-playbook run that creates a stack of N
resources, then runs the same task again with each setting and writes each result's
size (its JSON, as a callback or AWX would store it).

    .venv/bin/python benchmarks/bench_result_size.py [N]    (default 2000)
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
BIN = REPO / ".venv" / "bin"
SETTINGS = {
    "all": {},
    "changed": {"return_resources": "changed"},
    "none_events_20": {"return_resources": "none", "events_limit": 20},
}


def template(count: int) -> str:
    resources = {f"r{i}": {"type": "OS::Heat::Value", "properties": {"value": f"v{i}"}}
                 for i in range(count)}
    return yaml.safe_dump({"heat_template_version": "2018-08-31", "resources": resources})


def play(directory: Path, count: int) -> Path:
    path = directory / "wide.yaml"
    path.write_text(template(count))
    apply = {"name": "wide", "template": str(path), "store": f"sqlite:///{directory}/s.db"}
    tasks = [{"hotplay.stacks.stack": {**apply, "return_resources": "none", "events_limit": 0}}]
    for name, options in SETTINGS.items():
        tasks.append({"hotplay.stacks.stack": {**apply, **options}, "register": name})
        tasks.append({"ansible.builtin.copy": {"dest": str(directory / f"{name}.json"),
                                               "content": "{{ " + name + " | to_json }}"}})
    playbook = directory / "play.yml"
    playbook.write_text(yaml.safe_dump([{"hosts": "localhost", "gather_facts": False, "tasks": tasks}]))
    return playbook


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    with tempfile.TemporaryDirectory() as temporary:
        directory = Path(temporary)
        environment = {**os.environ, "ANSIBLE_COLLECTIONS_PATH": str(REPO / ".build" / "installed"),
                       "ANSIBLE_LOCALHOST_WARNING": "false",
                       "ANSIBLE_PYTHON_INTERPRETER": str(BIN / "python"), "PATH": f"{BIN}:{os.environ['PATH']}"}
        environment.pop("PYTHONPATH", None)
        ran = subprocess.run([str(BIN / "ansible-playbook"), "-i", "localhost,", "-c", "local",
                              str(play(directory, count))], env=environment, check=False,
                             capture_output=True, text=True)
        if ran.returncode:
            sys.exit(ran.stdout[-3000:] + ran.stderr[-2000:])
        for name in SETTINGS:
            result = json.loads((directory / f"{name}.json").read_text())
            size = len(json.dumps(result))
            print(f"{count} resources, no-op run, {name:16} {size / 1000:8.1f} kB "
                  f"(resources: {len(result['resources'])}, events: {len(result['events'])}, "
                  f"changed: {result['changed']})")


if __name__ == "__main__":
    main()
