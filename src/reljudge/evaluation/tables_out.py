"""Writing an analysis report: one JSON file and CSV tables into an output directory, each file
replaced atomically, everything computed before the first file is written (no half report)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any


def write_report_files(
    out_dir: str | Path, json_name: str, data: Any, tables: Mapping[str, Sequence[Mapping[str, Any]]]
) -> list[Path]:
    """``out_dir/json_name`` (NaN as null) and ``out_dir/<name>`` for each CSV table."""
    from reljudge.io.atomic import write_text_atomic
    from reljudge.io.tables import csv_text, json_ready

    out = Path(out_dir)
    texts = {out / json_name: json.dumps(json_ready(data), indent=1) + "\n"}
    texts.update({out / name: csv_text(rows) for name, rows in tables.items()})
    for path, text in texts.items():
        write_text_atomic(path, text)
    return list(texts)


def rounded(row: Mapping[str, Any], digits: int = 3) -> list[Any]:
    """The row's values, floats rounded for a console table."""
    return [round(v, digits) if isinstance(v, float) else v for v in row.values()]
