"""``judge batch ray``: the request files of ``judge batch export --shards N`` answered by a Ray
Data pipeline against an OpenAI-compatible endpoint (a vLLM server per GPU node, or any other),
into OpenAI batch output files for ``judge batch import``. Needs ``pip install 'reljudge[ray]'``;
Ray is imported here only, when the command runs.

The pipeline is Ray's: ``ray.data.read_text`` reads the shard files (one row per request line:
the line is sent as it was exported; ``read_json`` would turn each body into an Arrow struct and
back, filling keys some rows lack with nulls), and ``map_batches`` hands batches of rows to a pool
of ``workers`` actors (`SendWorker`). Ray places the actors on the cluster's nodes, restarts a
killed one and gives its batch again. Each actor sends its batch with at most
``concurrency`` requests in flight (`reljudge.run.batch.endpoint`: total deadlines, size bounds,
the client's retry rules) and appends every answer to its own journal file the moment it arrives
(`reljudge.run.batch.journal`).

Nothing answered is asked twice: before each batch an actor reads what the journal gained
(`AnsweredIndex`) and skips those requests -- so the batch a killed actor had, given again by
Ray, asks only what the killed actor had not written, and a run started again after the whole
pipeline was killed asks only what no journal line holds. A request is asked again only when
its first answer was never (wholly) written. At the end of the run the output files are written
from the journal, one per request file, atomically, with exactly one line per answered request;
a request whose retries ran out (429/5xx/timeouts) has none, and the same command asks it again.

The key is read by each actor from its own environment (``OPENAI_API_KEY`` or ``--api-key-env``):
on a cluster, set it on every node before ``ray start``; it is never in a task's arguments, a
line or a log. The output directory (and the request files) must be on a filesystem every node
sees.
"""

from __future__ import annotations

import asyncio
import fcntl
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reljudge.errors import InputError, MissingExtraError
from reljudge.run.batch.endpoint import EndpointOptions, parse_request
from reljudge.run.batch.journal import AnsweredIndex, OutputsWritten, output_names, write_outputs

LOCK_FILE = ".lock"
#: the most request lines one run reads (their custom_ids are held in memory)
MAX_REQUESTS = 20_000_000


@dataclass(frozen=True)
class PoolOptions:
    """How Ray runs the pipeline."""

    workers: int = 2  # actors in the pool
    batch_size: int = 64  # rows handed to an actor at a time
    cpus_per_worker: float = 0.5  # the actors wait on the network: a fraction of a CPU each
    address: str | None = None  # a running cluster ("auto", "ray://host:10001"); None: ray.init()'s choice
    num_cpus: int | None = None  # the CPUs of a local cluster this command starts
    progress: bool = False  # Ray Data's progress bars


@dataclass
class RayResult:
    """What one run of ``judge batch ray`` did."""

    requests: int
    already: int  # answered in the journal before this run
    outcomes: Counter[str]  # this run's rows: answered, failed, unanswered, skipped
    outputs: OutputsWritten
    seconds: float
    workers: dict[int, int] = field(default_factory=dict)  # worker pid -> its peak RSS (kB)
    ray_start_s: float = 0.0  # of ``seconds``: starting (or joining) the Ray cluster

    @property
    def complete(self) -> bool:
        return self.outputs.missing == 0

    def as_dict(self) -> dict[str, Any]:
        o = self.outputs
        return {
            "complete": self.complete,
            "requests": self.requests,
            "already_answered": self.already,
            "this_run": dict(sorted(self.outcomes.items())),
            "answered": o.answered,
            "missing": o.missing,
            "duplicates_left_out": o.duplicates,
            "files": [{**f, "path": str(f["path"])} for f in o.files],
            "seconds": round(self.seconds, 2),
            "ray_start_seconds": round(self.ray_start_s, 2),
            "workers": [{"pid": pid, "peak_rss_kb": kb} for pid, kb in sorted(self.workers.items())],
        }

    def render(self) -> str:
        o, c = self.outputs, self.outcomes
        lines = [
            f"{self.requests:,} requests: {self.already:,} answered before this run; this run "
            f"{c['answered']:,} answered, {c['failed']:,} answered with an error, "
            f"{c['unanswered']:,} not answered (retries ran out), {c['skipped']:,} skipped "
            f"(already in the journal); {self.seconds:.1f} s ({self.ray_start_s:.1f} s of it starting Ray)"
        ]
        lines += [f"  {f['path']}  {f['lines']:,} of {f['requests']:,} requests" for f in o.files]
        if self.workers:
            rss = ", ".join(f"{kb / 1024:.0f}" for kb in sorted(self.workers.values()))
            lines.append(f"  {len(self.workers)} worker process(es), peak RSS MB: {rss}")
        if o.duplicates:
            lines.append(f"  {o.duplicates} second journal line(s) for one request left out")
        if self.complete:
            lines.append(
                "every request has its output line: judge batch import OUTPUT... with the job's options"
            )
        else:
            lines.append(
                f"{o.missing:,} requests have no output line: run the same command again (it asks only "
                "those), or import now and export them later"
            )
        return "\n".join(lines)


class SendWorker:
    """One actor of the pool (Ray constructs it on a worker process): its event loop, its HTTP
    client, its journal file and its view of the journal live as long as the process does."""

    def __init__(self, endpoint: EndpointOptions, out_dir: str) -> None:
        from reljudge.run.batch.endpoint import EndpointSender
        from reljudge.run.batch.journal import PartWriter

        self.loop = asyncio.new_event_loop()
        self.sender = EndpointSender(endpoint)
        self.writer = PartWriter(Path(out_dir))
        self.index = AnsweredIndex(Path(out_dir))

    def __call__(self, batch: dict[str, Any]) -> dict[str, Any]:
        import os

        import numpy as np

        answered = self.index.refresh()  # what other (killed) workers wrote, too
        todo: list[tuple[str, dict[str, Any]]] = []
        ids: list[str] = []
        outcomes: list[str] = []
        for raw in batch["text"]:
            custom_id, body = parse_request(str(raw))
            if custom_id in answered:
                ids.append(custom_id)
                outcomes.append("skipped")
            else:
                todo.append((custom_id, body))
        for sent in self.loop.run_until_complete(self._send(todo)):
            ids.append(sent.custom_id)
            outcomes.append(sent.outcome)
        self.writer.sync()
        peak = _peak_rss_kb()
        return {
            "custom_id": np.array(ids, dtype=object),
            "outcome": np.array(outcomes, dtype=object),
            "pid": np.full(len(ids), os.getpid()),
            "peak_rss_kb": np.full(len(ids), peak),
        }

    async def _send(self, todo: list[tuple[str, dict[str, Any]]]) -> list[Any]:
        async def one(custom_id: str, body: dict[str, Any]) -> Any:
            sent = await self.sender.send(custom_id, body)
            if sent.line is not None:
                self.writer.append(sent.line)  # before anything else: journaled as it arrives
            return sent

        return list(await asyncio.gather(*(one(c, b) for c, b in todo)))


def _peak_rss_kb() -> int:
    """This process's peak resident set size (``VmHWM``), in kB (0 where /proc has none)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return 0


def read_requests(files: list[Path], model: str | None) -> dict[Path, set[str]]:
    """The custom_ids of each request file; a line that is not a reljudge request, or asks for
    another model than ``model``, is an `InputError` (``FILE:LINE``) before anything is sent."""
    from reljudge.llm.batch.lines import BadLine, numbered_lines

    shards: dict[Path, set[str]] = {}
    seen: set[str] = set()
    for path in files:
        if not path.is_file():
            raise InputError(f"{path}: no such request file")
        ids: set[str] = set()
        with path.open("rb") as handle:
            for number, raw in numbered_lines(handle):
                if raw is None:
                    raise InputError("line too long for a request line", path, number)
                try:
                    custom_id, body = parse_request(raw)
                except (BadLine, ValueError) as err:
                    raise InputError(str(err), path, number) from None
                if model is not None and body.get("model") != model:
                    raise InputError(
                        f"the request asks for model {str(body.get('model'))[:100]!r}, not --model {model!r}",
                        path,
                        number,
                    )
                if custom_id in seen:
                    raise InputError(f"custom_id {custom_id[:16]}… is asked twice", path, number)
                seen.add(custom_id)
                ids.add(custom_id)
                if len(seen) > MAX_REQUESTS:
                    raise InputError(f"more than {MAX_REQUESTS:,} requests", path, number)
        shards[path] = ids
    return shards


@contextmanager
def _locked(out_dir: Path) -> Iterator[None]:
    """Refuse a second run on the same output directory (its workers would ask the same requests)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    with (out_dir / LOCK_FILE).open("a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise InputError(f"{out_dir}: another 'judge batch ray' is writing there") from None
        yield


def send_with_ray(
    request_files: list[Path],
    out_dir: Path,
    endpoint: EndpointOptions,
    pool: PoolOptions,
    *,
    model: str | None = None,
) -> RayResult:
    """Run the pipeline over ``request_files`` into ``out_dir`` (module docstring)."""
    started = time.monotonic()
    files = _expand(request_files)
    output_names(files)  # two request files of one name: refused before anything is sent
    shards = read_requests(files, model)
    wanted = set().union(*shards.values())
    out_dir = Path(out_dir)
    with _locked(out_dir):
        already = len(AnsweredIndex(out_dir).refresh() & wanted)
        outcomes: Counter[str] = Counter()
        workers: dict[int, int] = {}
        ray_start = 0.0
        if already < len(wanted):
            ray_start = _run_pipeline(files, out_dir, endpoint, pool, outcomes, workers)
        outputs = write_outputs(shards, out_dir)
    seconds = time.monotonic() - started
    return RayResult(len(wanted), already, outcomes, outputs, seconds, workers, ray_start)


def _expand(paths: list[Path]) -> list[Path]:
    """Request files: the files given, and a directory's ``requests-*.jsonl``."""
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            found = sorted(path.glob("requests-*.jsonl"))
            if not found:
                raise InputError(f"{path}: no requests-*.jsonl file in this directory")
            files += found
        else:
            files.append(path)
    if len({p.resolve() for p in files}) != len(files):
        raise InputError("a request file is given twice")
    return files


def _run_pipeline(
    files: list[Path],
    out_dir: Path,
    endpoint: EndpointOptions,
    pool: PoolOptions,
    outcomes: Counter[str],
    workers: dict[int, int],
) -> float:
    """Run the pipeline; the seconds it took to start (or join) the Ray cluster."""
    try:
        import ray
        import ray.data
    except ImportError:
        raise MissingExtraError("judge batch ray needs Ray Data: pip install 'reljudge[ray]'") from None

    started = time.monotonic()
    ours = not ray.is_initialized()
    if ours:
        ray.init(
            address=pool.address,
            num_cpus=pool.num_cpus if pool.address is None else None,
            include_dashboard=False,
            logging_level="WARNING",
        )
    ray_start = time.monotonic() - started
    try:
        context = ray.data.DataContext.get_current()
        context.enable_progress_bars = pool.progress
        dataset = ray.data.read_text([str(p.resolve()) for p in files]).map_batches(
            SendWorker,
            fn_constructor_args=(endpoint, str(out_dir.resolve())),
            batch_size=pool.batch_size,
            batch_format="numpy",
            compute=ray.data.ActorPoolStrategy(size=pool.workers),
            num_cpus=pool.cpus_per_worker,
        )
        for batch in dataset.iter_batches(batch_size=None, batch_format="numpy"):
            outcomes.update(str(o) for o in batch["outcome"])
            for pid, kb in zip(batch["pid"].tolist(), batch["peak_rss_kb"].tolist(), strict=True):
                workers[int(pid)] = max(workers.get(int(pid), 0), int(kb))
    finally:
        if ours:
            ray.shutdown()
    return ray_start
