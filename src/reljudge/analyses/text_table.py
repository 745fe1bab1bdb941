"""The plain-text table every analysis prints on the console (``judge evaluate``, ``judge fd``,
``judge histogram``, ...): `format_table` (the first column left-aligned, the others
right-aligned, floats with 3 digits, NaN as ``-``) and `format_value` (one cell so).

Pure text formatting: no I/O, importable by the pure modules of every analysis.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

__all__ = ["format_table", "format_value"]


def format_value(v: object, digits: int = 3) -> str:
    """A table cell: a float with ``digits`` digits (NaN as ``-``), anything else as ``str``."""
    if isinstance(v, float):
        return "-" if math.isnan(v) else f"{v:.{digits}f}"
    return str(v)


def format_table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A plain text table: the first column left-aligned, the others right-aligned; floats with 3 digits."""
    cells = [[str(h) for h in headers]] + [[format_value(v) for v in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    lines = [
        "  ".join(
            c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths, strict=True))
        )
        for r in cells
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)
