"""reljudge: judge search results with LLMs by the published methods, and measure the labels.

The public API is re-exported here lazily, so `import reljudge` (and `judge --help`) stay fast.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

# name -> module that defines it
_EXPORTS: dict[str, str] = {
    "Judgment": "reljudge.records",
    "Usage": "reljudge.records",
    "Provenance": "reljudge.records",
    "InputError": "reljudge.errors",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'reljudge' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])


__all__ = ["__version__", *_EXPORTS]
