"""Reading the task file, reading and appending assessment files, writing the export.

An assessment file belongs to one assessor and is only ever appended to: `AssessmentWriter`
holds an exclusive lock on it (a second page for the same assessor is refused), writes each
judgment as one line with a single ``write`` on an ``O_APPEND`` descriptor, then flushes and
``fsync``\\ s it before the page is told it is saved. A crash can leave a *torn* last line (a
partial line without its newline): `read_assessments` skips it with a warning, and the next
writer moves its bytes to ``FILE.torn`` before appending (a complete last line that lost only its
newline gets the newline back and is kept). Any other bad line is an `InputError` at
``file:line``.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import logging
import os
import threading
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from reljudge.analyses.assess.task import (
    Assessment,
    Task,
    TaskItem,
    build_task,
    item_name,
    parse_assessment,
    parse_header,
    parse_item,
)
from reljudge.errors import InputError
from reljudge.io.lines import loads_json, read_lines

logger = logging.getLogger("reljudge.analyses.assess")

#: the longest task line read (a passage or an answer with its fields)
MAX_TASK_LINE = 4 * 1024 * 1024
#: the longest assessment line read (the writer's lines are a few hundred bytes)
MAX_ASSESSMENT_LINE = 64 * 1024
#: the suffix of an assessor's file beside the task: ``TASK_STEM.assess-NAME.jsonl``
FILE_PART = ".assess-"


def read_task(path: str | Path) -> Task:
    """The task file (see `reljudge.analyses.assess.task`), every error at ``file:line``."""
    path = Path(path)
    header: dict[str, Any] | None = None
    items: list[TaskItem] = []
    for number, text in read_lines(path, max_line_bytes=MAX_TASK_LINE):
        if not text.strip():
            continue
        obj = loads_json(text, path, number)
        if header is None:
            header = parse_header(obj, str(path), number)
        else:
            items.append(parse_item(obj, str(path), number, header["scale"]))
    assert header is not None  # read_lines refuses a file of nothing but whitespace
    return build_task(str(path), header, items)


def run_fingerprint(run: str | Path) -> str:
    """SHA-256 (hex) of a run's judgment records: the bytes of ``RUN/judgments.jsonl``, or of
    ``RUN`` itself when it is a file (judgments or qrels-like)."""
    from reljudge.io.judgments import resolve_judgments_path

    path = Path(run)
    target = resolve_judgments_path(path) if path.is_dir() else path
    if not target.is_file():
        raise InputError("file not found", target)
    digest = hashlib.sha256()
    with target.open("rb") as handle:
        while block := handle.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def check_task_matches_run(task: Task, run: str | Path) -> None:
    """Refuse a task that was not made from ``run`` (its fingerprint differs)."""
    found = run_fingerprint(run)
    if found != task.run_fingerprint:
        raise InputError(
            f"the task was made from a run whose judgments have SHA-256 {task.run_fingerprint[:12]}…, "
            f"but {run} has {found[:12]}…: this task does not match that run",
            task.path,
            1,
        )


def default_assessment_path(task_path: str | Path, assessor: str) -> Path:
    """Where an assessor's judgments of a task go: ``TASK_STEM.assess-NAME.jsonl`` beside it."""
    task_path = Path(task_path)
    stem = task_path.name.removesuffix(".gz").removesuffix(".jsonl")
    return task_path.with_name(f"{stem}{FILE_PART}{assessor}.jsonl")


def assessment_files(task_path: str | Path) -> list[Path]:
    """Every assessor's file beside a task (`default_assessment_path`), sorted by name."""
    task_path = Path(task_path)
    stem = task_path.name.removesuffix(".gz").removesuffix(".jsonl")
    return sorted(task_path.parent.glob(f"{stem}{FILE_PART}*.jsonl"))


def read_assessments(path: str | Path, task: Task | None = None) -> list[Assessment]:
    """An assessment file's lines in file order (a torn last line skipped with a warning); every
    line checked against ``task`` when given, and all of one assessor."""
    path = Path(path)
    if not path.exists():
        raise InputError("file not found", path)
    raw = path.read_bytes()
    lines = raw.split(b"\n")
    torn = lines.pop() if lines else b""  # after the last newline: b"" when the file ends whole
    out: list[Assessment] = []
    for number, data in enumerate(lines, start=1):
        if not data.strip():
            raise InputError("an empty line (the page never writes one)", path, number)
        out.append(_parse(data, path, number, task))
    if torn.strip():
        number = len(lines) + 1
        obj = _complete_object(torn)
        if obj is None:
            logger.warning("%s:%d: skipped a torn last line (an interrupted write)", path, number)
        else:
            out.append(parse_assessment(obj, str(path), number, task))
    names = {a.assessor for a in out}
    if len(names) > 1:
        other = next(a for a in out if a.assessor != out[0].assessor)
        raise InputError(
            f"assessor {other.assessor!r} in the file of {out[0].assessor!r} (one file per assessor)",
            path,
            other.line,
        )
    return out


def _parse(data: bytes, path: Path, number: int, task: Task | None) -> Assessment:
    if len(data) > MAX_ASSESSMENT_LINE:
        raise InputError(f"line longer than {MAX_ASSESSMENT_LINE:,} bytes", path, number)
    return parse_assessment(loads_json(data, path, number), str(path), number, task)


def _complete_object(data: bytes) -> Any:
    try:
        obj = json.loads(data)
    except ValueError:
        return None
    return obj if isinstance(obj, dict) else None


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class AssessmentWriter:
    """Appends one assessor's judgments of a task to their file (see the module docstring).

    Opening locks the file (a second writer for it raises `InputError`), repairs a torn tail,
    and reads what the file holds (checked against the task and the mode). `append` returns the
    line written once it is on disk. Safe to call from several threads.
    """

    def __init__(self, path: str | Path, task: Task, assessor: str, mode: str):
        self.path = Path(path)
        self.task, self.assessor, self.mode = task, assessor, mode
        self._lock = threading.Lock()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            try:
                fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise InputError(
                    "another judge assess is writing this file (one page per assessor)", self.path
                ) from None
            self._repair_tail()
            self.lines = read_assessments(self.path, task) if os.fstat(self._fd).st_size else []
            for a in self.lines:
                if a.assessor != assessor:
                    raise InputError(
                        f"the file holds the judgments of {a.assessor!r}, not {assessor!r}", self.path, a.line
                    )
                if a.mode != mode:
                    raise InputError(
                        f"judged in {a.mode} mode, this page is {mode}: one assessor judges one task in one "
                        "mode (give another --assessor for another mode)",
                        self.path,
                        a.line,
                    )
        except BaseException:
            os.close(self._fd)
            raise
        self.seq = max((a.seq for a in self.lines), default=0)

    def _repair_tail(self) -> None:
        size = os.fstat(self._fd).st_size
        if size == 0:
            return
        data = os.pread(self._fd, min(size, MAX_ASSESSMENT_LINE + 1), max(0, size - MAX_ASSESSMENT_LINE - 1))
        if data.endswith(b"\n"):
            return
        cut = data.rfind(b"\n")
        if cut < 0 and size > len(data):
            raise InputError(f"the last line is longer than {MAX_ASSESSMENT_LINE:,} bytes", self.path)
        tail = data[cut + 1 :]
        keep = size - len(tail)
        if _complete_object(tail) is not None:
            os.write(self._fd, b"\n")
            os.fsync(self._fd)
            logger.warning("%s: the last line had no final newline; added it (the line is kept)", self.path)
            return
        aside = self.path.with_name(self.path.name + ".torn")
        with open(aside, "ab") as handle:
            handle.write(tail + b"\n")
            handle.flush()
            os.fsync(handle.fileno())
        os.ftruncate(self._fd, keep)
        os.fsync(self._fd)
        logger.warning(
            "%s: moved a torn last line (%d bytes, an interrupted write) to %s", self.path, len(tail), aside
        )

    def append(self, item: TaskItem, label: int | None, seconds: float) -> Assessment:
        """Write one judgment (``label`` None withdraws the item's label) and sync it to disk."""
        if label is not None and label not in self.task.scale:
            raise ValueError(f"label {label} is not on the scale {list(self.task.scale)}")
        with self._lock:
            record = Assessment(
                item=item.item,
                qid=item.qid,
                docid=item.docid,
                label=label,
                llm_label=item.llm_label,
                assessor=self.assessor,
                mode=self.mode,
                seconds=round(max(0.0, float(seconds)), 3),
                at=now_iso(),
                seq=self.seq + 1,
                line=len(self.lines) + 1,
            )
            data = (json.dumps(record.to_json_dict(), ensure_ascii=False) + "\n").encode("utf-8")
            size = os.fstat(self._fd).st_size
            try:
                written = os.write(self._fd, data)
                if written != len(data):  # a full disk
                    raise OSError(f"{self.path}: wrote {written} of {len(data)} bytes")
                os.fsync(self._fd)
            except OSError:
                # cut the file back to the last whole line, so the next judgment (and every
                # later one the page reports saved) starts a line of its own; a failed cut
                # leaves a torn tail, which the next open sets aside
                with contextlib.suppress(OSError):
                    os.ftruncate(self._fd, size)
                    os.fsync(self._fd)
                raise
            self.seq += 1
            self.lines.append(record)
            return record

    def close(self) -> None:
        with self._lock, contextlib.suppress(OSError):
            os.close(self._fd)

    def __enter__(self) -> AssessmentWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def write_export(
    qrels: Mapping[str, Mapping[str, int]], records: Iterable[Any], qrels_path: Path, records_path: Path
) -> list[Path]:
    """The human qrels and the records file, each written atomically."""
    from reljudge.io.judgments import write_judgments
    from reljudge.io.trec import write_qrels

    write_qrels(qrels, qrels_path)
    write_judgments(records, records_path)
    return [qrels_path, records_path]


__all__ = [
    "AssessmentWriter",
    "assessment_files",
    "check_task_matches_run",
    "default_assessment_path",
    "item_name",
    "read_assessments",
    "read_task",
    "run_fingerprint",
    "write_export",
]
