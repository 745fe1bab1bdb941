"""The nugget scores of generated answers as files: per topic and per system, CSV and JSON.

- ``answer-nuggets-topics.csv``: ``system,qid,all,all-strict,vital,vital-strict,weighted,weighted-strict``
  (an undefined score, e.g. Vital on a topic without vital nuggets, is an empty cell);
- ``answer-nuggets-systems.csv``: ``system,topics,topics_without_vital`` and the six means;
- ``answer-nuggets.json``: ``{"empty_class", "topics": [...], "systems": [...], "incomplete": [...]}``
  (undefined scores are ``null``).

Each file is written atomically (`reljudge.io.score_files`). `read_answer_scores` reads the JSON back (the CSVs hold the same
rows, written with ``repr`` floats, so they read back to the same values too).
"""

from __future__ import annotations

import csv
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from reljudge.errors import InputError
from reljudge.io.score_files import read_score_json, write_score_files

SCORES = ("all", "all-strict", "vital", "vital-strict", "weighted", "weighted-strict")
TOPICS_CSV = "answer-nuggets-topics.csv"
SYSTEMS_CSV = "answer-nuggets-systems.csv"
SCORES_JSON = "answer-nuggets.json"
TOPIC_COLUMNS = ("system", "qid", *SCORES)
SYSTEM_COLUMNS = ("system", "topics", "topics_without_vital", *SCORES)


def write_answer_scores(
    directory: str | Path,
    topics: Sequence[Mapping[str, Any]],
    systems: Sequence[Mapping[str, Any]],
    *,
    empty_class: str = "undefined",
    incomplete: Sequence[tuple[str, str]] = (),
) -> dict[str, str]:
    """Write the three files into ``directory``; returns their paths by kind."""
    return write_score_files(
        directory,
        {"topics": TOPICS_CSV, "systems": SYSTEMS_CSV, "json": SCORES_JSON},
        {"topics": (TOPIC_COLUMNS, topics), "systems": (SYSTEM_COLUMNS, systems)},
        incomplete,
        {"empty_class": empty_class},
    )


def read_answer_scores(path: str | Path) -> dict[str, Any]:
    """An ``answer-nuggets.json`` file (or the directory holding it) as written; bad content is
    ``FILE: what is wrong``."""
    return read_score_json(path, SCORES_JSON)


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
