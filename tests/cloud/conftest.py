# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The real-cloud tests: real ansible-playbook, the installed collection and the real
openstack.cloud collection against the throwaway cloud of tests/cloud/cloud.py.

`scripts/cloud.sh test` (which `make test` runs) starts the cloud, sets
HOTPLAY_CLOUD_DIR and HOTPLAY_OPENSTACK_COLLECTIONS, runs these tests and stops it."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import integration_harness  # noqa: E402  (tests/, put on the path above)

integration = integration_harness.load()

store_url = integration.store_url
run_tasks = integration.run_tasks


@pytest.fixture(scope="session")
def cloud_env() -> dict[str, str]:
    """The variables a playbook needs to reach the cloud through openstack.cloud."""
    directory = os.environ.get("HOTPLAY_CLOUD_DIR")
    collections = os.environ.get("HOTPLAY_OPENSTACK_COLLECTIONS")
    if not directory or not collections or not (Path(directory) / "clouds.yaml").exists():
        pytest.fail("the real-cloud tests need the test cloud: run `bash scripts/cloud.sh test` "
                    "(or `scripts/cloud.sh deps && scripts/cloud.sh start`, then set "
                    "HOTPLAY_CLOUD_DIR=.build/cloud and "
                    "HOTPLAY_OPENSTACK_COLLECTIONS=.build/openstack-collections)")
    return {"OS_CLIENT_CONFIG_FILE": str(Path(directory) / "clouds.yaml"), "OS_CLOUD": "hotplay",
            "ANSIBLE_COLLECTIONS_PATH": f"{integration.INSTALLED}:{collections}"}


@pytest.fixture(scope="session")
def conn(cloud_env: dict[str, str]) -> Any:
    """An openstacksdk connection to the cloud, to see what the stacks made."""
    import openstack.config

    config = openstack.config.OpenStackConfig(config_files=[cloud_env["OS_CLIENT_CONFIG_FILE"]])
    return openstack.connection.Connection(config=config.get_one(cloud="hotplay"))
