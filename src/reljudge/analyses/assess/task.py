"""The assessment task and the assessment lines as checked values (no I/O: `files` reads them).

A task file is JSON Lines: line 1 the header ``{"reljudge_task": 1, "run", "run_fingerprint",
"strategy", "seed", "budget", "scale", "scale_names", "mode", "strata", "created"}``, then one
line per item ``{"item": "<qid>\\t<docid>", "qid", "docid", "query", "text", "llm_label",
"llm_answer", "stratum", "inclusion_prob", "why"}``. An assessment line is ``{"item", "qid",
"docid", "label", "llm_label", "assessor", "mode", "seconds", "at", "seq"}``; ``label`` null
withdraws the item's earlier label. Fields beyond these are allowed (and ignored); a missing or
mistyped field (``query`` and ``text`` may be null when the selection found no text: the page
says so), a label off the task's scale or an item named twice is an `InputError` at
``file:line``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from reljudge.errors import InputError, shown

TASK_VERSION = 1
MODES: tuple[str, ...] = ("judge", "post-edit", "blind")
#: an assessor's name: it becomes part of a file name
ASSESSOR_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
_HEX64 = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True)
class TaskItem:
    """One item of a task: a (query, passage or answer) pair with the LLM's label."""

    item: str
    qid: str
    docid: str
    query: str
    text: str
    llm_label: int | None
    llm_answer: str | None
    stratum: str
    inclusion_prob: float
    why: str
    line: int


@dataclass(frozen=True)
class Task:
    """A task file's header and items (in the file's order)."""

    path: str
    run: str
    run_fingerprint: str
    strategy: str
    seed: int
    budget: int
    scale: tuple[int, ...]
    scale_names: dict[int, str] | None
    mode: str
    strata: dict[str, Any]
    created: str
    items: tuple[TaskItem, ...]
    index: dict[str, TaskItem] = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.index.update((i.item, i) for i in self.items)

    def item(self, name: str) -> TaskItem | None:
        return self.index.get(name)


@dataclass(frozen=True)
class Assessment:
    """One line of an assessment file: a person's label for an item (None: withdrawn)."""

    item: str
    qid: str
    docid: str
    label: int | None
    llm_label: int | None
    assessor: str
    mode: str
    seconds: float
    at: str
    seq: int
    line: int = 0

    def to_json_dict(self) -> dict[str, Any]:
        return {
            "item": self.item,
            "qid": self.qid,
            "docid": self.docid,
            "label": self.label,
            "llm_label": self.llm_label,
            "assessor": self.assessor,
            "mode": self.mode,
            "seconds": self.seconds,
            "at": self.at,
            "seq": self.seq,
        }


def item_name(qid: str, docid: str) -> str:
    return f"{qid}\t{docid}"


class _Fields:
    """Typed access to one JSON object's fields, each error naming ``path:line`` and the field."""

    def __init__(self, obj: Any, path: str, line: int, what: str):
        if not isinstance(obj, dict):
            raise InputError(f"expected a JSON object ({what}), got {type(obj).__name__}", path, line)
        self.obj, self.path, self.line = obj, path, line

    def error(self, message: str) -> InputError:
        return InputError(message, self.path, self.line)

    def get(self, name: str) -> Any:
        if name not in self.obj:
            raise self.error(f"missing field {name!r}")
        return self.obj[name]

    def text(self, name: str, *, empty: bool = True) -> str:
        value = self.get(name)
        if not isinstance(value, str):
            raise self.error(f"{name!r} must be a string, got {shown(value)}")
        if not empty and not value.strip():
            raise self.error(f"{name!r} is empty")
        return value

    def optional_text(self, name: str) -> str | None:
        value = self.get(name)
        return None if value is None else self.text(name)

    def integer(self, name: str) -> int:
        value = self.get(name)
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.error(f"{name!r} must be an integer, got {shown(value)}")
        return value

    def number(self, name: str) -> float:
        value = self.get(name)
        if isinstance(value, bool) or not isinstance(value, int | float) or value != value:
            raise self.error(f"{name!r} must be a number, got {shown(value)}")
        return float(value)

    def label(self, name: str, scale: tuple[int, ...]) -> int | None:
        value = self.get(name)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int) or value not in scale:
            raise self.error(f"{name!r} {shown(value)} is not on the task's scale {list(scale)}")
        return value


def parse_header(obj: Any, path: str, line: int = 1) -> dict[str, Any]:
    """The header's fields, checked (the items come later: `parse_item`)."""
    f = _Fields(obj, path, line, "the task header")
    if "reljudge_task" not in f.obj:
        raise f.error(
            "not a reljudge task file: the first line has no 'reljudge_task' (write one with judge select)"
        )
    if f.obj["reljudge_task"] != TASK_VERSION:
        raise f.error(
            f"task file version {shown(f.obj['reljudge_task'])}; this reljudge reads version {TASK_VERSION}"
        )
    fingerprint = f.text("run_fingerprint")
    if not _HEX64.fullmatch(fingerprint):
        raise f.error(f"'run_fingerprint' must be a SHA-256 in hex, got {shown(fingerprint)}")
    scale_value = f.get("scale")
    if (
        not isinstance(scale_value, list)
        or not scale_value
        or any(isinstance(v, bool) or not isinstance(v, int) for v in scale_value)
        or len(set(scale_value)) != len(scale_value)
    ):
        raise f.error(f"'scale' must be a list of distinct integers, got {shown(scale_value)}")
    scale = tuple(sorted(scale_value))
    names_value = f.get("scale_names")
    names: dict[int, str] | None = None
    if names_value is not None:
        if not isinstance(names_value, dict):
            raise f.error(f"'scale_names' must be an object or null, got {shown(names_value)}")
        names = {}
        for key, name in names_value.items():
            try:
                grade = int(key)
            except ValueError:
                raise f.error(f"'scale_names' key {shown(key)} is not a label") from None
            if grade not in scale or not isinstance(name, str):
                raise f.error(
                    f"'scale_names' {shown(key)}: {shown(name)} is not a name of a label on {list(scale)}"
                )
            names[grade] = name
    mode = f.text("mode")
    if mode not in MODES:
        raise f.error(f"'mode' must be one of {', '.join(MODES)}, got {shown(mode)}")
    strata = f.get("strata")
    if not isinstance(strata, dict):
        raise f.error(f"'strata' must be an object, got {shown(strata)}")
    budget = f.integer("budget")
    if budget < 0:
        raise f.error(f"'budget' must be >= 0, got {budget}")
    return {
        "run": f.text("run"),
        "run_fingerprint": fingerprint,
        "strategy": f.text("strategy"),
        "seed": f.integer("seed"),
        "budget": budget,
        "scale": scale,
        "scale_names": names,
        "mode": mode,
        "strata": strata,
        "created": f.text("created"),
    }


def parse_item(obj: Any, path: str, line: int, scale: tuple[int, ...]) -> TaskItem:
    f = _Fields(obj, path, line, "one task item")
    qid, docid = f.text("qid", empty=False), f.text("docid", empty=False)
    for name, value in (("qid", qid), ("docid", docid)):
        if any(c.isspace() for c in value):
            raise f.error(f"{name!r} {shown(value)} holds whitespace (a qrels line could not hold it)")
    item = f.text("item")
    if item != item_name(qid, docid):
        raise f.error(
            f"'item' {shown(item)} is not '<qid>\\t<docid>' of this line ({shown(qid)}, {shown(docid)})"
        )
    prob = f.number("inclusion_prob")
    if not 0.0 < prob <= 1.0:
        raise f.error(f"'inclusion_prob' must be in (0, 1], got {prob}")
    return TaskItem(
        item=item,
        qid=qid,
        docid=docid,
        query=f.optional_text("query") or "",
        text=f.optional_text("text") or "",
        llm_label=f.label("llm_label", scale),
        llm_answer=f.optional_text("llm_answer"),
        stratum=f.text("stratum"),
        inclusion_prob=prob,
        why=f.text("why"),
        line=line,
    )


def build_task(path: str, header: dict[str, Any], items: list[TaskItem]) -> Task:
    """The task, refusing an item named twice (both lines named) and a task without items."""
    seen: dict[str, int] = {}
    for it in items:
        if it.item in seen:
            raise InputError(
                f"item {shown(it.item)} is already on line {seen[it.item]} (each item once)", path, it.line
            )
        seen[it.item] = it.line
    if not items:
        raise InputError("the task has no items (only a header)", path, 1)
    return Task(path=path, items=tuple(items), **header)


def parse_assessment(obj: Any, path: str, line: int, task: Task | None) -> Assessment:
    """One assessment line, checked against the task when given (its item, qid/docid, scale)."""
    f = _Fields(obj, path, line, "one assessment")
    item = f.text("item")
    qid, docid = f.text("qid"), f.text("docid")
    if item != item_name(qid, docid):
        raise f.error(f"'item' {shown(item)} is not '<qid>\\t<docid>' of this line")
    scale: tuple[int, ...] | None = task.scale if task is not None else None
    if task is not None and task.item(item) is None:
        raise f.error(
            f"item {shown(item)} is not in the task {task.path} (an assessment file of another task?)"
        )
    mode = f.text("mode")
    if mode not in MODES:
        raise f.error(f"'mode' must be one of {', '.join(MODES)}, got {shown(mode)}")
    assessor = f.text("assessor")
    if not ASSESSOR_NAME.fullmatch(assessor):
        raise f.error(f"'assessor' {shown(assessor)} is not a valid name")
    seconds = f.number("seconds")
    if seconds < 0:
        raise f.error(f"'seconds' must be >= 0, got {seconds}")
    if scale is None:
        label = _free_label(f, "label")
        llm = _free_label(f, "llm_label")
    else:
        label = f.label("label", scale)
        llm = f.label("llm_label", scale)
    return Assessment(
        item=item,
        qid=qid,
        docid=docid,
        label=label,
        llm_label=llm,
        assessor=assessor,
        mode=mode,
        seconds=seconds,
        at=f.text("at"),
        seq=f.integer("seq"),
        line=line,
    )


def _free_label(f: _Fields, name: str) -> int | None:
    value = f.get(name)
    if value is None:
        return None
    return f.integer(name)


def latest(assessments: list[Assessment]) -> dict[str, int | None]:
    """Each item's current label: the last line of the item wins (None: withdrawn)."""
    out: dict[str, int | None] = {}
    for a in assessments:
        out[a.item] = a.label
    return out
