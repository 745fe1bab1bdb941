"""Result tables as files: JSON-ready values and CSV text, written the same way by every report
(``judge evaluate``, ``judge fd``, sweep reports, every analysis).

- `json_ready`: a value JSON can hold: NaN and ±inf become ``null`` (JSON has no such
  numbers), numpy scalars and arrays become Python numbers and lists, tuples become lists and
  mapping keys strings;
- `csv_text`: rows (dicts) as CSV, the columns in first-seen order over all rows, NaN and ±inf
  as empty cells;
- `write_report_files`: an analysis's report as one JSON file and CSV tables in an output
  directory, each file replaced atomically, everything computed before the first file is
  written (no half report);
- `rounded`: a row's values with floats rounded, for a console table.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
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


def write_report_files(
    out_dir: str | Path, json_name: str, data: Any, tables: Mapping[str, Sequence[Mapping[str, Any]]]
) -> list[Path]:
    """``out_dir/json_name`` (NaN as null) and ``out_dir/<name>`` for each CSV table."""
    from reljudge.io.atomic import write_text_atomic

    out = Path(out_dir)
    texts = {out / json_name: json.dumps(json_ready(data), indent=1) + "\n"}
    texts.update({out / name: csv_text(rows) for name, rows in tables.items()})
    for path, text in texts.items():
        write_text_atomic(path, text)
    return list(texts)


def rounded(row: Mapping[str, Any], digits: int = 3) -> list[Any]:
    """The row's values, floats rounded for a console table."""
    return [round(v, digits) if isinstance(v, float) else v for v in row.values()]
