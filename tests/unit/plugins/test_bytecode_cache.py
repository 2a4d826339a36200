"""Under ansible-core's collection loader the engine's modules are imported by
Python's own source loader, which keeps their bytecode in ``__pycache__``: the
collection loader compiles every module from source in each ansible-playbook run,
half of what importing the engine costs there (issue 30 item 5;
benchmarks/bench_preview.py measures it)."""

import subprocess
import sys
from pathlib import Path

COLLECTIONS = Path(__file__).resolve().parents[3] / ".build" / "collections"

IMPORT_AS_ANSIBLE_DOES = f"""
import importlib.machinery
from ansible.utils.collection_loader._collection_finder import _AnsibleCollectionFinder
_AnsibleCollectionFinder(paths=[{str(COLLECTIONS)!r}])._install()
import ansible_collections.hotplay.stacks.plugins.action.stack as action
from ansible_collections.hotplay.stacks.plugins.plugin_utils.model import plan
from ansible_collections.hotplay.stacks.plugins import plugin_utils
print(type(plan.__loader__).__name__, type(plugin_utils.__loader__).__name__,
      action.ActionModule.__name__, plan.Plan.__module__)
"""


def test_engine_modules_are_loaded_with_bytecode_caching_under_the_collection_loader() -> None:
    shown = subprocess.run([sys.executable, "-c", IMPORT_AS_ANSIBLE_DOES], capture_output=True,
                           text=True, check=True, env={"PATH": "/usr/bin:/bin"}).stdout.split()
    # The package itself is the collection loader's; its modules are Python's.
    assert shown == ["SourceFileLoader", "_AnsibleCollectionLoader", "ActionModule",
                     "ansible_collections.hotplay.stacks.plugins.plugin_utils.model.plan"]
