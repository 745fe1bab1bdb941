"""The nugget scores of generated answers as files: per topic and per system, CSV and JSON.

- ``answer-nuggets-topics.csv``: ``system,qid,all,all-strict,vital,vital-strict,weighted,weighted-strict``
  (an undefined score, e.g. Vital on a topic without vital nuggets, is an empty cell);
- ``answer-nuggets-systems.csv``: ``system,topics,topics_without_vital`` and the six means;
- ``answer-nuggets.json``: ``{"empty_class", "topics": [...], "systems": [...], "incomplete": [...]}``
  (undefined scores are ``null``).

Each file is written atomically. `read_answer_scores` reads the JSON back (the CSVs hold the same
rows, written with ``repr`` floats, so they read back to the same values too).
"""

from __future__ import annotations

import csv
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from reljudge.errors import InputError
from reljudge.io.atomic import atomic_write

SCORES = ("all", "all-strict", "vital", "vital-strict", "weighted", "weighted-strict")
TOPICS_CSV = "answer-nuggets-topics.csv"
SYSTEMS_CSV = "answer-nuggets-systems.csv"
SCORES_JSON = "answer-nuggets.json"
TOPIC_COLUMNS = ("system", "qid", *SCORES)
SYSTEM_COLUMNS = ("system", "topics", "topics_without_vital", *SCORES)
#: the largest scores file read back
MAX_JSON_BYTES = 256 * 1024 * 1024


def write_answer_scores(
    directory: str | Path,
    topics: Sequence[Mapping[str, Any]],
    systems: Sequence[Mapping[str, Any]],
    *,
    empty_class: str = "undefined",
    incomplete: Sequence[tuple[str, str]] = (),
) -> dict[str, str]:
    """Write the three files into ``directory``; returns their paths by kind."""
    directory = Path(directory)
    paths = {
        "topics": directory / TOPICS_CSV,
        "systems": directory / SYSTEMS_CSV,
        "json": directory / SCORES_JSON,
    }
    _write_csv(paths["topics"], TOPIC_COLUMNS, topics)
    _write_csv(paths["systems"], SYSTEM_COLUMNS, systems)
    payload = {
        "empty_class": empty_class,
        "topics": [{c: row[c] for c in TOPIC_COLUMNS} for row in topics],
        "systems": [{c: row[c] for c in SYSTEM_COLUMNS} for row in systems],
        "incomplete": [list(pair) for pair in incomplete],
    }
    with atomic_write(paths["json"]) as handle:
        json.dump(payload, handle, indent=2, allow_nan=False)
        handle.write("\n")
    return {kind: str(path) for kind, path in paths.items()}


def _write_csv(path: Path, columns: Sequence[str], rows: Sequence[Mapping[str, Any]]) -> None:
    with atomic_write(path) as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(columns)
        for row in rows:
            writer.writerow(["" if row[c] is None else _cell(row[c]) for c in columns])


def _cell(value: Any) -> str:
    return repr(value) if isinstance(value, float) else str(value)


def read_answer_scores(path: str | Path) -> dict[str, Any]:
    """An ``answer-nuggets.json`` file (or the directory holding it) as written; bad content is
    ``FILE: what is wrong``."""
    path = Path(path)
    if path.is_dir():
        path = path / SCORES_JSON
    try:
        if path.stat().st_size > MAX_JSON_BYTES:
            raise InputError(f"larger than {MAX_JSON_BYTES:,} bytes", path)
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as err:
        raise InputError(f"cannot read: {err.strerror or err}", path) from None
    except (ValueError, UnicodeDecodeError) as err:
        raise InputError(f"not JSON: {err}", path) from None
    if not isinstance(data, dict) or not all(
        isinstance(data.get(k), list) for k in ("topics", "systems", "incomplete")
    ):
        raise InputError("expected an object with lists 'topics', 'systems' and 'incomplete'", path)
    return data


def read_topic_scores_csv(path: str | Path) -> list[dict[str, Any]]:
    """The rows of an ``answer-nuggets-topics.csv`` (empty cells as None, scores as floats)."""
    path = Path(path)
    rows: list[dict[str, Any]] = []
    with path.open(encoding="utf-8", newline="") as handle:
        reader = csv.reader(handle)
        header = next(reader, None)
        if header is None or tuple(header) != TOPIC_COLUMNS:
            raise InputError(f"expected the header {','.join(TOPIC_COLUMNS)}", path, 1)
        for number, cells in enumerate(reader, start=2):
            if len(cells) != len(TOPIC_COLUMNS):
                raise InputError(f"expected {len(TOPIC_COLUMNS)} columns, found {len(cells)}", path, number)
            row: dict[str, Any] = {"system": cells[0], "qid": cells[1]}
            for name, cell in zip(SCORES, cells[2:], strict=True):
                try:
                    row[name] = float(cell) if cell else None
                except ValueError:
                    raise InputError(f"{name}: not a number: {cell!r}", path, number) from None
            rows.append(row)
    return rows
