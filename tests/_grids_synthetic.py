"""The synthetic grids of examples/grids/synthetic.py, loaded for the tests."""

from __future__ import annotations

import importlib.util
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "grids" / "synthetic.py"


def synthetic():
    """The example's module (``generate``, ``write``)."""
    spec = importlib.util.spec_from_file_location("grids_synthetic_example", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
