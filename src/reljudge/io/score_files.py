"""Per-topic and per-system score tables of generated answers as files (the nugget scores,
`reljudge.io.answer_nugget_scores`, and the citation scores, `reljudge.io.citation_scores`): two CSVs
and one JSON, each written atomically, and the JSON read back with a bound on its size.

A CSV has a header of the columns and one row per entry, an undefined score (None) as an empty
cell and floats written with ``repr`` (so they read back to the same values). The JSON is
``{**extra, "topics": [...], "systems": [...], "incomplete": [[a, b], ...]}`` with undefined
scores as ``null``.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from reljudge.errors import InputError
from reljudge.io.atomic import atomic_write

#: the largest scores file read back
MAX_JSON_BYTES = 256 * 1024 * 1024


def write_score_files(
    directory: str | Path,
    names: Mapping[str, str],
    tables: Mapping[str, tuple[Sequence[str], Sequence[Mapping[str, Any]]]],
    incomplete: Sequence[tuple[str, str]],
    extra: Mapping[str, Any] | None = None,
) -> dict[str, str]:
    """Write ``tables`` (``"topics"``/``"systems"`` -> (columns, rows)) as CSVs and all of it as
    JSON into ``directory``, under ``names`` (kind -> file name, kinds ``topics``, ``systems``,
    ``json``); returns the paths by kind."""
    paths = {kind: Path(directory) / name for kind, name in names.items()}
    for kind, (columns, rows) in tables.items():
        with atomic_write(paths[kind]) as handle:
            writer = csv.writer(handle, lineterminator="\n")
            writer.writerow(columns)
            for row in rows:
                writer.writerow(["" if row[c] is None else _cell(row[c]) for c in columns])
    payload = {
        **(extra or {}),
        **{kind: [{c: row[c] for c in columns} for row in rows] for kind, (columns, rows) in tables.items()},
        "incomplete": [list(pair) for pair in incomplete],
    }
    with atomic_write(paths["json"]) as handle:
        json.dump(payload, handle, indent=2, allow_nan=False)
        handle.write("\n")
    return {kind: str(path) for kind, path in paths.items()}


def _cell(value: Any) -> str:
    return repr(value) if isinstance(value, float) else str(value)


def read_score_json(path: str | Path, name: str) -> dict[str, Any]:
    """A scores JSON file (or the directory holding it as ``name``) as written; bad content is
    ``FILE: what is wrong``."""
    path = Path(path)
    if path.is_dir():
        path = path / name
    try:
        if path.stat().st_size > MAX_JSON_BYTES:
            raise InputError(f"larger than {MAX_JSON_BYTES:,} bytes", path)
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as err:
        raise InputError(f"cannot read: {err.strerror or err}", path) from None
    except (ValueError, UnicodeDecodeError, RecursionError) as err:
        raise InputError(f"not JSON: {type(err).__name__}: {err}"[:300], path) from None
    if not isinstance(data, dict) or not all(
        isinstance(data.get(k), list) for k in ("topics", "systems", "incomplete")
    ):
        raise InputError("expected an object with lists 'topics', 'systems' and 'incomplete'", path)
    return data
