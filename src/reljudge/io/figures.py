"""Figures: the one way reljudge loads matplotlib and writes a figure (every analysis, the sweep
report).

- `pyplot`: ``matplotlib.pyplot`` on the Agg backend, imported when a figure is asked for (the
  extra ``plot``); a missing matplotlib is a `MissingExtraError` naming the extra;
- `save_figure`: a figure written atomically (never half a file), in the format its suffix names.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from reljudge.errors import MissingExtraError


def pyplot() -> Any:
    """``matplotlib.pyplot`` on the Agg backend; `MissingExtraError` when matplotlib is missing."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise MissingExtraError(
            "plots need matplotlib; install it with: pip install 'reljudge[plot]'"
        ) from None
    return plt


def save_figure(fig: Any, path: str | Path, *, dpi: int = 120, tight: bool = True) -> Path:
    """Write ``fig`` to ``path`` atomically, in the format its suffix names (PNG by default)."""
    from reljudge.io.atomic import atomic_write

    path = Path(path)
    with atomic_write(path, mode="wb") as handle:
        fig.savefig(
            handle,
            format=path.suffix.lstrip(".") or "png",
            dpi=dpi,
            bbox_inches="tight" if tight else None,
        )
    return path
