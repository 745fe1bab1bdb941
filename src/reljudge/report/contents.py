"""What a report shows, gathered from a directory: facts, tables, figures and -- for a run
directory -- the per-item browser (`reljudge.report.items`).

A directory is recognised by what it holds: ``judgments.jsonl`` + ``manifest.json`` (a run),
``evaluation.json`` (an evaluation), ``cells.csv`` (a sweep); any other directory is shown as its
tables (``*.csv``) and figures (``*.png``), so the outputs of every command can be looked at. What
is read is bounded (`MAX_FILES`, `MAX_TABLE_ROWS`, `MAX_FIGURE_BYTES`) and what is left out is
said on the page.
"""

from __future__ import annotations

import base64
import csv
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reljudge.errors import InputError
from reljudge.io.rundir import JUDGMENTS_FILE, MANIFEST_FILE, RunDir
from reljudge.report.items import DEFAULT_MAX_ITEMS, RunItems, collect_items, find_inputs

MAX_FILES = 200  # tables and figures each
MAX_TABLE_ROWS = 2000
MAX_FIGURE_BYTES = 8 * 1024 * 1024
MAX_TOTAL_FIGURE_BYTES = 48 * 1024 * 1024  # all figures of one page together
MAX_JSON_BYTES = 16 * 1024 * 1024
#: sub-directories not searched for tables and figures (a sweep's cell run directories are many)
SKIPPED_DIRS = frozenset({"cells", "runs", "cache", ".git"})


@dataclass
class Table:
    title: str
    columns: list[str]
    rows: list[list[str]]
    total_rows: int


@dataclass
class Figure:
    title: str
    png_base64: str


@dataclass
class Page:
    title: str
    kind: str  # run | evaluation | sweep | directory
    facts: list[tuple[str, str]] = field(default_factory=list)
    status_counts: dict[str, int] = field(default_factory=dict)
    tables: list[Table] = field(default_factory=list)
    figures: list[Figure] = field(default_factory=list)
    items: RunItems | None = None
    notes: list[str] = field(default_factory=list)


def kind_of(directory: Path) -> str:
    if (directory / JUDGMENTS_FILE).is_file() and (directory / MANIFEST_FILE).is_file():
        return "run"
    if (directory / "evaluation.json").is_file():
        return "evaluation"
    if (directory / "cells.csv").is_file():
        return "sweep"
    return "directory"


def read_json(path: Path) -> Any:
    if path.stat().st_size > MAX_JSON_BYTES:
        raise InputError(f"{path}: larger than {MAX_JSON_BYTES // 2**20} MiB, not read")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as err:
        raise InputError(f"not valid JSON: {err}", path) from err


def collect(directory: str | Path, *, qrels: Path | None = None, max_items: int = DEFAULT_MAX_ITEMS) -> Page:
    """The page of ``directory`` (see the module docstring)."""
    directory = Path(directory)
    if not directory.is_dir():
        raise InputError(f"{directory}: not a directory (give a run, evaluation or sweep directory)")
    kind = kind_of(directory)
    page = Page(title=f"reljudge report: {directory.resolve().name}", kind=kind)
    if kind == "run":
        _run_facts(directory, page, qrels, max_items)
    elif kind == "evaluation":
        _evaluation_facts(directory, page)
    elif kind == "sweep":
        page.facts.append(("kind", "sweep"))
    _tables_and_figures(directory, page)
    if kind == "directory" and not page.tables and not page.figures:
        raise InputError(
            f"{directory}: no run, evaluation or sweep outputs (no judgments.jsonl, CSV or PNG files)"
        )
    return page


def _money(value: Any) -> str:
    return f"${float(value):.4f}" if isinstance(value, int | float) else "-"


def _mapping(value: Any) -> Mapping[str, Any]:
    """A manifest section, or an empty one when it is missing or not an object."""
    return value if isinstance(value, Mapping) else {}


def _run_facts(directory: Path, page: Page, qrels: Path | None, max_items: int) -> None:
    rundir = RunDir(directory)
    manifest = rundir.read_manifest()
    config = manifest.get("config") or {}
    summary = _mapping(manifest.get("summary"))
    extra = _mapping(manifest.get("extra"))
    page.facts += [
        ("kind", "run"),
        ("method", str(config.get("method", "-"))),
        ("model", str(config.get("model", "-"))),
        ("dataset", str(config.get("dataset") or config.get("topics") or "-")),
        ("pool", str(config.get("pool", "-"))),
        ("command", " ".join(str(a) for a in manifest.get("command") or [])),
        ("state", str(extra.get("state", "-"))),
        ("started", str(manifest.get("started_at", "-"))),
        ("finished", str(manifest.get("finished_at") or "not finished")),
    ]
    usage = _mapping(summary.get("usage"))
    for key in ("calls", "prompt_tokens", "completion_tokens"):
        if isinstance(usage.get(key), int):
            page.facts.append((key.replace("_", " "), f"{usage[key]:,}"))
    if "cost_usd" in usage:
        page.facts.append(("cost (all records)", _money(usage["cost_usd"])))
    inputs = find_inputs(manifest, directory, qrels)
    items = collect_items(rundir.judgments_path, inputs, max_items=max_items)
    page.items = items
    page.notes += items.notes
    page.status_counts = items.status_counts
    page.facts.append(("items", f"{items.total:,}"))
    if items.human_known:
        page.facts.append(("items with a human grade", f"{items.human_known:,}"))
        page.facts.append(
            (
                f"disagreements with the humans (relevant: grade >= {items.relevant_threshold:g})",
                f"{items.disagreements:,} of {items.human_known:,}",
            )
        )


def _evaluation_facts(directory: Path, page: Page) -> None:
    data = read_json(directory / "evaluation.json")
    page.facts.append(("kind", "evaluation"))
    if isinstance(data, Mapping):
        for key in ("qrels", "human_qrels", "dataset", "measure", "runs"):
            value = data.get(key)
            if isinstance(value, str | int | float):
                page.facts.append((key.replace("_", " "), str(value)))
            elif isinstance(value, list | Mapping):
                page.facts.append((key.replace("_", " "), f"{len(value)} entries"))


def _files(directory: Path, pattern: str) -> list[Path]:
    found = [
        p
        for p in sorted(directory.rglob(pattern))
        if p.is_file() and not (set(p.relative_to(directory).parts[:-1]) & SKIPPED_DIRS)
    ]
    return found


def _tables_and_figures(directory: Path, page: Page) -> None:
    csvs = _files(directory, "*.csv")
    pngs = _files(directory, "*.png")
    for files, what in ((csvs, "tables"), (pngs, "figures")):
        if len(files) > MAX_FILES:
            page.notes.append(f"{len(files)} {what} found; the first {MAX_FILES} are shown")
    for path in csvs[:MAX_FILES]:
        page.tables.append(read_table(path, directory))
    total = 0
    for path in pngs[:MAX_FILES]:
        size = path.stat().st_size
        if size > MAX_FIGURE_BYTES:
            page.notes.append(f"{path.relative_to(directory)}: {size // 2**20} MiB, not embedded")
            continue
        if total + size > MAX_TOTAL_FIGURE_BYTES:
            page.notes.append(
                f"{path.relative_to(directory)}: not embedded (the page holds at most "
                f"{MAX_TOTAL_FIGURE_BYTES // 2**20} MiB of figures)"
            )
            continue
        total += size
        data = path.read_bytes()
        if not data.startswith(b"\x89PNG\r\n\x1a\n"):
            page.notes.append(f"{path.relative_to(directory)}: not a PNG file, not embedded")
            continue
        page.figures.append(Figure(str(path.relative_to(directory)), base64.b64encode(data).decode("ascii")))


def read_table(path: Path, root: Path) -> Table:
    """The first `MAX_TABLE_ROWS` rows of a CSV file (cells cut to 500 characters)."""
    rows: list[list[str]] = []
    total = 0
    with path.open(newline="", encoding="utf-8", errors="replace") as handle:
        reader = csv.reader(handle)
        header = next(reader, [])
        for row in reader:
            total += 1
            if len(rows) < MAX_TABLE_ROWS:
                rows.append([_cell(cell) for cell in row])
    return Table(str(path.relative_to(root)), [h[:200] for h in header], rows, total)


def _cell(text: str) -> str:
    """A CSV cell as shown: long floats to 4 significant digits, the rest cut to 500 characters."""
    if "." in text and len(text) > 7:
        try:
            return f"{float(text):.4g}"
        except ValueError:
            pass
    return text[:500]
