# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The OpenStack types' modules are imported when a template first names one of
their types: the table that says which module registers which type must be
exactly what the modules register, a run without OpenStack types must not import
them, and threads asking at once must all get the class."""

from __future__ import annotations

import importlib
import pkgutil
import subprocess
import sys

from ansible_collections.hotplay.stacks.plugins.plugin_utils.resources import base, openstack

PACKAGE = openstack.__name__
SERVICE_MODULES = ("neutron", "nova", "cinder", "glance", "swift", "ec2", "keystone")


def _registered_by(module_name: str) -> set[str]:
    importlib.import_module(module_name)
    return {name for name, cls in base._TYPES.items()  # pylint: disable=protected-access
            if cls.__module__ == module_name}


def test_the_table_of_deferred_types_is_what_each_module_registers() -> None:
    assert set(openstack.TYPES_BY_MODULE) == set(SERVICE_MODULES)
    for module, type_names in openstack.TYPES_BY_MODULE.items():
        assert _registered_by(f"{PACKAGE}.{module}") == set(type_names), module


def test_no_other_module_of_the_package_registers_a_type() -> None:
    for found in pkgutil.iter_modules(openstack.__path__):
        if found.name not in SERVICE_MODULES:
            assert not _registered_by(f"{PACKAGE}.{found.name}"), found.name


def test_every_deferred_type_is_known_and_resolves_to_its_class() -> None:
    for type_names in openstack.TYPES_BY_MODULE.values():
        for type_name in type_names:
            assert type_name in base.known_types()
            cls = base.resource_class(type_name)
            assert cls is not None and cls.type_name == type_name


def _run(code: str) -> str:
    shown = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return shown.stdout.strip()


def test_a_run_without_openstack_types_does_not_import_their_modules() -> None:
    code = (
        "import sys\n"
        "import ansible_collections.hotplay.stacks.plugins.plugin_utils.operations.engine\n"
        "from ansible_collections.hotplay.stacks.plugins.plugin_utils.resources import base\n"
        f"services = [m for m in {SERVICE_MODULES!r} if '{PACKAGE}.' + m in sys.modules]\n"
        "server = base.resource_class('OS::Nova::Server')\n"
        f"print(services, server.type_name, '{PACKAGE}.nova' in sys.modules)\n"
    )
    assert _run(code) == "[] OS::Nova::Server True"


def test_threads_asking_at_once_all_get_the_class() -> None:
    # Sixteen threads, each asking for one of the types as the module is first
    # imported: none may see the module half made (no class, or a class whose
    # module has not finished).
    code = (
        "import sys, threading\n"
        "from ansible_collections.hotplay.stacks.plugins.plugin_utils.resources import base, openstack\n"
        "names = [n for names in openstack.TYPES_BY_MODULE.values() for n in names]\n"
        "barrier = threading.Barrier(len(names))\n"
        "found = {}\n"
        "def ask(name):\n"
        "    barrier.wait()\n"
        "    cls = base.resource_class(name)\n"
        "    module = sys.modules[cls.__module__] if cls else None\n"
        "    done = module is not None and not getattr(module.__spec__, '_initializing', False)\n"
        "    found[name] = cls is not None and cls.type_name == name and done\n"
        "threads = [threading.Thread(target=ask, args=(n,)) for n in names]\n"
        "[t.start() for t in threads]\n"
        "[t.join() for t in threads]\n"
        "print(len(found), all(found.values()))\n"
    )
    count = sum(len(names) for names in openstack.TYPES_BY_MODULE.values())
    assert _run(code) == f"{count} True"
