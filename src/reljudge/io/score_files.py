"""Per-topic and per-system score tables of generated answers as files: two CSVs and one JSON,
each written atomically, and read back (the JSON with a bound on its size).

A judge that scores answers declares its files as a `ScoreFiles` (the nugget scores,
`reljudge.judges.nuggets.answers.SCORE_FILES`; the citation scores,
`reljudge.judges.citations.scores.SCORE_FILES`): their names and the columns of each CSV.

A CSV has a header of the columns and one row per entry, an undefined score (None) as an empty
cell and floats written with ``repr`` (so they read back to the same values). The JSON is
``{**extra, "topics": [...], "systems": [...], "incomplete": [[a, b], ...]}`` with undefined
scores as ``null``.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reljudge.errors import InputError
from reljudge.io.atomic import atomic_write
from reljudge.io.lines import loads_json

#: the largest scores file read back
MAX_JSON_BYTES = 256 * 1024 * 1024
#: the columns of a per-topic CSV read as text (the others are numbers)
TEXT_COLUMNS = ("system", "qid")


@dataclass(frozen=True)
class ScoreFiles:
    """The three files of one kind of answer scores: ``topics_csv`` (one row per (system,
    topic), columns ``topic_columns``), ``systems_csv`` (one row per system, ``system_columns``)
    and ``json`` (both tables, the answers left out as ``incomplete``, and any extra fields)."""

    topics_csv: str
    systems_csv: str
    json: str
    topic_columns: tuple[str, ...]
    system_columns: tuple[str, ...]

    def write(
        self,
        directory: str | Path,
        topics: Sequence[Mapping[str, Any]],
        systems: Sequence[Mapping[str, Any]],
        *,
        incomplete: Sequence[tuple[str, str]] = (),
        extra: Mapping[str, Any] | None = None,
    ) -> dict[str, str]:
        """Write the three files into ``directory``; returns their paths by kind (``topics``,
        ``systems``, ``json``)."""
        return write_score_files(
            directory,
            {"topics": self.topics_csv, "systems": self.systems_csv, "json": self.json},
            {"topics": (self.topic_columns, topics), "systems": (self.system_columns, systems)},
            incomplete,
            extra,
        )

    def read_json(self, path: str | Path) -> dict[str, Any]:
        """The JSON file (or the directory holding it) as written; bad content is ``FILE: what
        is wrong``."""
        return read_score_json(path, self.json)

    def read_topics_csv(self, path: str | Path) -> list[dict[str, Any]]:
        """The rows of the per-topic CSV (or of the one in a directory): ``system`` and ``qid``
        as text, the other columns as numbers (floats; empty cells as None)."""
        path = Path(path)
        if path.is_dir():
            path = path / self.topics_csv
        columns = self.topic_columns
        rows: list[dict[str, Any]] = []
        with path.open(encoding="utf-8", newline="") as handle:
            reader = csv.reader(handle)
            header = next(reader, None)
            if header is None or tuple(header) != columns:
                raise InputError(f"expected the header {','.join(columns)}", path, 1)
            for number, cells in enumerate(reader, start=2):
                if len(cells) != len(columns):
                    raise InputError(f"expected {len(columns)} columns, found {len(cells)}", path, number)
                row: dict[str, Any] = {}
                for name, cell in zip(columns, cells, strict=True):
                    if name in TEXT_COLUMNS:
                        row[name] = cell
                        continue
                    try:
                        row[name] = float(cell) if cell else None
                    except ValueError:
                        raise InputError(f"{name}: not a number: {cell!r}", path, number) from None
                rows.append(row)
        return rows


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
        data = loads_json(path.read_bytes(), path)
    except OSError as err:
        raise InputError(f"cannot read: {err.strerror or err}", path) from None
    except (ValueError, UnicodeDecodeError, RecursionError) as err:
        raise InputError(f"not JSON: {type(err).__name__}: {err}"[:300], path) from None
    if not isinstance(data, dict) or not all(
        isinstance(data.get(k), list) for k in ("topics", "systems", "incomplete")
    ):
        raise InputError("expected an object with lists 'topics', 'systems' and 'incomplete'", path)
    return data
