"""Shared fixtures. Tests that need the full collections in ../shared/data use `shared_data`
and are skipped, with the reason, on a machine that does not have it."""

from __future__ import annotations

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
