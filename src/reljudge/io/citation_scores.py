"""The citation scores of generated answers as files: per topic and per system, CSV and JSON.

- ``answer-citations-topics.csv``: ``system,qid,sentences,cited_sentences,citations,judged,unjudged,
  precision,recall,f1,cited_share`` (an undefined precision -- no judged citation -- is an empty cell);
- ``answer-citations-systems.csv``: ``system,topics,topics_without_judged``, the summed counts and
  the four means;
- ``answer-citations.json``: ``{"topics": [...], "systems": [...], "incomplete": [...]}`` (undefined
  scores are ``null``).

Each file is written atomically (`reljudge.judges.citations.scores` says what each score is).
"""

from __future__ import annotations

import csv
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from reljudge.errors import InputError
from reljudge.io.atomic import atomic_write

COUNTS = ("sentences", "cited_sentences", "citations", "judged", "unjudged")
SCORES = ("precision", "recall", "f1", "cited_share")
TOPICS_CSV = "answer-citations-topics.csv"
SYSTEMS_CSV = "answer-citations-systems.csv"
SCORES_JSON = "answer-citations.json"
TOPIC_COLUMNS = ("system", "qid", *COUNTS, *SCORES)
SYSTEM_COLUMNS = ("system", "topics", "topics_without_judged", *COUNTS, *SCORES)
#: the largest scores file read back
MAX_JSON_BYTES = 256 * 1024 * 1024


def write_citation_scores(
    directory: str | Path,
    topics: Sequence[Mapping[str, Any]],
    systems: Sequence[Mapping[str, Any]],
    *,
    incomplete: Sequence[tuple[str, str]] = (),
) -> dict[str, str]:
    """Write the three files into ``directory``; returns their paths by kind."""
    directory = Path(directory)
    paths = {
        "topics": directory / TOPICS_CSV,
        "systems": directory / SYSTEMS_CSV,
        "json": directory / SCORES_JSON,
    }
    for kind, columns, rows in (("topics", TOPIC_COLUMNS, topics), ("systems", SYSTEM_COLUMNS, systems)):
        with atomic_write(paths[kind]) as handle:
            writer = csv.writer(handle, lineterminator="\n")
            writer.writerow(columns)
            for row in rows:
                writer.writerow(["" if row[c] is None else _cell(row[c]) for c in columns])
    payload = {
        "topics": [{c: row[c] for c in TOPIC_COLUMNS} for row in topics],
        "systems": [{c: row[c] for c in SYSTEM_COLUMNS} for row in systems],
        "incomplete": [list(pair) for pair in incomplete],
    }
    with atomic_write(paths["json"]) as handle:
        json.dump(payload, handle, indent=2, allow_nan=False)
        handle.write("\n")
    return {kind: str(path) for kind, path in paths.items()}


def _cell(value: Any) -> str:
    return repr(value) if isinstance(value, float) else str(value)


def read_citation_scores(path: str | Path) -> dict[str, Any]:
    """An ``answer-citations.json`` file (or the directory holding it) as written."""
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
