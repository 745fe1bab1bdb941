"""Running a job: prepare it, take the run directory's lock, run the judge, append each record
as it comes, and finish (qrels, manifest, summary) -- also when it is interrupted or aborted.

The job's outcome is a `RunSummary`; its ``exit_code`` is 1 when the share of failed records
(unparsed, api_error, refused, truncated among all non-skipped records) exceeds
``max_failure_rate``, or when the provider cannot serve the job at all (a `ProviderAbort` from
the client: ``state="aborted"``, the records so far are kept). A run directory that cannot be
written (a full disk, a read-only file system) is an `OutputError` (an `InputError`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import shutil
import sys
import time
from collections.abc import Callable, Coroutine, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any, TypeVar

from reljudge.errors import InputError
from reljudge.io.rundir import RETRY_FAILED_STATUSES
from reljudge.records import Judgment, utc_now
from reljudge.run.config import JobState, RunConfig
from reljudge.run.errors import (
    OutputError,
    close_writer,
    find_budget_exhausted,
    find_provider_abort,
    first_input_error,
    writing,
)
from reljudge.run.estimate import NotConfirmed, estimate_job
from reljudge.run.finish import finish, job_scorer, write_manifest
from reljudge.run.identity import check_identity, job_identity, repointed
from reljudge.run.prepare import PreparedJob, client_config, label_methods, prepare
from reljudge.run.session import ReadBack, Session
from reljudge.run.summary import RunSummary

logger = logging.getLogger(__name__)

if TYPE_CHECKING:
    from reljudge.io.rundir import RecordStats
    from reljudge.judges.base import Judge, JudgeInputs
    from reljudge.llm import ClientConfig, LLMClient
    from reljudge.llm.budget import BudgetExhausted
    from reljudge.llm.types import ProviderAbort
    from reljudge.run.inputs import SharedInputs


def dry_run(job: PreparedJob) -> RunSummary:
    """The summary of ``--dry-run``: the estimate, nothing called, nothing written."""
    est = estimate_job(
        job.config, job.judge, job.inputs, job.pool, job.prices, batch=job.config.batch, model=job.model
    )
    est["passages"] = job.passages.as_dict()
    if job.existing:
        est.update(existing_records=len(job.existing), output_dir=str(job.rundir.path))
    return RunSummary(
        state="dry-run",
        method=job.config.method,
        model=job.config.model,
        items=job.pool.n_items,
        estimate=est,
        max_failure_rate=job.config.max_failure_rate,
    )


async def run_job_async(
    config: RunConfig,
    client: LLMClient | None = None,
    *,
    on_record: Callable[[Judgment], None] | None = None,
    shared: SharedInputs | None = None,
    confirm: Callable[[dict[str, Any]], bool] | None = None,
) -> RunSummary:
    """Run one judging job (see `reljudge.run`).

    With ``client``, the job uses that client (its cache, limits and usage counters, e.g. one
    shared by all cells of a sweep) and leaves it open; otherwise it opens its own from
    ``config``. ``on_record`` is called with every new record after it is saved. On
    interruption (KeyboardInterrupt, task cancellation) the records so far are kept, qrels and
    manifest are written, and the exception propagates. ``confirm``: asked with the job's
    estimate before a new run directory is started (``judge run`` on a terminal, see
    `reljudge.run.estimate.confirmation_reason`); False raises `NotConfirmed` before anything
    is called or written.
    """
    session = Session(started=time.monotonic(), started_at=utc_now())
    # a run reads the existing records under its lock; ``shared``: inputs shared with other jobs
    # on the same data (a sweep's cells), each dataset resolved and its passages read once
    job = prepare(config, read_existing=config.dry_run, shared=shared)
    if config.dry_run:
        return dry_run(job)
    long_passages = job.passages.warning()
    if long_passages is not None:
        logger.warning("%s", long_passages)
    own_config = client_config(config, job.prices, job.model) if client is None else None
    if own_config is not None and config.max_cost is not None:
        from reljudge.llm.pricing import model_cost

        if model_cost(job.model, 1_000_000, 1_000_000, job.prices) == (0.0, False):
            raise InputError(
                f"--max-cost needs the price of {config.model}: it is not in the price table "
                "(give it with --prices FILE)"
            )
    if confirm is not None and not job.rundir.judgments_path.exists():  # a resume does not ask again
        if not confirm(
            estimate_job(job.config, job.judge, job.inputs, job.pool, job.prices, model=job.model)
        ):
            raise NotConfirmed("not confirmed: nothing was called and nothing was written")

    created = not job.rundir.path.exists()
    with writing(job.rundir.path):
        lock = job.rundir.lock()  # one writer per run directory: a second job is refused here
    try:
        return await _run_locked(job, session, client, own_config, created, on_record)
    finally:
        lock.release()


async def _run_locked(
    job: PreparedJob,
    session: Session,
    client: LLMClient | None,
    own_config: ClientConfig | None,
    created: bool,
    on_record: Callable[[Judgment], None] | None,
) -> RunSummary:
    """`run_job_async` once the run directory's lock is held."""
    from reljudge.judges.context import JudgeContext
    from reljudge.progress import JobProgress
    from reljudge.version import __version__

    config = job.config
    if getattr(client, "batch", None) is None:  # a run one request at a time would pay twice
        _refuse_live_batches(job.rundir.path)
    # read the directory again under the lock: another process may have finished meanwhile
    identity = job_identity(config, job.judge)
    job.manifest = check_identity(job.rundir, identity)
    moved = repointed(job.manifest, identity)
    if moved:  # a directory of failures only, pointed at another server: said once, recorded
        change = ", ".join(f"{name} was {was!r}, now {now!r}" for name, (was, now) in moved.items())
        logger.warning(
            "%s: re-pointed (%s); it holds no successful record, so its failed records stay in "
            "judgments.jsonl as history and their items are judged again",
            job.rundir.path,
            change,
        )
        history = job.manifest.setdefault("extra", {}).setdefault("repointed", [])
        history.append({"at": session.started_at, **{n: {"was": w, "now": v} for n, (w, v) in moved.items()}})
    # a last record without its newline is kept (and gets it), a torn one is cut: before the
    # index, so that the index and the file the writer appends to agree
    with writing(job.rundir.judgments_path):
        job.rundir.repair_tail()
    # the one streamed pass at start-up: the keys already judged (the label records stay on
    # disk, read back on lookup), which records later ones replace, and the manifest's counts
    index = job.rundir.index(
        lazy_methods=label_methods(job.judge),
        exclude_statuses=RETRY_FAILED_STATUSES if config.retry_failed or moved else (),
        stats=True,
    )
    existing = job.existing = index.existing
    start_latest = index.latest  # key -> ordinal of its latest record in judgments.jsonl
    session.superseded = index.superseded
    if index.records == 0:  # every record will be this session's: counted and scored as written
        session.tally = ReadBack.tally()
        with contextlib.suppress(ValueError):  # a scoring option it refuses: said when the job ends
            session.scorer = job_scorer(job)
    try:
        with writing(job.rundir.manifest_path):
            write_manifest(job, session, "running", {}, stats=index.stats)
            writer = job.rundir.writer()
    except BaseException:
        if created:
            shutil.rmtree(job.rundir.path, ignore_errors=True)
        raise

    # the bar's total costs an estimate (every prompt rendered): only when a bar is shown
    shown = config.progress if config.progress is not None else sys.stderr.isatty()
    progress = JobProgress(
        total=_expected_records(job.judge, job.inputs, existing) if shown else None,
        desc=f"{config.method} {config.model}",
        enabled=config.progress,
    )

    def on_event(kind: str, info: dict[str, Any]) -> None:
        progress.on_event(kind, info)
        session.ledger.on_event(kind, info)

    def emit(record: Judgment) -> None:
        tally, session.tally = session.tally, None  # restored once the record is counted in it
        with writing(writer.path):  # a full disk ends the job as an input error, records kept
            writer.write(record)
        if tally is not None:
            tally.count_new(record)
            session.tally = tally
            if session.scorer is not None:  # the label into its slot (a pointwise judge)
                try:
                    session.scorer.add(record)
                except ValueError:  # raised again when the records are read back at the end
                    session.scorer = None
        replaced = start_latest.pop(record.key, None)
        if replaced is not None:  # this record replaces the latest one of an earlier session
            session.superseded.add(replaced)
        session.count(record)
        progress.on_record(record)
        if on_record is not None:
            on_record(record)

    state: JobState = "interrupted"
    abort: ProviderAbort | None = None
    capped: BudgetExhausted | None = None  # the cost cap (--max-cost) stopped the job
    output_failed = False  # the run directory could not be written (a full disk, ...)
    own: LLMClient | None = None
    client_stats: dict[str, Any] = {}
    try:
        if client is None:
            from reljudge.llm import LLMClient

            assert own_config is not None
            if own_config.max_cost_usd is not None:  # the cap counts what earlier sessions spent
                own_config = replace(own_config, spent_usd=_spent(index.stats))
            async with LLMClient(own_config, on_event=on_event) as own:
                progress.concurrency = own.adaptive
                ctx = JudgeContext(own, emit, existing, tool_version=__version__, samples=job.config.samples)
                await job.judge.run(job.inputs, ctx)
        else:
            ctx = JudgeContext(client, emit, existing, tool_version=__version__, samples=job.config.samples)
            await job.judge.run(job.inputs, ctx)
        state = "finished"
    except Exception as err:
        abort = find_provider_abort(err)
        capped = find_budget_exhausted(err) if abort is None else None
        if capped is not None:
            state = "capped"  # stopped before the cost cap: everything kept, a higher cap resumes
        elif abort is None:
            state = "failed"
            problem = first_input_error(err)
            output_failed = isinstance(problem, OutputError)
            if problem is not None and problem is not err:  # raised inside the judge's task group
                raise problem from None
            raise
        else:
            state = "aborted"  # the provider cannot serve the job: stop, keep what was done
    finally:
        progress.close()
        unwritten = close_writer(writer)
        if own is not None:
            client_stats = own.stats.as_dict()
        if state == "failed" and created and not session.new_records:
            shutil.rmtree(job.rundir.path, ignore_errors=True)  # nothing done: leave nothing behind
        elif state == "failed" and (unwritten is not None or output_failed):
            # the disk is full (or read-only): writing qrels and manifest would fail the same way;
            # the error that propagates says what happened and that the records so far are kept
            with contextlib.suppress(OSError):
                finish(job, session, state, client_stats, abort)
        else:
            with writing(job.rundir.path):
                if unwritten is not None:
                    raise unwritten
                summary = finish(job, session, state, client_stats, abort, capped)
            if state in ("interrupted", "failed"):  # the exception propagates: say what was kept
                print(summary.render(), file=sys.stderr)
    return summary


def _expected_records(judge: Judge, inputs: JudgeInputs, existing: Mapping[Any, Judgment]) -> int | None:
    """Bar total: the judge's estimated label records less those already done (a guide)."""
    try:
        calls = judge.estimate(inputs).label_records
    except Exception:  # an estimate is a nicety for the bar, never a reason to fail
        return None
    labels = label_methods(judge)
    done = sum(1 for key in existing if key[0] in labels)
    return max(calls - done, 0) or None


def _refuse_live_batches(path: Any) -> None:
    """A run without ``--batch`` on a directory whose batches are still in flight would send
    their requests again: refused (`reljudge.run.batch`)."""
    from reljudge.run.batch.state import live_waves

    live = live_waves(path)
    if live:
        raise InputError(
            f"{live} batch(es) of this run directory are in flight: run the same command with --batch to "
            "re-attach to them (without it their requests would be sent and paid again)",
            path,
        )


def _spent(stats: tuple[RecordStats, RecordStats] | None) -> float:
    """What the run directory's records cost (every record, replaced ones too: they were paid)."""
    return stats[1].cost_usd if stats is not None else 0.0


def run_job(config: RunConfig, client: LLMClient | None = None) -> RunSummary:
    """Synchronous `run_job_async`: runs its own event loop. Called where a loop is already
    running (a Jupyter notebook, an async program), it runs the job on a loop of its own in a
    worker thread and waits for it (`run_coroutine`), so the same line works there too (``await
    run_job_async(config)`` is the way that does not block the caller's loop). A ``client`` is
    bound to the caller's loop, so with one given there it is an error naming `run_job_async`."""
    if client is not None and _loop_running():
        raise RuntimeError(
            "run_job(config, client) was called inside a running event loop (a notebook?), whose client "
            "cannot be used from another loop: use `await run_job_async(config, client)` instead"
        )
    return run_coroutine(lambda: run_job_async(config, client))


T = TypeVar("T")


def run_coroutine(make: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """``asyncio.run(make())``; where an event loop is already running in this thread (a
    notebook), on a new loop in a worker thread, waited for."""
    if not _loop_running():  # the usual case: a script, the command line
        return asyncio.run(make())
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1, thread_name_prefix="reljudge-job") as worker:
        return worker.submit(lambda: asyncio.run(make())).result()


def _loop_running() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True
