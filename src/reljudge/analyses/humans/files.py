"""The files of the human loop: the run's LLM labels, the task file ``judge select`` writes and
the assessment files ``judge assess`` appends to.

**Task file** (JSON Lines, written atomically): line 1 a header ``{"reljudge_task": 1, "run",
"run_fingerprint", "strategy", "seed", "budget", "scale", "scale_names", "mode", "strata":
{name: {"size", "sampled"}}, "stratify_by", "created"}``, then one line per chosen item
``{"item": "qid<TAB>docid", "qid", "docid", "query", "text", "llm_label", "llm_answer",
"stratum", "inclusion_prob", "why"}``.

**Assessment files** (JSON Lines, one per assessor): ``{"item", "qid", "docid", "label",
"llm_label", "assessor", "mode", "seconds", "at", "seq"}``; a later line for an item supersedes
an earlier one and ``label: null`` undoes it. A torn last line (no newline at the end and not
JSON: the writer was killed mid-line) is ignored; any other unreadable line is an error
``FILE:LINE: what``.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reljudge.errors import InputError

__all__ = [
    "Assessment",
    "RunLabels",
    "TASK_VERSION",
    "Task",
    "load_run_labels",
    "read_assessments",
    "read_task",
    "write_task",
]

TASK_VERSION = 1
#: characters of a passage or answer kept in a task item (the rest is cut, and says so)
MAX_TEXT_CHARS = 20_000
#: characters of the LLM's answer kept in a task item
MAX_ANSWER_CHARS = 4_000
#: bytes of one line of a task or assessment file read at most
MAX_LINE_BYTES = 1 << 20
MODES = ("judge", "post-edit", "blind")


@dataclass
class RunLabels:
    """The run's pointwise LLM labels by (qid, docid), with each record's notes and answer."""

    path: Path
    fingerprint: str
    labels: dict[tuple[str, str], float]
    extras: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    answers: dict[tuple[str, str], str] = field(default_factory=dict)
    config: dict[str, Any] = field(default_factory=dict)
    method: str = ""

    def keys(self) -> list[tuple[str, str]]:
        return sorted(self.labels)


def _sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def load_run_labels(spec: str | Path, method: str | None = None) -> RunLabels:
    """The LLM labels of a run directory, a judgments file or a qrels-like file: the latest
    ``ok`` pointwise record of each (qid, docid) (failed records are never labels). A run with
    several pointwise methods needs ``method``."""
    from reljudge.io.judgments import is_judgments_path, load_judgments, resolve_judgments_path

    path = Path(spec)
    if not path.exists():
        raise InputError("file not found", path)
    if is_judgments_path(path):
        file = resolve_judgments_path(path)
        records = [
            r
            for r in load_judgments(file)
            if r.docid and not r.docid_b and not r.item_id and r.method != "answer"
        ]
        methods = sorted({r.method for r in records})
        if method is not None:
            records = [r for r in records if r.method == method]
        elif len(methods) > 1:
            raise InputError(
                f"the run holds several methods ({', '.join(methods)}); choose one with --method", file
            )
        labels, extras, answers = {}, {}, {}
        for r in records:
            if r.status != "ok" or r.label is None:
                continue
            key = (r.qid, r.docid or "")
            labels[key] = float(r.label)
            extras[key] = dict(r.extra)
            if r.raw:
                answers[key] = r.raw[:MAX_ANSWER_CHARS]
        if not labels:
            raise InputError("no pointwise record with a label (status ok)", file)
        config: dict[str, Any] = {}
        manifest = file.parent / "manifest.json"
        if manifest.is_file():
            try:
                config = json.loads(manifest.read_text(encoding="utf-8")).get("config") or {}
            except (OSError, ValueError):
                config = {}
        return RunLabels(
            file, _sha256_file(file), labels, extras, answers, config, method or (methods or [""])[0]
        )
    from reljudge.io.trec import read_qrels

    qrels = read_qrels(path)
    labels = {(q, d): float(v) for q, docs in qrels.items() for d, v in docs.items()}
    if not labels:
        raise InputError("no labels in the file", path)
    return RunLabels(path, _sha256_file(path), labels)


def texts_for(
    run: RunLabels,
    keys: Iterable[tuple[str, str]],
    *,
    dataset: str | None = None,
    topics: str | Path | None = None,
    corpus: str | Path | None = None,
) -> tuple[dict[str, str], dict[str, str], list[str]]:
    """Queries and passages of ``keys``: from the options, else from the run's manifest. Returns
    (queries, passages, notes); what cannot be found is left out with a note."""
    from reljudge.datasets import load_dataset
    from reljudge.errors import ReljudgeError

    notes: list[str] = []
    config = run.config
    base = run.path.parent
    name = dataset or config.get("dataset")
    topics_path = topics or _existing(config.get("topics"), base)
    corpus_path = corpus or _existing(config.get("corpus"), base)
    if not (name or topics_path):
        return {}, {}, ["no topics given (--topics FILE or --dataset NAME): items have no query or passage"]
    try:
        ds = load_dataset(name, topics=topics_path, corpus=corpus_path, passages=False)
    except (ReljudgeError, OSError, ValueError) as err:
        return {}, {}, [f"inputs not read ({err}): items have no query or passage"]
    wanted = {d for _, d in keys}
    try:
        passages = dict(ds.passages(wanted))
    except (ReljudgeError, OSError, ValueError) as err:
        notes.append(f"passages not read ({err})")
        passages = {}
    return dict(ds.topics), passages, notes


def _existing(text: Any, base: Path) -> Path | None:
    if not text:
        return None
    path = Path(str(text))
    for candidate in (path, base / path, base.parent / path):
        if candidate.exists():
            return candidate
    return None


def _clip(text: str | None, limit: int) -> str | None:
    if text is None or len(text) <= limit:
        return text
    return text[:limit] + f" [... {len(text) - limit} more characters cut]"


@dataclass
class Task:
    """A task file read back: its header and items (in file order)."""

    path: Path
    header: dict[str, Any]
    items: list[dict[str, Any]]

    def by_item(self) -> dict[str, dict[str, Any]]:
        return {it["item"]: it for it in self.items}


def write_task(path: str | Path, header: Mapping[str, Any], items: Sequence[Mapping[str, Any]]) -> Path:
    """Write a task file atomically (never half-written)."""
    from reljudge.io.atomic import write_text_atomic

    lines = [json.dumps(dict(header), ensure_ascii=False)]
    for it in items:
        row = dict(it)
        row["text"] = _clip(row.get("text"), MAX_TEXT_CHARS)
        row["llm_answer"] = _clip(row.get("llm_answer"), MAX_ANSWER_CHARS)
        lines.append(json.dumps(row, ensure_ascii=False))
    target = Path(path)
    if target.parent and not target.parent.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(target, "\n".join(lines) + "\n")
    return target


def _json_lines(path: Path, *, torn_tail_ok: bool) -> list[tuple[int, dict[str, Any]]]:
    """(line number, object) of every non-blank line; a bad line is `InputError` FILE:LINE, except
    a torn last line (no final newline) when ``torn_tail_ok``."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise InputError("file not found", path) from None
    except OSError as err:
        raise InputError(f"cannot read the file ({err.strerror})", path) from None
    lines = data.split(b"\n")
    complete = data.endswith(b"\n")
    out = []
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        last = number == len(lines) and not complete
        if len(raw) > MAX_LINE_BYTES:
            if last and torn_tail_ok:
                continue
            raise InputError(f"line longer than {MAX_LINE_BYTES} bytes", path, number)
        try:
            value = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as err:
            if last and torn_tail_ok:
                continue  # the writer was killed mid-line: what it had not finished is not an answer
            raise InputError(f"not a JSON line ({err})", path, number) from None
        if not isinstance(value, dict):
            raise InputError("a line must be a JSON object", path, number)
        out.append((number, value))
    return out


def _grade(value: Any, path: Path, line: int, what: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise InputError(f"{what} must be a number or null, got {value!r}", path, line)
    return float(value)


def read_task(path: str | Path) -> Task:
    """A task file, checked: its header, unique items, each with qid/docid matching ``item``."""
    path = Path(path)
    rows = _json_lines(path, torn_tail_ok=False)
    if not rows:
        raise InputError("empty task file", path)
    number, header = rows[0]
    if number != 1 or header.get("reljudge_task") != TASK_VERSION:
        raise InputError(
            f"line 1 is not a reljudge task header (reljudge_task: {TASK_VERSION})", path, number
        )
    for key in ("run", "run_fingerprint", "strategy", "strata"):
        if key not in header:
            raise InputError(f"the header has no {key!r}", path, 1)
    items, seen = [], set()
    for number, row in rows[1:]:
        item, qid, docid = row.get("item"), row.get("qid"), row.get("docid")
        if not (isinstance(qid, str) and isinstance(docid, str) and item == f"{qid}\t{docid}"):
            raise InputError("an item needs qid, docid and item = 'qid<TAB>docid'", path, number)
        if item in seen:
            raise InputError(f"item {qid} {docid} is listed twice", path, number)
        prob = row.get("inclusion_prob")
        if not isinstance(prob, (int, float)) or isinstance(prob, bool) or not 0 < prob <= 1:
            raise InputError(f"inclusion_prob must be in (0, 1], got {prob!r}", path, number)
        _grade(row.get("llm_label"), path, number, "llm_label")
        seen.add(item)
        items.append(row)
    return Task(path, header, items)


@dataclass
class Assessment:
    """The standing label of one item by one assessor (after undo and supersession)."""

    item: str
    qid: str
    docid: str
    label: float
    assessor: str
    mode: str
    seconds: float | None
    source: str  # FILE:LINE of the line that set it
    llm_label: float | None = None


def read_assessments(paths: Sequence[str | Path], task: Task | None = None) -> list[Assessment]:
    """The standing labels of every assessment file: per file and item the last line wins and
    ``label: null`` removes the item; an item not in ``task`` is an error FILE:LINE. Sorted by
    (item, assessor)."""
    known = task.by_item() if task is not None else None
    scale = {float(g) for g in task.header.get("scale") or []} if task is not None else set()
    out: list[Assessment] = []
    for spec in paths:
        path = Path(spec)
        standing: dict[str, Assessment | None] = {}
        for number, row in _json_lines(path, torn_tail_ok=True):
            item, qid, docid = row.get("item"), row.get("qid"), row.get("docid")
            if not (isinstance(qid, str) and isinstance(docid, str) and item == f"{qid}\t{docid}"):
                raise InputError("an assessment needs qid, docid and item = 'qid<TAB>docid'", path, number)
            if known is not None and item not in known:
                raise InputError(
                    f"item {qid} {docid} is not in the task {task.path if task else ''}", path, number
                )
            label = _grade(row.get("label"), path, number, "label")
            if label is not None and scale and label not in scale:
                raise InputError(
                    f"label {label:g} is not on the task's scale ({', '.join(f'{g:g}' for g in sorted(scale))})",
                    path,
                    number,
                )
            llm_label = _grade(row.get("llm_label"), path, number, "llm_label")
            seconds = row.get("seconds")
            seconds = (
                float(seconds)
                if isinstance(seconds, (int, float)) and not isinstance(seconds, bool)
                else None
            )
            assessor = row.get("assessor") if isinstance(row.get("assessor"), str) else path.stem
            standing[item] = (
                None
                if label is None
                else Assessment(
                    item,
                    qid,
                    docid,
                    label,
                    str(assessor),
                    str(row.get("mode") or ""),
                    seconds,
                    f"{path}:{number}",
                    llm_label,
                )
            )
        out.extend(a for a in standing.values() if a is not None)
    return sorted(out, key=lambda a: (a.item, a.assessor, a.source))


def human_labels(assessments: Sequence[Assessment]) -> dict[str, float]:
    """One human label per item: the majority of its assessors, ties to the lowest label (the
    rule of ``judge combine``)."""
    from collections import Counter

    by_item: dict[str, list[float]] = {}
    for a in assessments:
        by_item.setdefault(a.item, []).append(a.label)
    out = {}
    for item, labels in by_item.items():
        counts = Counter(labels)
        top = max(counts.values())
        out[item] = min(v for v, c in counts.items() if c == top)
    return out
