"""What a report shows, gathered from a directory: the headline (`reljudge.report.headline`),
facts, tables, figures and -- for a run directory -- the per-item browser
(`reljudge.report.items`).

A directory is recognised by what it holds: ``judgments.jsonl`` + ``manifest.json`` (a run),
``evaluation.json`` (an evaluation), ``cells.csv`` (a sweep's analysis; a sweep's own directory,
with ``sweep.json`` and ``analysis/cells.csv``, is read the same way); any other directory is
shown as its tables (``*.csv``) and figures (``*.png``), so the outputs of every command can be
looked at. The tables a reader of a kind of page looks for first (`KEY_TABLES`: an evaluation's
τ and κ, a sweep's summary) are marked `Table.key` and shown before the figures; figures come in
the order of `FIGURE_ORDER`. What is read is bounded (`MAX_FILES`, `MAX_TABLE_ROWS`,
`MAX_FIGURE_BYTES`) and what is left out is said on the page.
"""

from __future__ import annotations

import base64
import csv
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reljudge.errors import InputError
from reljudge.io.rundir import JUDGMENTS_FILE, MANIFEST_FILE, RunDir
from reljudge.report.headline import Headline, evaluation_headline, run_headline, sweep_headline
from reljudge.report.items import DEFAULT_MAX_ITEMS, RunItems, collect_items, find_inputs

MAX_FILES = 200  # tables and figures each
MAX_TABLE_ROWS = 2000
MAX_FIGURE_BYTES = 8 * 1024 * 1024
MAX_TOTAL_FIGURE_BYTES = 48 * 1024 * 1024  # all figures of one page together
MAX_JSON_BYTES = 16 * 1024 * 1024
#: sub-directories not searched for tables and figures (a sweep's cell run directories are many)
SKIPPED_DIRS = frozenset({"cells", "runs", "cache", ".git"})
#: the tables shown first (before the figures), in this order, by kind of page and file name
KEY_TABLES: dict[str, tuple[str, ...]] = {
    "evaluation": ("ranking.csv", "qrels_ranking.csv", "kappa.csv", "alignment.csv"),
    "sweep": ("summary.csv", "top_prompts.csv", "alpha.csv", "ranking.csv"),
}
#: figures whose file name starts with one of these come first, in this order
FIGURE_ORDER: dict[str, tuple[str, ...]] = {
    "evaluation": ("alignment_vs_agreement", "compatibility", "alignment"),
    "sweep": ("bars_", "heatmap_", "alpha_"),
}


@dataclass
class Table:
    title: str
    columns: list[str]
    rows: list[list[str]]
    total_rows: int
    key: bool = False  # one of the tables a reader looks for first (shown before the figures)


@dataclass
class Figure:
    title: str
    png_base64: str


@dataclass
class Page:
    title: str
    kind: str  # run | evaluation | sweep | directory
    headline: Headline | None = None
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
    if (directory / "cells.csv").is_file() or _sweep_cells(directory) is not None:
        return "sweep"
    return "directory"


def _sweep_cells(directory: Path) -> Path | None:
    """The ``cells.csv`` of a sweep's analysis: in the directory, or in ``analysis/`` of a
    sweep's own directory (the one with ``sweep.json``)."""
    if (directory / "cells.csv").is_file():
        return directory / "cells.csv"
    if (directory / "sweep.json").is_file() and (directory / "analysis" / "cells.csv").is_file():
        return directory / "analysis" / "cells.csv"
    return None


def read_json(path: Path) -> Any:
    if path.stat().st_size > MAX_JSON_BYTES:
        raise InputError(f"{path}: larger than {MAX_JSON_BYTES // 2**20} MiB, not read")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as err:
        raise InputError(f"not valid JSON: {err}", path) from err


def collect(
    directory: str | Path,
    *,
    qrels: Path | None = None,
    max_items: int = DEFAULT_MAX_ITEMS,
    assessments: Sequence[Path] = (),
    task: Path | None = None,
) -> Page:
    """The page of ``directory`` (see the module docstring); with ``assessments`` (files of
    ``judge assess``) also the people's checks beside the LLM labels (`_human_checks`)."""
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
        _sweep_facts(directory, page)
    _tables_and_figures(directory, page)
    _order(page)
    if assessments:
        _human_checks(page, assessments, task)
    if kind == "directory" and not page.tables and not page.figures:
        raise InputError(
            f"{directory}: no run, evaluation or sweep outputs (no judgments.jsonl, CSV or PNG files)"
        )
    return page


def _human_checks(page: Page, paths: Sequence[Path], task_path: Path | None) -> None:
    """Two key tables first: agreement of the people with the LLM by stratum, and the items
    where they disagree (strata and LLM labels from the task file, else from the assessments)."""
    from reljudge.analyses.humans import checks
    from reljudge.analyses.humans.files import read_assessments, read_task

    task = read_task(task_path) if task_path is not None else None
    found = read_assessments(paths, task)
    llm: dict[str, float | None] = {}
    strata: dict[str, str] = {}
    if task is not None:
        for it in task.items:
            llm[it["item"]] = it.get("llm_label")
            strata[it["item"]] = str(it.get("stratum", "-"))
    else:
        from reljudge.analyses.humans.design import label_stratum

        for a in found:
            llm.setdefault(a.item, a.llm_label)
            strata.setdefault(a.item, label_stratum(a.llm_label))
    threshold = 2.0
    rows = checks.agreement_rows(found, llm, strata, threshold)
    columns = [
        "stratum",
        "checks",
        "same grade",
        f"same side of {threshold:g}",
        "LLM higher",
        "LLM lower",
        "median s",
    ]
    wrong, total = checks.disagreement_rows(found, llm, strata)
    tables = [
        Table("human checks by stratum", columns, rows, len(rows), key=True),
        Table(
            "human checks: disagreements",
            ["stratum", "qid", "docid", "LLM", "people"],
            wrong,
            total,
            key=True,
        ),
    ]
    page.tables[:0] = tables
    page.facts.append(("human checks", f"{len(found)} from {len(paths)} file(s)"))
    both = checks.assessor_agreement(found)
    if both is not None:
        page.facts.append(("people agreeing", f"{both[1]:.1%} of {both[0]} items checked by several people"))


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
    page.headline = run_headline(
        what=f"{config.get('method', '-')} with {config.get('model', '-')} on "
        f"{config.get('dataset') or config.get('topics') or '-'} (pool: {config.get('pool', '-')})",
        status_counts=items.status_counts,
        usage=usage,
        state=str(extra.get("state", "-")),
        human_known=items.human_known,
        disagreements=items.disagreements,
        relevant_threshold=items.relevant_threshold,
    )
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
    if not isinstance(data, Mapping):
        page.notes.append("evaluation.json holds no object: no headline")
        return
    page.headline = evaluation_headline(data)
    for key in ("qrels", "human_qrels", "dataset", "measure", "runs"):
        value = data.get(key)
        if isinstance(value, str | int | float):
            page.facts.append((key.replace("_", " "), str(value)))
        elif isinstance(value, list | Mapping):
            page.facts.append((key.replace("_", " "), f"{len(value)} entries"))
    settings = _mapping(data.get("settings"))
    for key, what in (
        ("relevance_level", "binary measures: relevant from grade"),
        ("human_threshold", "κ: human relevant from grade"),
        ("judge_threshold", "κ: judge relevant"),
        ("averaging", "run means over"),
        ("n_boot", "bootstrap resamples"),
        ("alignment_pairs", "alignment pairs"),
    ):
        value = settings.get(key)
        if isinstance(value, str | int | float) and not isinstance(value, bool):
            page.facts.append((what, str(value)))


def _sweep_facts(directory: Path, page: Page) -> None:
    page.facts.append(("kind", "sweep"))
    cells = _sweep_cells(directory)
    if cells is None:
        return
    if cells.stat().st_size > MAX_JSON_BYTES:
        page.notes.append(f"{cells.name}: larger than {MAX_JSON_BYTES // 2**20} MiB, no headline")
        return
    with cells.open(newline="", encoding="utf-8", errors="replace") as handle:
        rows = list(csv.DictReader(handle))
    if rows:
        page.headline = sweep_headline(rows)
    sweep = cells.parent.parent / "sweep.json"
    if sweep.is_file():
        data = read_json(sweep)
        if isinstance(data, Mapping):
            for key in ("name", "config"):
                if isinstance(data.get(key), str):
                    page.facts.append((key, data[key]))
            if isinstance(data.get("name"), str):
                page.title = f"reljudge report: sweep {data['name']}"


def _order(page: Page) -> None:
    """Key tables marked and first (in `KEY_TABLES` order); figures in `FIGURE_ORDER`."""
    key_names = KEY_TABLES.get(page.kind, ())

    def table_rank(table: Table) -> tuple[int, str]:
        name = Path(table.title).name
        return (key_names.index(name) if name in key_names else len(key_names), table.title)

    for table in page.tables:
        table.key = Path(table.title).name in key_names
    page.tables.sort(key=table_rank)
    prefixes = FIGURE_ORDER.get(page.kind, ())

    def figure_rank(figure: Figure) -> tuple[int, str]:
        name = Path(figure.title).name
        found = [i for i, p in enumerate(prefixes) if name.startswith(p)]
        return (found[0] if found else len(prefixes), figure.title)

    page.figures.sort(key=figure_rank)


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
