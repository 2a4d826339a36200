# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Software configs made by the real Heat adopted with their ids; a type this
collection cannot manage (OS::Heat::SoftwareComponent) refuses the adoption, or
is kept read-only with ``unmanaged: read_only``."""

from __future__ import annotations

from pathlib import Path

from test_adopt_from_heat import TEMPLATES, ids, in_heat


def test_configs_adopted_and_an_unmanaged_type_named(heat, cloud_env, run_tasks, tmp_path: Path) -> None:
    heat.create("cfg", (TEMPLATES / "configs.yaml").read_text())
    heat_resources = in_heat(heat.export("cfg"))
    read_only = tmp_path / "read-only.yaml"
    read_only.write_text("resource_registry:\n  OS::Heat::SoftwareComponent: Hotplay::ReadOnly\n")
    template = str(TEMPLATES / "configs.yaml")
    run = run_tasks([
        {"hotplay.stacks.stack_adopt": {"cloud": "heat", "stack": "cfg", "template": template},
         "register": "refused"},
        {"hotplay.stacks.stack_adopt": {"cloud": "heat", "stack": "cfg", "template": template,
                                        "environment": [str(read_only)], "unmanaged": "read_only"},
         "register": "adopted"},
        {"hotplay.stacks.stack": {"name": "cfg", "template": template, "environment": [str(read_only)]},
         "register": "same"},
    ], env=cloud_env).results
    assert run["refused"]["msg"] == (
        "cloud heat, stack cfg: stack cfg has resources of types hotplay.stacks cannot adopt: component "
        "(OS::Heat::SoftwareComponent); nothing was written (an environment mapping them to "
        "provider templates adopts them into those; "
        "unmanaged: read_only keeps them as read-only resources)")
    adopted = run["adopted"]
    assert adopted["stack_status"] == "ADOPT_COMPLETE", adopted.get("msg")
    assert ids(adopted) == {path: r["id"] for path, r in heat_resources.items()}
    script_id = heat_resources["script"]["id"]
    assert adopted["outputs"]["script_id"] == script_id
    assert adopted["outputs"]["script"] == "#!/bin/sh\necho hello\n"
    assert "echo hello" in adopted["outputs"]["boot"]  # the part found by Heat's config id
    assert run["same"]["changed"] is False
