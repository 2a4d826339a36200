# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A test that leaks a resource fails: an unclosed file, pipe, socket or database
connection (Python's ResourceWarning, which dev mode turns on).

pytest.ini makes a ResourceWarning an error, so a leak freed while the test runs
fails it (pytest reports the error raised in ``__del__`` as an unraisable exception,
also an error).  A leak held in a reference cycle is freed only when the collector
runs, which can be during any later test: so after each test (its fixtures torn
down) the collector runs here, and what it frees is the test's own leak."""

from __future__ import annotations

import gc
import warnings
from collections.abc import Iterator

import pytest


@pytest.fixture(autouse=True)
def no_leaked_resources() -> Iterator[None]:
    yield
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ResourceWarning)
        gc.collect()
    leaks = sorted({str(warning.message) for warning in caught
                    if issubclass(warning.category, ResourceWarning)})
    if leaks:
        pytest.fail("the test leaked: " + "; ".join(leaks), pytrace=False)
