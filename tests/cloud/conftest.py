# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The real-cloud tests: real ansible-playbook, the installed collection and the real
openstack.cloud collection against the throwaway cloud of tests/cloud/cloud.py.

`scripts/cloud.sh test` (and `make test`) starts the cloud, sets HOTPLAY_CLOUD_DIR and
HOTPLAY_OPENSTACK_COLLECTIONS, runs these tests and stops it.

The tests run side by side (two workers unless CLOUD_WORKERS says, scripts/test.sh): each makes its things
under names of its own.  A test that reads what the whole cloud holds or logs (an access
log's calls since a mark, every floating IP, the project's networks) is marked
``cloud_alone``: it runs with no other test beside it (``cloud_share``).  The tests that
use what there is one of (the real Heat engine on the cloud, a web server on port 80)
run in one worker (``ONE_OF_A_KIND``), so one Heat is started for them."""

from __future__ import annotations

import contextlib
import fcntl
import os
import sys
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "differential"))
import integration_harness  # noqa: E402  (tests/, put on the path above)
from heat_peer import HeatClient, peer_venv  # noqa: E402  (tests/differential)

import heat_on_cloud  # noqa: E402  (beside this file)

integration = integration_harness.load()

store_url = integration.store_url
run_tasks = integration.run_tasks


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "cloud_alone: reads what the whole cloud holds or logs: "
                            "runs with no other test beside it")


# What there is one of for the whole run: the tests that use one run in one worker.
ONE_OF_A_KIND = ("heat_on_the_cloud",  # the real Heat engine (its service user, its endpoint)
                 "served")  # the web server on port 80 (tests/cloud/test_native_cinder.py)


# Before xdist's own hook (registered later, so called earlier otherwise), which reads
# the groups into the tests' ids.
@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if set(ONE_OF_A_KIND) & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.xdist_group("one-of-a-kind"))


@contextlib.contextmanager
def cloud_share(alone: bool) -> Iterator[None]:
    """A test's share of the cloud across the xdist workers: every test holds the lock
    file shared, a ``cloud_alone`` test holds it alone.  A test waiting to be alone
    holds the gate, so no test starts beside it meanwhile (it waits for those running)."""
    if not os.environ.get("HOTPLAY_CLOUD_DIR"):
        yield  # no cloud: the test fails at its set-up (cloud_env), with nothing to share
        return
    directory = Path(os.environ["HOTPLAY_CLOUD_DIR"])
    with open(directory / "tests.gate", "a") as gate, open(directory / "tests.lock", "a") as lock:
        if alone:
            fcntl.flock(gate, fcntl.LOCK_EX)
            fcntl.flock(lock, fcntl.LOCK_EX)
        else:
            fcntl.flock(gate, fcntl.LOCK_SH)
            fcntl.flock(lock, fcntl.LOCK_SH)
            fcntl.flock(gate, fcntl.LOCK_UN)
        yield  # closing the files lets go of both


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Generator[None, None, None]:
    """The whole of a test (set-up, the session fixtures it starts, tear-down) under
    its share of the cloud."""
    with cloud_share(item.get_closest_marker("cloud_alone") is not None):
        yield


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


@pytest.fixture(scope="session")
def heat_on_the_cloud(cloud_env: dict[str, str]) -> Iterator[heat_on_cloud.HeatOnCloud]:
    """The real Heat engine, behind the cloud's Keystone, for the session."""
    venv = peer_venv()
    if venv is None:
        pytest.skip("the real Heat engine is not installed: `make heat-peer` installs it from the "
                    "team's shared/ folder beside the clone (or set HEAT_VENV to a venv with openstack-heat)")
    heat = heat_on_cloud.start(Path(os.environ["HOTPLAY_CLOUD_DIR"]), venv)
    try:
        yield heat
    finally:
        heat.stop()


@pytest.fixture
def heat_client(heat_on_the_cloud: heat_on_cloud.HeatOnCloud, conn: Any) -> HeatClient:
    """Heat's API for the cloud's admin project, with a token of the cloud's Keystone."""
    return HeatClient(heat_on_cloud.project_endpoint(heat_on_the_cloud, conn), poll=0.5,
                      timeout=300, token=conn.auth_token)


@pytest.fixture
def heat_templates() -> Path:
    """The openstack/heat-templates checkout (its files are others' work and not
    shipped): $HOTPLAY_HEAT_TEMPLATES, else ../shared/heat-templates beside the clone;
    without either the test skips with one line saying how to give one."""
    checkout = integration_harness.optional_folder("HOTPLAY_HEAT_TEMPLATES", "heat-templates")
    if checkout is None:
        pytest.skip("heat-templates checkout not found (its files are not shipped): set "
                    "HOTPLAY_HEAT_TEMPLATES to one, or put it in ../shared/heat-templates")
    return checkout
