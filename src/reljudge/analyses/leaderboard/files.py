"""Files of ``judge leaderboard``: the leaderboards it reads and the report it writes.

Leaderboards in the layouts TREC AutoJudge reads and writes (autojudge-base 1.0.0's
``Leaderboard``, autojudge-evaluate 1.1.0's ``eval_results.io``), one value per line,
whitespace-separated:

- ``ir_measures``: ``run topic measure value`` -- AutoJudge's ``{filebase}.eval.txt``;
- ``tot``: ``run measure topic value``;
- ``rag4reports``: ``topic run measure value``;
- ``trec_eval``: ``measure topic value`` (``trec_eval -q`` output): the run is the file's name;
- ``jsonl``: one object a line with ``run_id``, ``topic_id``, ``measure``, ``value`` (AutoJudge's
  ``*.eval.jsonl``).

The topic ``all`` marks a run's aggregate. A path may be a directory: its files (not hidden)
are read in name order and merged (for ``trec_eval``, one file per run). ``auto`` (the default)
tells the layout from the first file: a line starting with ``{`` is ``jsonl``, three columns
``trec_eval``, four columns the layout whose topic column holds ``all``. A first line whose last
field is ``value`` is a header and is skipped. A measure whose values are all non-numeric, and
trec_eval's text rows ``runid`` and ``relstring``, are left out and named in the notes; every
other bad line is ``FILE:LINE: what is wrong``.

The report: ``leaderboard.json`` (settings, notes, every table), ``correlations.csv``,
``per_topic.csv``, ``pairs.csv`` and, with qrels, ``qrels_agreement.csv``.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from reljudge.analyses.leaderboard.meta import Leaderboard, MetaReport, leaderboard
from reljudge.errors import InputError, shown

LAYOUTS = ("auto", "ir_measures", "tot", "rag4reports", "trec_eval", "jsonl")
#: the columns of each whitespace-separated layout
COLUMNS: dict[str, tuple[str, ...]] = {
    "ir_measures": ("run", "topic", "measure", "value"),
    "tot": ("run", "measure", "topic", "value"),
    "rag4reports": ("topic", "run", "measure", "value"),
    "trec_eval": ("measure", "topic", "value"),
}
ALL = "all"
#: the rows of ``trec_eval -q`` output that are text, not a measure (``relstring`` looks numeric)
TREC_EVAL_TEXT = frozenset({"runid", "relstring"})


def _files(path: Path) -> list[Path]:
    if not path.exists():
        raise InputError("file not found", path)
    if path.is_dir():
        files = sorted(f for f in path.iterdir() if f.is_file() and not f.name.startswith("."))
        if not files:
            raise InputError("directory holds no leaderboard file", path)
        return files
    return [path]


def _detect(path: Path) -> str:
    from reljudge.io.lines import read_lines

    fours: list[list[str]] = []
    for _, line in read_lines(path):
        parts = line.split()
        if not parts:
            continue
        if line.lstrip().startswith("{"):
            return "jsonl"
        if len(parts) == 3 and not fours:
            return "trec_eval"
        if len(parts) == 4:
            fours.append(parts)
    if not fours:
        raise InputError("cannot tell the layout: no line of 3 or 4 columns or JSON; pass the format", path)
    holds_all = [
        layout
        for layout in ("ir_measures", "tot", "rag4reports")
        if any(p[COLUMNS[layout].index("topic")] == ALL for p in fours)
    ]
    if len(holds_all) != 1:
        raise InputError(
            "cannot tell ir_measures (run topic measure value) from tot (run measure topic value) or "
            "rag4reports (topic run measure value): no single column holds the topic 'all'; pass the format",
            path,
        )
    return holds_all[0]


def _rows(path: Path, layout: str):
    """``(line, run, topic, measure, value)`` of one file, the value as read (str or number)."""
    from reljudge.io.lines import read_lines

    first = True
    for number, line in read_lines(path):
        if not line.strip():
            continue
        header, first = first, False
        if layout == "jsonl":
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as err:
                raise InputError(f"not JSON: {err.msg}", path, number) from None
            if not isinstance(obj, dict):
                raise InputError(f"expected a JSON object, got {shown(obj)}", path, number)
            lacking = [k for k in ("run_id", "topic_id", "measure", "value") if k not in obj]
            if lacking:
                raise InputError(f"the object has no {', '.join(lacking)}", path, number)
            for key in ("run_id", "topic_id", "measure"):
                if not isinstance(obj[key], str | int) or isinstance(obj[key], bool) or str(obj[key]) == "":
                    raise InputError(f"{key} must be a non-empty string, got {shown(obj[key])}", path, number)
            value = obj["value"]
            if isinstance(value, bool) or not isinstance(value, str | int | float):
                raise InputError(f"value must be a number, got {shown(value)}", path, number)
            yield number, str(obj["run_id"]), str(obj["topic_id"]), str(obj["measure"]), value
            continue
        parts = line.split()
        names = COLUMNS[layout]
        if header and parts[-1].lower() == "value":
            continue
        if len(parts) != len(names):
            raise InputError(
                f"expected {len(names)} columns '{' '.join(names)}' ({layout} layout), found {len(parts)}",
                path,
                number,
            )
        cell = dict(zip(names, parts, strict=True))
        run = cell.get("run", path.name)
        yield number, run, cell["topic"], cell["measure"], cell["value"]


def read_leaderboard(path: str | Path, layout: str = "auto") -> Leaderboard:
    """A leaderboard file or directory (module docstring) as a `Leaderboard`."""
    path = Path(path)
    if layout not in LAYOUTS:
        raise InputError(f"unknown leaderboard format {layout!r}; choose from {', '.join(LAYOUTS)}")
    files = _files(path)
    used = _detect(files[0]) if layout == "auto" else layout
    per_topic: dict[str, dict[str, dict[str, float]]] = {}
    all_rows: dict[str, dict[str, float]] = {}
    seen: dict[tuple[str, str, str], str] = {}
    text_values: dict[str, str] = {}  # measure -> where a non-numeric value of it was first seen
    numeric_at: dict[str, str] = {}  # measure -> where a number of it was first seen
    for file in files:
        for number, run, topic, measure, raw in _rows(file, used):
            where = f"{file}:{number}"
            key = (run, topic, measure)
            if key in seen:
                raise InputError(
                    f"a second value for run {shown(run)}, topic {shown(topic)}, measure {shown(measure)} "
                    f"(the first is at {seen[key]})",
                    file,
                    number,
                )
            seen[key] = where
            if used == "trec_eval" and measure in TREC_EVAL_TEXT:
                text_values.setdefault(measure, where)
                continue
            try:
                value = float(raw)
            except ValueError:
                if measure in numeric_at:
                    raise InputError(
                        f"value {shown(raw)} of measure {shown(measure)} is not a number "
                        f"(it is a number at {numeric_at[measure]})",
                        file,
                        number,
                    ) from None
                text_values.setdefault(measure, where)
                continue
            if not math.isfinite(value):
                raise InputError(f"value {shown(raw)} is not a finite number", file, number)
            if measure in text_values:
                raise InputError(
                    f"measure {shown(measure)} has a number here but a non-numeric value at {text_values[measure]}",
                    file,
                    number,
                )
            numeric_at.setdefault(measure, where)
            if topic == ALL:
                all_rows.setdefault(measure, {})[run] = value
            else:
                per_topic.setdefault(measure, {}).setdefault(run, {})[topic] = value
    if not per_topic and not all_rows:
        raise InputError("no numeric value in the leaderboard", path)
    notes = [
        f"{path}: measure {m!r} left out: its values are text, not numbers (first at {w})"
        for m, w in sorted(text_values.items())
    ]
    return leaderboard(str(path), used, per_topic, all_rows, notes)


def write_leaderboard_report(
    report: MetaReport | None,
    qrels: tuple[list[dict[str, Any]], dict[str, Any]] | None,
    out_dir: str | Path,
) -> list[Path]:
    """The report's JSON and CSV files in ``out_dir`` (everything computed before the first file
    is written)."""
    from reljudge.io.tables import write_report_files

    data: dict[str, Any] = {}
    tables: dict[str, list[dict[str, Any]]] = {}
    if report is not None:
        data.update(
            {
                "settings": report.settings,
                "pairs": report.pairs,
                "correlations": report.correlations,
                "per_topic": report.per_topic,
            }
        )
        tables["correlations.csv"] = report.correlations
        tables["per_topic.csv"] = report.per_topic
        tables["pairs.csv"] = [
            {k: " ".join(v) if isinstance(v, list) else v for k, v in row.items()} for row in report.pairs
        ]
    if qrels is not None:
        rows, summary = qrels
        data["qrels_agreement"] = {"summary": summary, "topics": rows}
        tables["qrels_agreement.csv"] = rows
    return write_report_files(out_dir, "leaderboard.json", data, tables)
