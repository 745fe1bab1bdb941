"""``judge batch export`` / ``judge batch import``: a job's requests as OpenAI batch files for an
engine reljudge does not drive (``vllm run-batch`` on one's own GPUs, a Ray Data pipeline, any
tool that reads and writes the OpenAI batch format), and that engine's output files back into the
run directory.

Both stand on the batch seam (`reljudge.run.batch.seam.BatchSession`): an export is one pass
of the job in collect mode -- every item whose answers are there gets its record, the requests of
the others are written as request lines, optionally split by topic into shards
(`reljudge.run.batch.requests`) -- and an import ingests output lines into the job's response cache
and failure log exactly as a synchronous answer would be stored, then makes a pass that writes
the records the answers complete. A multi-stage method (EXAM, nuggets, the pairwise sampler)
needs export -> run -> import once per stage; an export that collects nothing says the job is
complete.

An import reads only the answers to requests that were exported (the custom_ids of the request
files: those named with ``--requests``, else those of the run directory's last export, listed in
``batch/exports.jsonl``). A line that is not an output line of those requests is bad input:
``FILE:LINE: what is wrong``, nothing ingested -- or, with ``skip_bad``, it is left out and
reported.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reljudge.errors import InputError
from reljudge.records import utc_now

if TYPE_CHECKING:
    from reljudge.llm.batch.ingest import IngestReport
    from reljudge.run.batch.seam import BatchSession
    from reljudge.run.config import RunConfig
    from reljudge.run.summary import RunSummary

#: the run directory's list of exports (``batch/exports.jsonl``)
EXPORTS_FILE = "exports.jsonl"
#: how many skipped lines an import describes (the rest are counted)
MAX_SKIPPED_SHOWN = 10
#: the most custom_ids an import holds in memory (the request files' lines)
MAX_EXPECTED = 20_000_000


@dataclass
class ExportResult:
    """What ``judge batch export`` did."""

    run_dir: Path
    files: list[dict[str, Any]]  # {"path", "lines", "bytes"} per request file written
    collected: int  # request lines written
    deferred: int  # chats deferred in the pass
    summary: RunSummary

    @property
    def complete(self) -> bool:
        """Nothing was left to ask: every item has its record."""
        return self.deferred == 0

    def as_dict(self) -> dict[str, Any]:
        return {
            "run_dir": str(self.run_dir),
            "complete": self.complete,
            "requests": self.collected,
            "files": [{**f, "path": str(f["path"])} for f in self.files],
            "records": self.summary.records,
            "new_records": self.summary.new_records,
            "statuses": dict(self.summary.statuses),
        }

    def render(self) -> str:
        if self.complete:
            return (
                f"the job is complete: {self.summary.records} records in {self.run_dir} "
                f"({self.summary.new_records} new); nothing to export"
            )
        lines = [
            f"{self.collected:,} requests written to {len(self.files)} file(s)"
            f" ({self.summary.new_records} new records in {self.run_dir}):"
        ]
        lines += [f"  {f['path']}  {f['lines']:,} requests, {f['bytes']:,} bytes" for f in self.files]
        lines.append(
            "run them (e.g. vllm run-batch -i FILE -o OUTPUT --model M), then: judge batch import "
            "OUTPUT... with the same options"
        )
        return "\n".join(lines)


@dataclass
class ImportResult:
    """What ``judge batch import`` did."""

    run_dir: Path
    report: IngestReport
    skipped: list[str] = field(default_factory=list)  # FILE:LINE: why, the first few skipped lines
    skipped_count: int = 0
    remaining: int = 0  # requests the job still needs (not answered, or of a later stage)
    summary: RunSummary | None = None

    @property
    def complete(self) -> bool:
        return self.remaining == 0

    def as_dict(self) -> dict[str, Any]:
        summary = self.summary
        return {
            "run_dir": str(self.run_dir),
            "complete": self.complete,
            "ingested": self.report.as_dict(),
            "skipped": self.skipped_count,
            "skipped_lines": list(self.skipped),
            "remaining_requests": self.remaining,
            "records": summary.records if summary else 0,
            "new_records": summary.new_records if summary else 0,
            "statuses": dict(summary.statuses) if summary else {},
        }

    def render(self) -> str:
        r = self.report
        text = [
            f"ingested {r.lines:,} output lines: {r.answers:,} answers cached, {r.failed:,} failed "
            f"(api_error records; --retry-failed asks them again)"
            + (f", {self.skipped_count:,} bad lines skipped" if self.skipped_count else "")
        ]
        text += [f"  skipped {s}" for s in self.skipped]
        if self.summary is not None:
            text.append(
                f"{self.summary.new_records:,} new records; {self.summary.records:,} in {self.run_dir}"
            )
        if self.complete:
            text.append("the job is complete")
        else:
            text.append(
                f"{self.remaining:,} requests still needed (unanswered, or a later stage): run "
                "judge batch export again"
            )
        return "\n".join(text)


# -- export ----------------------------------------------------------------------------------


async def export_requests(config: RunConfig, target: Path, *, shards: int = 1) -> ExportResult:
    """One collect pass of ``config``'s job writing its request lines to ``target``: a file
    (``shards`` 1), or a directory of ``shards`` files split by topic. Files appear whole (written
    as ``*.part``, renamed at the end); a directory's earlier shard files are replaced."""
    from reljudge.run.batch.seam import BatchSession, run_directory

    target = Path(target)
    _refuse_live_batches(run_directory(config))
    sink = _RequestSink(target, shards)  # checks --requests and --shards before anything is opened
    try:
        session = BatchSession(config)
    except BaseException:
        sink.discard()
        raise
    try:
        if config.retry_failed:
            session.restart_failures()
        try:
            step = await session.collect(target, sink=sink)
        except BaseException:
            sink.discard()
            raise
        files = sink.commit()
        if step.done:
            session.finish()
        else:
            _note_export(session, files)
        return ExportResult(session.dir, files, step.collected, step.deferred, step.summary)
    finally:
        await session.aclose()


def _refuse_live_batches(run_dir: Path) -> None:
    """Files for another engine would ask again what batches of ``judge run --batch`` are
    answering: refused while that run directory has batches in flight."""
    from reljudge.run.batch.state import live_waves

    live = live_waves(run_dir)
    if live:
        raise InputError(
            f"{run_dir} has {live} batch(es) of 'judge run --batch' in flight: finish them with that "
            "command first (their requests would be asked twice)"
        )


class _RequestSink:
    """Where an export's request lines go: one file (a `RequestFile`), or shards by topic
    (`ShardedRequestFiles`); ``*.part`` until `commit`."""

    def __init__(self, target: Path, shards: int) -> None:
        from reljudge.run.batch.requests import MAX_SHARDS, RequestFile, ShardedRequestFiles

        if not 1 <= shards <= MAX_SHARDS:
            raise InputError(f"--shards must be between 1 and {MAX_SHARDS}, not {shards}")
        self.target = target
        single = shards == 1 and not target.is_dir()
        if single and target.suffix == "":
            raise InputError(f"--requests {target}: give a file name such as requests.jsonl")
        part = target.with_name(target.name + ".part")
        self.sink: RequestFile | ShardedRequestFiles = (
            RequestFile(part) if single else ShardedRequestFiles(part, shards)
        )

    def write(self, line: bytes) -> None:
        self.sink.write(line)

    def close(self) -> None:
        self.sink.close()

    def discard(self) -> None:
        import shutil

        from reljudge.run.batch.requests import RequestFile

        self.close()
        if isinstance(self.sink, RequestFile):
            self.sink.path.unlink(missing_ok=True)
        else:
            shutil.rmtree(self.sink.directory, ignore_errors=True)

    def commit(self) -> list[dict[str, Any]]:
        """Put the files in place; their paths, lines and bytes (none when nothing was written)."""
        import os

        from reljudge.run.batch.requests import RequestFile, shard_name

        self.close()
        sink = self.sink
        if isinstance(sink, RequestFile):
            if sink.lines == 0:
                sink.path.unlink(missing_ok=True)
                return []
            os.replace(sink.path, self.target)
            return [{"path": self.target, "lines": sink.lines, "bytes": sink.bytes}]
        self.target.mkdir(parents=True, exist_ok=True)
        for old in self.target.glob("requests-*-of-*.jsonl"):
            old.unlink()  # an earlier export's shards: their requests are collected again now
        files = []
        for index in range(sink.shards):
            if sink.lines[index]:
                final = self.target / shard_name(index, sink.shards)
                os.replace(sink.path(index), final)
                files.append({"path": final, "lines": sink.lines[index], "bytes": sink.bytes[index]})
        if sink.directory.exists():
            sink.directory.rmdir()
        return files


def _note_export(session: BatchSession, files: list[dict[str, Any]]) -> None:
    """Append the export's request files to ``batch/exports.jsonl`` (what an import expects)."""
    session.batch_dir.mkdir(parents=True, exist_ok=True)
    entry = {"at": utc_now(), "files": [str(Path(f["path"]).resolve()) for f in files]}
    with (session.batch_dir / EXPORTS_FILE).open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(entry) + "\n")


def last_export(batch_dir: Path) -> list[Path]:
    """The request files of the run directory's last export (none when there was none)."""
    path = batch_dir / EXPORTS_FILE
    if not path.exists():
        return []
    last: list[Path] = []
    with path.open("rb") as handle:
        for raw in handle:
            if len(raw) > 1_000_000 or not raw.endswith(b"\n"):
                continue  # a torn last line after a kill
            try:
                entry = json.loads(raw)
            except ValueError:
                continue
            files = entry.get("files") if isinstance(entry, dict) else None
            if isinstance(files, list) and all(isinstance(f, str) for f in files):
                last = [Path(f) for f in files]
    return last


# -- import ----------------------------------------------------------------------------------


def requested_ids(files: Iterable[Path]) -> set[str]:
    """The custom_ids of request files (a line that is not a reljudge request: `InputError`)."""
    from reljudge.llm.batch.lines import BadLine, request_custom_id

    ids: set[str] = set()
    for path in files:
        for number, raw in _numbered_lines(path):
            if raw is None:
                raise InputError("line too long for a request line", path, number)
            try:
                ids.add(request_custom_id(raw))
            except BadLine as err:
                raise InputError(str(err), path, number) from None
            if len(ids) > MAX_EXPECTED:
                raise InputError(f"more than {MAX_EXPECTED:,} requests", path, number)
    return ids


async def import_outputs(
    config: RunConfig,
    outputs: list[Path],
    *,
    requests: list[Path] | None = None,
    skip_bad: bool = False,
) -> ImportResult:
    """Ingest ``outputs`` (OpenAI batch output or error files, ``vllm run-batch`` output) into
    ``config``'s job, then make a pass that writes the records they complete (module docstring)."""
    from reljudge.run.batch.seam import BATCH_DIR, BatchSession, run_directory

    run_dir = run_directory(config)
    _refuse_live_batches(run_dir)
    # every file is checked before the run directory or the cache is touched
    expected_from = list(requests) if requests else last_export(run_dir / BATCH_DIR)
    if not expected_from:
        raise InputError(
            f"no export is recorded in {run_dir}: give the request files the outputs answer with --requests"
        )
    for path in expected_from:
        if not path.is_file():
            raise InputError(f"{path}: no such request file (give them with --requests)")
    expected = requested_ids(expected_from)
    skipped: list[str] = []
    bad = _check_outputs(outputs, expected, skipped, skip_bad)
    session = BatchSession(config)
    try:
        report = session.ingest(_good_lines(outputs, bad), expected=expected)
        pending = session.batch_dir / "import-pass.jsonl"
        step = await session.collect(pending)
        pending.unlink(missing_ok=True)
        if step.done:
            session.finish()
        return ImportResult(
            session.dir, report, skipped[:MAX_SKIPPED_SHOWN], len(bad), step.deferred, step.summary
        )
    finally:
        await session.aclose()


def _check_outputs(
    outputs: list[Path], expected: set[str], skipped: list[str], skip_bad: bool
) -> set[tuple[int, int]]:
    """Read every output line before anything is ingested: the (file, line) numbers of the bad
    ones. A bad line is an `InputError` (``FILE:LINE: why``) unless ``skip_bad``."""
    from reljudge.llm.batch.lines import BadLine, parse_output_line

    bad: set[tuple[int, int]] = set()
    seen: set[str] = set()
    for index, path in enumerate(outputs):
        if not path.is_file():
            raise InputError(f"{path}: no such output file")
        for number, raw in _numbered_lines(path):
            why = None
            if raw is None:
                why = "line too long for an output line"
            else:
                try:
                    line = parse_output_line(raw)
                except BadLine as err:
                    why = str(err)
                else:
                    if line.custom_id not in expected:
                        why = f"custom_id {line.custom_id[:16]}… is not one of the exported requests"
                    elif line.custom_id in seen:
                        why = f"a second answer to custom_id {line.custom_id[:16]}…"
                        if skip_bad:  # ingested: neither answer is kept, the request fails
                            skipped.append(f"{path}:{number}: {why}: neither answer kept, the request failed")
                            continue
                    else:
                        seen.add(line.custom_id)
            if why is None:
                continue
            if not skip_bad:
                raise InputError(f"{why} (--skip-bad-lines leaves such lines out)", path, number)
            bad.add((index, number))
            skipped.append(f"{path}:{number}: {why}")
    return bad


def _good_lines(outputs: list[Path], bad: set[tuple[int, int]]) -> Iterator[bytes | None]:
    for index, path in enumerate(outputs):
        for number, raw in _numbered_lines(path):
            if (index, number) not in bad:
                yield raw


def _numbered_lines(path: Path) -> Iterator[tuple[int, bytes | None]]:
    """(line number, line) of a JSONL file's non-empty lines; None for a line longer than an
    output line may be (`reljudge.llm.batch.lines.numbered_lines`)."""
    from reljudge.llm.batch.lines import numbered_lines

    with path.open("rb") as handle:
        yield from numbered_lines(handle)
