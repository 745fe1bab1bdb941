"""Shared fixtures. Tests that need the full collections in ../shared/data use `shared_data`
and are skipped, with the reason, on a machine that does not have it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SHARED_DATA = Path(os.environ.get("RELJUDGE_SHARED_DATA", ROOT.parent / "shared" / "data"))


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if not (SHARED_DATA / "README.md").exists():
        pytest.skip(f"full collections not found at {SHARED_DATA} (set RELJUDGE_SHARED_DATA to use them)")
    return SHARED_DATA
