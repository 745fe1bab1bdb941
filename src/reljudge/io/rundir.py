"""A run directory: everything one judging job produced, resumable and self-describing.

Layout::

    RUN/
      judgments.jsonl   the records, appended one flushed line at a time (the source of truth)
      qrels.txt         derived from the judgments (re-written atomically, see `write_qrels`)
      manifest.json     what ran and how: command line, config (secrets masked), environment,
                        counts by status, tokens, cost, timestamps (re-written atomically)

Resume: a key (`Judgment.key`) with a record in ``judgments.jsonl`` is not asked again
(`RunDir.index` gives the keys and their latest records). Final statuses (`FINAL_STATUSES`):
``ok``, ``unparsed``, ``refused``, ``skipped`` -- a plain resume keeps them. Retryable
(`RETRYABLE_STATUSES`): ``api_error`` and ``truncated`` -- transient or fixable by a larger
``max_tokens``; a plain resume keeps them too. ``--retry-failed`` asks again every record whose
status is in `RETRY_FAILED_STATUSES`: the retryable ones and ``unparsed`` (the model may answer
readably when asked again); the runner indexes with ``exclude_statuses=RETRY_FAILED_STATUSES``.

One writer at a time: `RunDir.lock()` takes an exclusive ``flock`` on ``RUN/.lock`` for as long
as a job writes to the directory; a second process (or a second job in the same process) on the
same directory is refused with an `InputError` naming the holder, instead of interleaving its
records and manifests with the first one's.
"""

from __future__ import annotations

import copy
import functools
import json
import os
import platform
import re
import socket
import sys
from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

from reljudge.errors import InputError
from reljudge.io.atomic import write_text_atomic
from reljudge.io.judgment_index import JudgmentsIndex, index_judgments
from reljudge.io.judgments import (
    JUDGMENTS_FILE,
    JudgmentWriter,
    load_judgments,
    read_judgments_at,
    repair_torn_tail,
    scan_judgments,
)
from reljudge.io.redact import scrub_argv, scrub_secrets
from reljudge.records import Judgment, utc_now

FINAL_STATUSES: frozenset[str] = frozenset({"ok", "unparsed", "refused", "skipped"})
RETRYABLE_STATUSES: frozenset[str] = frozenset({"api_error", "truncated"})
#: what ``--retry-failed`` asks again: the retryable statuses and unparsed answers
RETRY_FAILED_STATUSES: frozenset[str] = RETRYABLE_STATUSES | {"unparsed"}
QRELS_FILE = "qrels.txt"
MANIFEST_FILE = "manifest.json"
LOCK_FILE = ".lock"
MANIFEST_VERSION = 1
#: a manifest is a few kilobytes; one larger than this is not read
MAX_MANIFEST_BYTES = 16 * 1024 * 1024

#: the libraries whose versions every manifest records (the run adds its backends' provider
#: libraries: `RunDir`'s ``libraries``)
KEY_LIBRARIES: tuple[str, ...] = (
    "pydantic",
    "typer",
    "numpy",
    "scipy",
    "pandas",
    "ir-measures",
    "ranx",
)


def _now() -> str:
    return utc_now()


def environment(libraries: Sequence[str] = ()) -> dict[str, Any]:
    """Python, platform, reljudge and the versions of `KEY_LIBRARIES` and ``libraries``
    (installed ones only)."""
    return copy.deepcopy(_environment((*KEY_LIBRARIES, *libraries)))


@functools.cache
def _environment(names: tuple[str, ...]) -> dict[str, Any]:  # ~50 ms: once per process
    from reljudge.version import __version__

    libraries: dict[str, str] = {}
    for name in dict.fromkeys(names):
        try:
            libraries[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return {
        "reljudge": __version__,
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "libraries": libraries,
    }


def error_kind(error: str | None) -> str:
    """The error kind an ``api_error`` record's ``error`` starts with (the client writes
    ``"<kind> (HTTP <code>): <message>"``, e.g. ``"auth (HTTP 401): ..."``); ``"other"`` when
    it names none."""
    match = _ERROR_KIND.match(error or "")
    return match.group(1) if match else "other"


_ERROR_KIND = re.compile(r"([a-z_]+)(?: \(HTTP \d+\))?:")


class RecordStats:
    """Counts by status (and by method), cached records, tokens, calls and cost, fed one record
    at a time (`add`), so that a whole judgments file can be summarised in one streamed pass.
    ``api_error_kinds`` counts the ``api_error`` records by `error_kind`."""

    def __init__(self) -> None:
        self.judgments = 0
        self.cached = 0
        self.api_error_kinds: Counter[str] = Counter()
        self.statuses: Counter[str] = Counter()
        self.by_method: dict[str, Counter[str]] = {}
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self.calls = 0
        self.cost_usd = 0.0

    def add(self, judgment: Judgment) -> None:
        self.judgments += 1
        status = judgment.status
        self.statuses[status] += 1
        counter = self.by_method.get(judgment.method)
        if counter is None:
            counter = self.by_method[judgment.method] = Counter()
        counter[status] += 1
        if status == "api_error":
            self.api_error_kinds[error_kind(judgment.error)] += 1
        provenance = judgment.provenance
        if provenance.cached:
            self.cached += 1
        usage = provenance.usage
        self.prompt_tokens += usage.prompt_tokens
        self.completion_tokens += usage.completion_tokens
        self.calls += usage.calls
        self.cost_usd += usage.cost_usd

    def remove(self, judgment: Judgment) -> None:
        """Undo `add` for a record counted before (one replaced by a later record of its key)."""
        self.judgments -= 1
        status = judgment.status
        for counter in (self.statuses, self.by_method[judgment.method]):
            counter[status] -= 1
            if counter[status] <= 0:
                del counter[status]
        if status == "api_error":
            kind = error_kind(judgment.error)
            self.api_error_kinds[kind] -= 1
            if self.api_error_kinds[kind] <= 0:
                del self.api_error_kinds[kind]
        provenance = judgment.provenance
        if provenance.cached:
            self.cached -= 1
        usage = provenance.usage
        self.prompt_tokens -= usage.prompt_tokens
        self.completion_tokens -= usage.completion_tokens
        self.calls -= usage.calls
        self.cost_usd -= usage.cost_usd

    def copy(self) -> RecordStats:
        other = RecordStats()
        other.__dict__.update(self.__dict__)
        other.statuses = Counter(self.statuses)
        other.api_error_kinds = Counter(self.api_error_kinds)
        other.by_method = {m: Counter(c) for m, c in self.by_method.items()}
        return other

    def usage(self) -> dict[str, Any]:
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.prompt_tokens + self.completion_tokens,
            "calls": self.calls,
            "cost_usd": round(self.cost_usd, 6),
        }

    def as_dict(self) -> dict[str, Any]:
        """The shape of `summarize`."""
        return {
            "judgments": self.judgments,
            "status": dict(sorted(self.statuses.items())),
            "by_method": {m: dict(sorted(c.items())) for m, c in sorted(self.by_method.items())},
            "cached": self.cached,
            "usage": self.usage(),
        }


def summarize(judgments: Iterable[Judgment]) -> dict[str, Any]:
    """Counts by status (and by method), tokens, calls and cost of a list of records."""
    stats = RecordStats()
    for judgment in judgments:
        stats.add(judgment)
    return stats.as_dict()


def stream_stats(path: Path) -> tuple[RecordStats, RecordStats]:
    """(stats of the latest record of each key, stats of every record) of a judgments file, in
    one streamed pass (records replaced by a later one of the same key are found first with
    `index_judgments`, which holds only the keys)."""
    latest, every = RecordStats(), RecordStats()
    if not path.exists() or path.stat().st_size == 0:
        return latest, every
    superseded = index_judgments(path).superseded
    for ordinal, (_, record) in enumerate(scan_judgments(path)):
        every.add(record)
        if ordinal not in superseded:
            latest.add(record)
    return latest, every


class RunDirLock:
    """An exclusive lock on a run directory, held until `release` (or the process ends)."""

    def __init__(self, handle: Any, path: Path):
        self._handle = handle
        self.path = path

    def release(self) -> None:
        if self._handle is not None and not self._handle.closed:
            self._handle.close()  # closing the descriptor drops the flock
        self._handle = None

    def __enter__(self) -> RunDirLock:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


class RunDir:
    """A run directory (created on first write). See the module docstring for the layout.
    ``libraries``: the libraries whose versions its manifest records besides `KEY_LIBRARIES`
    (a job's: the provider libraries of the backends)."""

    def __init__(self, path: str | Path, libraries: Sequence[str] = ()):
        self.path = Path(path)
        self.libraries = tuple(libraries)
        if self.path.exists() and not self.path.is_dir():
            raise InputError("exists and is not a directory", self.path)

    def __repr__(self) -> str:
        return f"RunDir({str(self.path)!r})"

    @property
    def judgments_path(self) -> Path:
        return self.path / JUDGMENTS_FILE

    @property
    def qrels_path(self) -> Path:
        return self.path / QRELS_FILE

    @property
    def manifest_path(self) -> Path:
        return self.path / MANIFEST_FILE

    def exists(self) -> bool:
        return self.judgments_path.exists()

    def writer(self, *, fsync: bool = False) -> JudgmentWriter:
        """An appending writer on ``judgments.jsonl`` (repairs a torn last line first)."""
        self.path.mkdir(parents=True, exist_ok=True)
        return JudgmentWriter(self.judgments_path, fsync=fsync)

    def repair_tail(self) -> int:
        """Make the last line of ``judgments.jsonl`` whole before it is indexed and appended to:
        a complete record missing only its newline is kept, a partial line is cut (see
        `reljudge.io.judgments.repair_torn_tail`). Returns the bytes cut off."""
        return repair_torn_tail(self.judgments_path)

    def lock(self) -> RunDirLock:
        """Take the exclusive lock of this directory (creating it); `InputError` when another
        process or job holds it. Without ``fcntl`` (Windows) no lock is taken."""
        try:
            import fcntl
        except ImportError:  # pragma: no cover - not POSIX
            return RunDirLock(None, self.path / LOCK_FILE)
        self.path.mkdir(parents=True, exist_ok=True)
        path = self.path / LOCK_FILE
        handle = path.open("a+", encoding="utf-8")
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            handle.seek(0)
            holder = handle.read().strip() or "another process"
            handle.close()
            raise InputError(
                f"in use by another judge process ({holder}); two jobs writing one run directory "
                "would mix their records. Wait for it to finish (then the same command resumes), "
                "or give another --output",
                self.path,
            ) from None
        handle.seek(0)
        handle.truncate()
        handle.write(f"pid {os.getpid()} on {socket.gethostname()} since {_now()}\n")
        handle.flush()
        return RunDirLock(handle, path)

    def judgments(self, *, latest: bool = True) -> list[Judgment]:
        """The records (the last per key when ``latest``); empty when nothing was written yet."""
        if not self.judgments_path.exists() or self.judgments_path.stat().st_size == 0:
            return []
        return load_judgments(self.judgments_path, latest=latest)

    def index(
        self,
        *,
        lazy_methods: Sequence[str] = (),
        exclude_statuses: Collection[str] = (),
        stats: bool = False,
    ) -> JudgmentsIndex:
        """One streamed pass over ``judgments.jsonl``: the keys, which records later ones
        replace, and the latest records as a compact `ExistingRecords` mapping (records of
        ``lazy_methods`` are read back from the file on lookup; ``exclude_statuses`` are left
        out). See `reljudge.io.judgment_index.index_judgments`.

        ``stats=True`` also counts the records in the same pass: ``index.stats`` is (latest,
        every) `RecordStats`, as `stream_stats` gives (the replaced records, usually none, are
        read again by offset to take them out of "latest")."""
        if not stats:
            return index_judgments(
                self.judgments_path, lazy_methods=lazy_methods, exclude_statuses=exclude_statuses
            )
        every = RecordStats()
        index = index_judgments(
            self.judgments_path,
            lazy_methods=lazy_methods,
            exclude_statuses=exclude_statuses,
            on_record=every.add,
        )
        latest = every.copy()
        if index.superseded:
            for record in read_judgments_at(self.judgments_path, index.superseded_offsets()):
                latest.remove(record)
        index.stats = (latest, every)
        return index

    def read_manifest(self) -> dict[str, Any]:
        if not self.manifest_path.exists():
            return {}
        if self.manifest_path.stat().st_size > MAX_MANIFEST_BYTES:
            raise InputError(
                f"not a valid manifest (larger than {MAX_MANIFEST_BYTES // 2**20} MiB)", self.manifest_path
            )
        try:
            data = json.loads(self.manifest_path.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as err:
            raise InputError(f"not a valid manifest: {err}", self.manifest_path) from None
        if not isinstance(data, dict):
            raise InputError("not a valid manifest (expected a JSON object)", self.manifest_path)
        return data

    def write_manifest(
        self,
        *,
        command: Sequence[str] | None = None,
        config: Mapping[str, Any] | None = None,
        started_at: str | None = None,
        finished_at: str | None = None,
        extra: Mapping[str, Any] | None = None,
        stats: tuple[RecordStats, RecordStats] | None = None,
    ) -> dict[str, Any]:
        """(Re)write ``manifest.json`` atomically from the arguments and the judgments on disk.

        ``stats``: (latest, all) `RecordStats` of ``judgments.jsonl`` when the caller already
        has them (e.g. counted while writing); otherwise the file is read once (`stream_stats`).

        Secrets are masked in ``command`` and ``config`` (see `reljudge.io.redact`). When an
        existing manifest came from a run with another ``started_at`` (a resumed run), its
        start, finish and command are kept under ``"history"``. Returns the manifest written.
        """
        previous = self.read_manifest()
        latest, every = stats if stats is not None else stream_stats(self.judgments_path)
        now = _now()
        manifest: dict[str, Any] = {
            "manifest_version": MANIFEST_VERSION,
            "created_at": previous.get("created_at", started_at or now),
            "updated_at": now,
            "started_at": started_at,
            "finished_at": finished_at,
            "command": scrub_argv(list(command if command is not None else sys.argv)),
            "config": scrub_secrets(dict(config or {})),
            "environment": environment(self.libraries),
            "files": {"judgments": JUDGMENTS_FILE, "qrels": QRELS_FILE if self.qrels_path.exists() else None},
            "records": every.judgments,
            "summary": latest.as_dict(),
            "usage_all_records": every.usage(),
        }
        if extra:
            manifest["extra"] = scrub_secrets(dict(extra))
        history = list(previous.get("history", []))
        if previous and previous.get("started_at") != started_at:
            history.append({k: previous.get(k) for k in ("started_at", "finished_at", "command")})
        if history:
            manifest["history"] = history
        self.path.mkdir(parents=True, exist_ok=True)
        write_text_atomic(self.manifest_path, json.dumps(manifest, indent=2, ensure_ascii=False) + "\n")
        return manifest
