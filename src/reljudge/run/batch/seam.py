"""The seam between a job and any batch executor (a provider's Batch API, ``vllm run-batch``, a
Ray Data pipeline): collect the requests a job still needs as OpenAI batch lines, and ingest
output lines into the job's response cache. Both go through the job's own client, so a request
line is exactly what the synchronous path would send and an answer is read, bounded, redacted
and validated the way a synchronous one is (`reljudge.llm.batch`).

>>> session = BatchSession(config)                                   # doctest: +SKIP
>>> step = await session.collect(Path("requests.jsonl"))             # one pass; no request sent
>>> ...  # run the lines anywhere that speaks the OpenAI batch format
>>> session.ingest(bounded_lines(open("output.jsonl", "rb")), expected=ids)
>>> step = await session.collect(Path("requests-2.jsonl"))           # records; the next stage

A pass is a normal run of the job (`run_job_async`) with the client in collect mode: every item
whose answers are in the cache (or whose batch line failed: an ``api_error`` record) gets its
record; every other item gets none, and its requests go to the pass's request file. Multi-stage
methods (EXAM questions then grades, nuggets, the pairwise sampler's rounds) need one pass per
stage. The job is done when a pass defers nothing (`BatchPass.done`), and then `finish` drops
the unreadable answers the judge asked again from the cache.

The run directory keeps the batch's files under ``batch/`` (`BATCH_DIR`): ``failures.jsonl``
(the lines that brought no good answer; ``--retry-failed`` starts it anew so that they are sent
again), and the waves of `reljudge.run.batch.passes`.
"""

from __future__ import annotations

from collections.abc import Container, Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reljudge.errors import InputError

if TYPE_CHECKING:
    from reljudge.llm import LLMClient
    from reljudge.llm.batch.collect import BatchCollector
    from reljudge.llm.batch.failures import FailureLog
    from reljudge.llm.batch.ingest import IngestReport
    from reljudge.llm.routing import ResolvedModel
    from reljudge.run.config import RunConfig
    from reljudge.run.summary import RunSummary

#: the run directory's folder of batch files
BATCH_DIR = "batch"
FAILURES_FILE = "failures.jsonl"


@dataclass
class BatchPass:
    """What one pass did: the job's summary, the chats deferred (collected now, or waiting for a
    batch already sent) and the request lines written."""

    summary: RunSummary
    deferred: int
    collected: int
    waiting: int
    requests: Path

    @property
    def done(self) -> bool:
        """Nothing was deferred: every item has its record."""
        return self.deferred == 0


def check_batch_model(model: ResolvedModel) -> None:
    """`InputError` when the requests of ``model`` cannot go through a batch: its backend sends
    none, or not for this model (`reljudge.llm.backends.capabilities`)."""
    backend = model.capabilities
    if not backend.sends_batches:
        raise InputError(
            f"batch mode sends OpenAI batch requests: use an OpenAI model, openai/<name> with "
            f"--base-url, or litellm/<provider>/<name> (not the {model.backend} backend)"
        )
    try:
        backend.check_batch_model(model.model)
    except ValueError as err:
        raise InputError(str(err)) from None


def run_directory(config: RunConfig) -> Path:
    """The run directory of ``config`` (its ``--out``, or the default one of its dataset)."""
    if config.output is not None:
        return Path(config.output)
    from reljudge.run.prepare import prepare

    return prepare(config, read_existing=False).rundir.path


class BatchSession:
    """A job run in collect mode (see the module docstring). ``config.output`` is fixed to its
    run directory; ``--max-cost`` is not applied per request (a batch runner reserves waves)."""

    def __init__(self, config: RunConfig) -> None:
        from reljudge.llm import LLMClient
        from reljudge.llm.batch.collect import BatchCollector
        from reljudge.llm.batch.failures import FailureLog
        from reljudge.run.prepare import client_config, resolve_job_model

        if not config.use_cache:
            raise InputError(
                "batch mode needs the response cache (answers come back through it): drop --no-cache"
            )
        #: the job's model, resolved once; its backend's batch service sends the waves
        self.model = resolve_job_model(config)
        check_batch_model(self.model)
        self.dir = run_directory(config)
        self.config = config.model_copy(update={"output": self.dir})
        self.batch_dir = self.dir / BATCH_DIR
        self.failures: FailureLog = FailureLog(self.batch_dir / FAILURES_FILE)
        self.collector: BatchCollector = BatchCollector(None, failures=self.failures)
        #: the custom_ids whose answers this session ingested (their hits count as calls)
        self.fresh: set[str] = set()
        cfg = replace(client_config(self.config, model=self.model), max_cost_usd=None)
        self.client: LLMClient = LLMClient(cfg, batch=self.collector)  # its backend opens when first used
        self.client._cache.strict = True  # a cache failure stops the job (`CacheFailed`): never paid twice
        self.client._cache.open()
        if self.client._cache.db is None:
            raise InputError(f"batch mode needs the response cache, and {cfg.cache_path} cannot be opened")

    def restart_failures(self) -> None:
        """Forget the failed lines (``--retry-failed``): their requests are collected again. The
        old file is kept as ``failures.<n>.jsonl``."""
        from reljudge.llm.batch.failures import FailureLog

        path = self.failures.path
        if path.exists():
            n = 1
            while path.with_name(f"failures.{n}.jsonl").exists():
                n += 1
            path.rename(path.with_name(f"failures.{n}.jsonl"))
        self.failures = FailureLog(path)
        self.collector.failures = self.failures

    async def collect(
        self,
        requests: Path,
        *,
        live: Container[str] = frozenset(),
        fresh: Container[str] | None = None,
        sink: Any = None,
    ) -> BatchPass:
        """One pass of the job: records for what can be recorded, request lines (to the file
        ``requests``, replaced) for what cannot. ``live``: custom_ids sent and not yet ingested
        (deferred, not collected again); ``fresh``: those this run's batches answered (default:
        those this session ingested); ``sink``: where the lines go instead of that file (anything
        with ``write(bytes)`` and ``close()``, e.g. `reljudge.run.batch.requests.ShardedRequestFiles`)."""
        from reljudge.run.batch.requests import RequestFile
        from reljudge.run.job import run_job_async

        sink = RequestFile(requests) if sink is None else sink
        collector = self.collector
        collector.new_pass(sink)
        collector.live, collector.fresh = live, (self.fresh if fresh is None else fresh)
        try:
            summary = await run_job_async(self.config, self.client)
        finally:
            sink.close()
        return BatchPass(summary, collector.deferred, collector.collected, collector.waiting, requests)

    def ingest(
        self, lines: Iterable[bytes | str | None], *, expected: Container[str] | None = None
    ) -> IngestReport:
        """Ingest output (or error) lines into the job's response cache and failure log
        (`reljudge.llm.batch.ingest`); ``expected``: the custom_ids that were asked."""
        from reljudge.llm.batch.ingest import Ingestor

        client = self.client
        ingestor = Ingestor(client._results, client._cache, self.failures, expected, answered=self.fresh)
        return ingestor.ingest(lines)

    def finish(self) -> int:
        """After the last pass: drop from the cache the answers the judge could not read (and
        asked again); how many."""
        return self.collector.apply_forgets(self.client._cache.forget)

    async def aclose(self) -> None:
        await self.client.aclose()


async def collect_requests(config: RunConfig, requests: Path) -> BatchPass:
    """Collect the requests ``config``'s job still needs into ``requests`` (one pass)."""
    session = BatchSession(config)
    try:
        return await session.collect(requests)
    finally:
        await session.aclose()


def ingest_output(
    config: RunConfig, lines: Iterable[bytes | str | None], *, expected: Container[str] | None = None
) -> IngestReport:
    """Ingest output lines into ``config``'s job: its response cache and failure log."""
    import asyncio

    session = BatchSession(config)
    try:
        return session.ingest(lines, expected=expected)
    finally:
        asyncio.run(session.aclose())
