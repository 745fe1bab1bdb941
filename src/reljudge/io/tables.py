"""Result tables as files: JSON-ready values and CSV text, written the same way by every report
(``judge evaluate``, ``judge fd``, sweep reports).

- `json_ready`: a value JSON can hold: NaN and ±inf become ``null`` (JSON has no such
  numbers), numpy scalars and arrays become Python numbers and lists, tuples become lists and
  mapping keys strings;
- `csv_text`: rows (dicts) as CSV, the columns in first-seen order over all rows, NaN and ±inf
  as empty cells.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Mapping, Sequence
from typing import Any


def json_ready(value: Any) -> Any:
    """``value`` with everything JSON cannot hold replaced (see the module docstring)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {str(k): json_ready(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_ready(v) for v in value]
    if hasattr(value, "tolist") and type(value).__module__ == "numpy":  # numpy scalar or array
        return json_ready(value.tolist())
    return value


def csv_text(rows: Sequence[Mapping[str, Any]]) -> str:
    """The rows as CSV text with a header line ("" for no rows)."""
    if not rows:
        return ""
    fields = list(dict.fromkeys(k for row in rows for k in row))
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=fields, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow(
            {k: ("" if isinstance(v, float) and not math.isfinite(v) else v) for k, v in row.items()}
        )
    return buf.getvalue()
