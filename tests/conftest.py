"""Shared fixtures. Tests that need the full collections in ../shared/data use `shared_data`
and are skipped, with the reason, on a machine that does not have it."""

from __future__ import annotations

import importlib
import os
from pathlib import Path

import pytest

try:
    from hypothesis import HealthCheck, settings
except ImportError:  # hypothesis is only needed by the property tests
    pass
else:
    # CI runs on the developer's busy machine: slow example generation is not a failure (the
    # property tests set deadline=None for the same reason)
    settings.register_profile("busy-machine", suppress_health_check=[HealthCheck.too_slow])
    settings.load_profile("busy-machine")

ROOT = Path(__file__).resolve().parent.parent
SHARED_DATA = Path(os.environ.get("RELJUDGE_DATA_DIR", ROOT.parent / "shared" / "data"))


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if not (SHARED_DATA / "README.md").exists():
        pytest.skip(f"full collections not found at {SHARED_DATA} (set RELJUDGE_DATA_DIR to use them)")
    return SHARED_DATA


# --- the docs read-through first; an honest `slow` marker -----------------------------------

#: a test that takes this long (set-up, call and tear-down together) is slow: it must carry
#: ``@pytest.mark.slow``, so that ``-m "not slow"`` stays a fast tier
SLOW_SECONDS = 1.0


def pytest_addoption(parser):
    parser.addoption(
        "--check-slow-marks",
        action="store_true",
        help=f"fail the run when a test not marked slow takes {SLOW_SECONDS:g} s or more "
        "(the list is printed either way; timings depend on the machine's load)",
    )


def pytest_collection_modifyitems(config, items):
    # the read-through of the README and the docs holds the longest tests (and chains of blocks
    # that need others): first in the queue, so that the workers start on them at once
    items.sort(key=lambda item: item.path.name != "test_readme.py")
    # a test that takes the shared data is marked `shared`, so `-m shared` selects every test a
    # clone without the data skips (.ci/run runs the suite without the data, then these with it)
    for item in items:
        if "shared_data" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.shared)


#: third-party libraries that take 0.5-1.5 s to import and that many tests use. A run that
#: measures its tests (an xdist worker, ``--check-slow-marks``) imports them before the first
#: test, so that the test that happens to use one first is not charged with the import (and
#: listed below as slow while it takes 0.01-0.3 s); a run of a few tests by hand does not pay
WARM_IMPORTS = ("scipy.stats", "openai", "matplotlib")


def pytest_collection_finish(session):
    config = session.config
    if not session.items or not (hasattr(config, "workerinput") or config.getoption("--check-slow-marks")):
        return
    for name in WARM_IMPORTS:
        try:
            module = importlib.import_module(name)
        except ImportError:  # an optional extra that is not installed
            continue
        if name == "matplotlib":
            module.use("Agg")  # as `reljudge.io.figures` does, before pyplot
            importlib.import_module("matplotlib.pyplot")


_durations: dict[str, float] = {}
_unmarked: set[str] = set()


def pytest_runtest_logreport(report):
    _durations[report.nodeid] = _durations.get(report.nodeid, 0.0) + report.duration
    if "slow" not in report.keywords:
        _unmarked.add(report.nodeid)


def _slow_unmarked() -> list[tuple[float, str]]:
    return sorted(
        ((d, n) for n, d in _durations.items() if n in _unmarked and d >= SLOW_SECONDS), reverse=True
    )


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    found = _slow_unmarked()
    if found:
        terminalreporter.section("tests not marked slow that took 1 s or more")
        for seconds, nodeid in found:
            terminalreporter.write_line(f"{seconds:6.2f}s {nodeid}")


def pytest_sessionfinish(session, exitstatus):
    if session.config.getoption("--check-slow-marks") and _slow_unmarked() and exitstatus == 0:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
