"""``judge run --batch``: a job through a provider's Batch API, resumably.

The job runs in passes (`reljudge.run.batch.seam.BatchSession`): a pass makes the records it
can and collects the requests it cannot answer yet; these are split into waves under the
provider's limits (`MAX_REQUESTS_PER_BATCH` requests, `MAX_BATCH_FILE_BYTES` bytes per file),
each wave uploaded and created as one batch (the official SDK, `reljudge.llm.batch.service`),
polled until it ends, and its output and error files ingested into the response cache; then the
next pass. A multi-stage method runs as successive rounds; the job ends with a pass that defers
nothing.

Never twice: the waves and how far each got live in ``batch/state.json``
(`reljudge.run.batch.state`), written before every remote action. A run started again re-attaches
to the waves not yet ingested -- finding a file or batch sent just before a kill by its name, its
metadata or its input file -- before collecting anything, so no request is sent in two batches. A
create that fails in a way that may have come after the provider made the batch, whose batch
cannot be found, leaves its wave ``lost``: reported, and created again only with
``--batch-resend-lost`` (`_Runner.send`). Answers of ingested waves that the response cache no
longer holds (a damaged cache moved away: a batch job stops on any cache failure,
`reljudge.llm.optional_cache.CacheFailed`) are read again from the waves' output files, not sent
again (`_Runner.recover`).

Waiting is bounded: every poll and download ends within what is left of ``--batch-max-wait``
(`reljudge.llm.batch.service.Deadlines`; then `BatchPending`, exit code 75), and a download reads
at most what the wave's answers can hold (its requests times the longest output line).

The summary counts every request of the waves this run ingested once (a wave's lines, their
tokens and cost at the batch price), whichever pass made their records.

A full disk (any `OSError` writing the run directory: a request file, a wave, the state, the
failure log) is an `reljudge.run.errors.OutputError` (``error: PATH: cannot write``, exit 2):
every step is written before the next is taken, so the same command resumes once there is room.

``--max-cost``: a wave is sent only when its bound (prompt tokens and the answer's token limit of
every request, at the batch price, `reljudge.llm.pricing.batch_price`) fits under the cap beside what the
run directory's records and the waves in flight cost; otherwise the wave is cut to the requests
that fit, and when none fits the job stops with exit code 3.
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reljudge.errors import InputError
from reljudge.llm.batch.lines import (
    MAX_BATCH_FILE_BYTES,
    MAX_OUTPUT_LINE_BYTES,
    MAX_REQUESTS_PER_BATCH,
    is_custom_id,
    request_custom_id,
)
from reljudge.records import Usage
from reljudge.run.batch.cost import fit_waves
from reljudge.run.batch.seam import BatchSession
from reljudge.run.batch.state import STATE_FILE, BatchState, Wave
from reljudge.run.errors import writing

if TYPE_CHECKING:
    from reljudge.llm.batch.ingest import IngestReport
    from reljudge.llm.batch.service import BatchInfo, BatchService
    from reljudge.run.config import RunConfig
    from reljudge.run.summary import RunSummary

#: bounds of the poll interval (seconds)
MIN_POLL_S, MAX_POLL_S = 0.01, 600.0
#: bytes of a request line counted as one token against the enqueued-token limit
BYTES_PER_TOKEN = 4
#: the most passes of one job (a pairwise sampler needs one per round; far more is a bug)
MAX_PASSES = 1000
#: the last poll of a wait comes this long (at most a tenth of the wait) before its end
LAST_LOOK_S = 1.0


#: how long a pass waits for its waves when ``--batch-max-wait`` is not given (exit code 75 then;
#: the same command re-attaches)
DEFAULT_MAX_WAIT_S = 25 * 3600.0


@dataclass
class BatchLimits:
    """How waves are cut and watched."""

    max_requests: int = MAX_REQUESTS_PER_BATCH
    max_bytes: int = MAX_BATCH_FILE_BYTES
    poll_s: float = 30.0
    #: the longest wait for the waves of one pass (None: `DEFAULT_MAX_WAIT_S`, a day and an hour:
    #: a provider's batch ends within its 24 h window, so a server that never ends one is left then)
    max_wait_s: float | None = None
    #: the provider's enqueued-token limit (tokens of the batches in flight at once; None: none);
    #: a wave's tokens are estimated at 4 bytes of its request lines a token (an overestimate)
    max_enqueued_tokens: int | None = None
    #: create again the batches of lost waves (``--batch-resend-lost``: a create that failed, after
    #: which the batch was not found; `_Runner.send`)
    resend_lost: bool = False


class BatchPending(Exception):
    """The waves did not end within ``--batch-max-wait``: everything is saved, the same command
    re-attaches to them."""


async def run_batch_async(
    config: RunConfig,
    limits: BatchLimits | None = None,
    *,
    service: BatchService | None = None,
    say: Callable[[str], None] | None = None,
    cap: Callable[[], float] | None = None,
) -> RunSummary:
    """Run ``config``'s job through the Batch API (see the module docstring). ``cap``: the cost
    cap as it stands when the next waves are reserved (default ``config.max_cost``); a sweep's
    cells share one cap this way (`reljudge.sweep.batch`)."""
    from reljudge.io.rundir import RunDir

    limits = limits or BatchLimits()
    say = say or _stderr
    session = BatchSession(config)
    if config.max_cost is not None and session.client._results.price is None:
        await session.aclose()
        raise InputError(
            f"--max-cost needs the price of {config.model}: it is not in the price table (give it with --prices FILE)"
        )
    lock = RunDir(session.batch_dir).lock()  # one batch runner per run directory
    own = service is None
    try:
        state = BatchState.load(session.batch_dir / STATE_FILE)
        for note in state.repaired:  # an id an older version saved that is not one
            say(note)
        if state.repaired:
            state.save()
        if config.retry_failed and not state.retrying:  # a new log, unless a killed retry goes on
            session.restart_failures()
            state.retrying = True
            state.save()
        if service is None:
            service = _service(session)
        runner = _Runner(session, state, service, limits, say)
        runner.cap_now = cap
        with writing(session.dir):  # a full disk: `error: PATH: cannot write`, exit 2, resumable
            return await runner.run()
    finally:
        if own and service is not None:
            await service.aclose()
        await session.aclose()
        lock.release()


def _service(session: BatchSession) -> BatchService:
    """The Batch API adapter of the job's backend (`reljudge.llm.backends.capabilities`)."""
    cfg = session.client.config
    model = session.model
    try:
        service: BatchService = model.capabilities.batch_service(
            model.model,
            base_url=cfg.base_url,
            api_key=cfg.api_key,
            timeout_s=max(cfg.timeout_s, 60.0),
            redact=session.client._redact,
        )
    except ValueError as err:
        raise InputError(str(err)) from None
    return service


class _Runner:
    def __init__(
        self,
        session: BatchSession,
        state: BatchState,
        service: BatchService,
        limits: BatchLimits,
        say: Callable[[str], None],
    ) -> None:
        self.session = session
        self.state = state
        self.service = service
        self.limits = limits
        self.say = say
        self.cap = session.config.max_cost
        #: the cap as it stands now (a sweep's share), when not ``self.cap``
        self.cap_now: Callable[[], float] | None = None
        self._last = ""
        #: seconds spent waiting for the provider (polling and sleeping between polls)
        self.waited_s = 0.0
        self.waves_sent = 0
        #: the ingested waves whose answers this run read again (`recover`: once each)
        self.recovered: set[int] = set()
        #: the provider requests of the waves this run ingested, each line once, whatever pass
        #: made its record (a pass's own summary counts only the answers it read)
        self.usage = Usage()

    async def run(self) -> RunSummary:
        for n in range(MAX_PASSES):
            await self.settle()
            fresh = self.ids(w for w in self.state.waves if not w.live)
            started = time.monotonic()
            step = await self.session.collect(self.session.batch_dir / "pending.jsonl", fresh=fresh)
            took = time.monotonic() - started
            if step.done:
                self.session.finish()
                if self.state.retrying:
                    self.state.retrying = False
                    self.state.save()
                step.requests.unlink(missing_ok=True)
                step.summary.usage = self.usage  # every pass's requests, each once
                self.say(
                    f"pass {n + 1} ({took:.1f} s): every record made; {self.waves_sent} wave(s) sent by this "
                    f"run; {self.waited_s:.1f} s waiting for the provider"
                )
                return step.summary
            if step.collected == 0:
                raise RuntimeError("a pass deferred requests but collected none (a bug)")
            if await self.recover(step.requests, fresh):
                continue  # the pass again, with the answers read again
            # under a cap the waves are saved only once reserved (`fit_waves`): a kill in between
            # must not leave waves that a restart would send without checking the cap
            waves = self.split(step.requests, save=self.cap is None)
            self.say(
                f"pass {n + 1} ({took:.1f} s): {step.summary.new_records} record(s); {step.collected} request(s) "
                f"in {len(waves)} wave(s)"
            )
            step.summary.usage = self.usage
            if self.cap is not None:
                cap = self.cap_now() if self.cap_now is not None else self.cap
                fit_waves(self.session, self.state, cap, waves, step.summary)  # saves the state
                step.requests.unlink(missing_ok=True)
            del waves
        raise RuntimeError(f"the job needed more than {MAX_PASSES} batch rounds")

    # -- waves ------------------------------------------------------------------------------
    def split(self, requests: Path, *, save: bool = True) -> list[Wave]:
        """Cut a pass's request file into waves (files in the batch folder, added to the state;
        with ``save`` the state is saved and the request file removed)."""
        folder = self.session.batch_dir
        waves: list[Wave] = []
        tokens = self.limits.max_enqueued_tokens
        handle = None
        try:
            with requests.open("rb") as src:
                for line in src:
                    wave = waves[-1] if waves else None
                    size = wave.bytes + len(line) if wave is not None else 0
                    if (
                        wave is None
                        or wave.lines >= self.limits.max_requests
                        or (wave.lines and size > self.limits.max_bytes)
                        or (wave.lines and tokens and size // BYTES_PER_TOKEN > tokens)
                    ):
                        if handle is not None:
                            handle.close()
                        n = len(self.state.waves) + len(waves)
                        wave = Wave(n=n, file=f"wave-{n:05d}.jsonl", lines=0, bytes=0)
                        waves.append(wave)
                        handle = (folder / wave.file).open("wb")
                    assert handle is not None
                    handle.write(line)
                    wave.lines += 1
                    wave.bytes += len(line)
                    wave.tokens = wave.bytes // BYTES_PER_TOKEN + 1
        finally:
            if handle is not None:
                handle.close()
        self.state.waves.extend(waves)
        if save:
            self.state.save()
            requests.unlink(missing_ok=True)
        return waves

    def ids(self, waves: Any) -> set[str]:
        """The custom_ids of the waves' request files."""
        out: set[str] = set()
        for wave in waves:
            path = self.session.batch_dir / wave.file
            if not path.is_file():
                raise InputError(
                    f"the request file of wave {wave.n} is missing: the batch state needs it to know what "
                    "was sent (restore it, or start over in a new run directory)",
                    path,
                )
            with path.open("rb") as handle:
                for line in handle:
                    head = (
                        line[14:78].decode("ascii", "replace") if line.startswith(b'{"custom_id":"') else ""
                    )
                    out.add(head if is_custom_id(head) else request_custom_id(line))
        return out

    # -- the remote side --------------------------------------------------------------------
    async def settle(self) -> None:
        """Send the waves not yet sent (in order, as many as the enqueued-token limit lets be in
        flight at once), wait for them, ingest each as it ends; until every wave is ingested, or
        `BatchPending` once ``--batch-max-wait`` has passed: every poll and download ends by then
        (`reljudge.llm.batch.service.Deadlines`; a send has its own bound, `send_what_fits`),
        and the last poll comes a little before it."""
        live = self.state.live
        if not live:
            return
        async with self.waiting() as deadline:
            poll = min(max(self.limits.poll_s, MIN_POLL_S), MAX_POLL_S)
            look = min(LAST_LOOK_S, (deadline - time.monotonic()) / 10)
            last = False
            while True:
                await self.send_what_fits(live)
                waiting = [w for w in live if w.step == "sent"]
                if not waiting:
                    break
                for wave in waiting:
                    assert wave.batch_id is not None
                    asked = time.monotonic()
                    info = await self.service.retrieve(wave.batch_id)
                    self.waited_s += time.monotonic() - asked
                    wave.status, wave.total, wave.completed, wave.failed = (
                        info.status,
                        info.total,
                        info.completed,
                        info.failed,
                    )
                    if info.final:
                        await self.ingest(wave, info)
                self.progress(live)
                if not any(w.live for w in live):
                    break
                if not any(w.step == "sent" for w in live):
                    continue  # room was made: send the next waves at once
                now = time.monotonic()
                if last or now >= deadline:
                    self.state.save()
                    running = sum(1 for w in live if w.step == "sent")
                    raise BatchPending(
                        f"{running} batch(es) still running after --batch-max-wait {self.max_wait_s:g} s; "
                        "everything is saved: run the same command again to re-attach to them"
                    )
                wake = now + poll
                if wake >= deadline - look:  # the last look, before the wait is over
                    wake, last = max(now, deadline - look), True
                import asyncio

                await asyncio.sleep(wake - now)
                self.waited_s += time.monotonic() - now

    @property
    def max_wait_s(self) -> float:
        return self.limits.max_wait_s if self.limits.max_wait_s is not None else DEFAULT_MAX_WAIT_S

    @contextlib.asynccontextmanager
    async def waiting(self) -> AsyncIterator[float]:
        """Within it, every call to the provider ends by ``--batch-max-wait`` from now (the
        deadline it gives); a call cut off by it raises `BatchPending` (everything is saved)."""
        from reljudge.llm.batch.service import CallTimedOut

        deadline = time.monotonic() + self.max_wait_s
        self.service.deadline = deadline
        try:
            yield deadline
        except CallTimedOut as err:
            if not err.waited:
                raise
            self.state.save()
            running = sum(1 for w in self.state.waves if w.step == "sent")
            what = f"{running} batch(es) still running" if running else "the provider's batches not read"
            raise BatchPending(
                f"{what} after --batch-max-wait {self.max_wait_s:g} s (the provider did not answer in time: "
                f"{err.message}); everything is saved: run the same command again to re-attach to them (with a "
                "larger --batch-max-wait if their files are large)"
            ) from None
        finally:
            self.service.deadline = None

    async def send_what_fits(self, live: list[Wave]) -> None:
        """Send the unsent waves in order while their estimated tokens fit beside those in flight
        (`BatchLimits.max_enqueued_tokens`; a wave alone is always sent). A wave a killed run may
        have sent already (uploading, creating) is always resumed."""
        limit = self.limits.max_enqueued_tokens
        in_flight = sum(w.tokens for w in live if w.step == "sent")
        for wave in live:
            if wave.step in ("sent", "ingested"):
                continue
            fresh = wave.step in ("prepared", "uploaded")
            if fresh and limit and in_flight and in_flight + wave.tokens > limit:
                break  # in order: the next waves wait for room
            # a send is bounded by its own deadline, not by --batch-max-wait: an upload or a create cut
            # off is done again from the start, so a short wait would never let a large wave go
            deadline, self.service.deadline = self.service.deadline, None
            try:
                await self.send(wave)
            finally:
                self.service.deadline = deadline
            in_flight += wave.tokens

    async def send(self, wave: Wave) -> None:
        """Upload the wave's file and create its batch, finding what a killed run sent first.

        A create that fails may have come after the provider made the batch (a timeout, a 5xx, a
        lost connection): the batch is looked for at once, by its metadata or its input file; one
        not found is *lost* (`lost`): never created again blindly, since that would pay the wave
        twice, until ``--batch-resend-lost`` says so (`BatchLimits.resend_lost`; the create is
        sent with the same idempotency key, which a provider that honours it answers with the
        first batch). A create the provider refused (`refused`) made nothing: it is sent again."""
        from reljudge.llm.batch.service import refused
        from reljudge.llm.types import ProviderError

        state, service = self.state, self.service
        started = time.monotonic()
        if wave.step == "uploading":
            found = await service.find_file(state.filename(wave))
            state.step(wave, "uploaded" if found else "prepared", file_id=found)
        if wave.step == "prepared":
            state.step(wave, "uploading")
            file_id = await service.upload(self.session.batch_dir / wave.file, state.filename(wave))
            state.step(wave, "uploaded", file_id=file_id)
        if wave.step in ("creating", "lost"):
            existing = await self.find(wave, "the process stopped while it was created")
            if existing is not None:
                state.step(wave, "sent", batch_id=existing.id, status=existing.status)
            else:
                self.say(f"wave {wave.n}: its batch was not found; sent again (--batch-resend-lost)")
                state.step(wave, "uploaded")
        if wave.step == "uploaded":
            assert wave.file_id is not None
            state.step(wave, "creating")
            try:
                info = await service.create(wave.file_id, state.metadata(wave), state.idempotency_key(wave))
            except ProviderError as err:
                if refused(err):  # no batch was made: the same command sends it again
                    state.step(wave, "uploaded")
                    raise
                made = await self.find(wave, f"creating it failed: {err}")
                if made is None:  # --batch-resend-lost: the next run sends it
                    state.step(wave, "uploaded")
                    raise
                info = made
            self.waves_sent += 1
            self.say(
                f"wave {wave.n}: {wave.lines} request(s), {wave.bytes / 1e6:.1f} MB, sent as {info.id} "
                f"({time.monotonic() - started:.1f} s)"
            )
            state.step(wave, "sent", batch_id=info.id, status=info.status)

    async def find(self, wave: Wave, why: str) -> BatchInfo | None:
        """The batch the provider may have made for ``wave`` (``why``: what makes it uncertain),
        looked up by its metadata or its input file; None when it is not found and
        ``--batch-resend-lost`` was given. Otherwise the wave is marked ``lost`` and `WaveLost`
        says what to check."""
        from reljudge.llm.batch.service import WaveLost

        state = self.state
        try:
            info = await self.service.find_batch(state.metadata(wave), input_file_id=wave.file_id)
        except WaveLost:  # the batches cannot be listed
            if self.limits.resend_lost:
                return None
            state.step(wave, "lost")
            raise
        if info is not None or self.limits.resend_lost:
            return info
        state.step(wave, "lost")
        meta = state.metadata(wave)
        raise WaveLost(
            f"wave {wave.n} ({wave.lines} request(s)) may have been made into a batch by the provider "
            f"({why}), and the provider's batches show none with metadata reljudge_run={meta['reljudge_run']} "
            f"reljudge_wave={meta['reljudge_wave']} or input file {wave.file_id}. It is not sent again, so that "
            "it is not paid twice. Look for that batch at the provider: if there is none (or once you "
            "cancelled it), run the same command with --batch-resend-lost to send the wave again"
        )

    async def ingest(self, wave: Wave, info: BatchInfo) -> None:
        """Ingest the output and error files of an ended wave; a request with no line in either
        is a failure (the batch expired, failed or was cancelled first)."""
        started = time.monotonic()
        expected = self.ids([wave])
        done: set[str] = set()
        report = await self.read_output(wave, info, expected, done)
        missing = expected - done
        for custom_id in missing:
            self.session.failures.add(
                custom_id,
                {
                    "kind": "other",
                    "error": f"the batch ended ({info.status}) without an answer to this request"
                    + (f": {self.session.client._redact(info.errors)}" if info.errors else ""),
                },
            )
        if info.errors:
            self.say(f"wave {wave.n} {info.status}: {self.session.client._redact(info.errors)}")
        if report.duplicates:
            self.say(
                f"wave {wave.n}: {report.duplicates} request(s) answered more than once: neither answer kept, "
                "recorded as failures (--retry-failed asks them again)"
            )
        if report.rejected:
            self.say(
                f"wave {wave.n}: {report.rejected} output line(s) rejected: " + "; ".join(report.problems[:3])
            )
        self.say(
            f"wave {wave.n} {info.status}: {report.answers} answer(s), {report.failed + len(missing)} failed; "
            f"ingested in {time.monotonic() - started:.1f} s"
        )
        self.usage = self.usage + Usage(
            calls=len(done),  # the requests the provider answered (a line, or lines, each)
            prompt_tokens=report.prompt_tokens,
            completion_tokens=report.completion_tokens,
            cost_usd=report.cost_usd,
        )
        from reljudge.run.batch.cost import usage_warning

        usage_warning(self.session.client, report)
        self.state.step(wave, "ingested", cost_usd=report.cost_usd, served=report.served or None)

    async def read_output(
        self, wave: Wave, info: BatchInfo, expected: set[str], done: set[str] | None = None
    ) -> IngestReport:
        """Ingest the lines of the wave's output and error files that answer ``expected`` into the
        response cache and the failure log (``done`` gets the custom_ids answered)."""
        from reljudge.llm.batch.ingest import Ingestor
        from reljudge.run.batch.cost import wave_bounds

        session = self.session
        bounds = wave_bounds(session, session.batch_dir / wave.file)  # each request's usage bound
        ingestor = Ingestor(
            session.client._results,
            session.client._cache,
            session.failures,
            expected,
            done,
            session.fresh,
            bounds,
        )
        bound = (wave.lines + 1) * MAX_OUTPUT_LINE_BYTES  # the most a file of the wave's answers holds
        for file_id in (info.output_file_id, info.error_file_id):
            if file_id is not None:
                async for line in self.service.lines(file_id, bound):
                    ingestor.line(line)
                if self.service.cut is not None:
                    self.say(
                        f"wave {wave.n}: {file_id} was read no further than {self.service.cut / 2**20:.0f} MiB "
                        f"(the most {wave.lines} answer(s) can hold); the rest is ignored"
                    )
        ingestor.flush()
        return ingestor.report

    async def recover(self, requests: Path, answered: set[str]) -> bool:
        """Read again the answers of ingested waves that a pass asked for (their requests are in
        ``requests``): the response cache no longer holds them (it was damaged and moved away, or
        cleared). They are ingested from the wave's output file at the provider, not sent again;
        a request a failure log names is not looked for (``--retry-failed`` sends it). True when
        a wave was read again (the pass is made again); each wave is read at most once a run."""
        from reljudge.llm.types import ProviderError

        waves = [
            w for w in self.state.waves if w.step == "ingested" and w.batch_id and w.n not in self.recovered
        ]
        if not waves:
            return False
        asked = self.ids_in(requests) & answered  # ``answered``: the ids of the ingested waves
        if not asked:
            return False
        failed: set[str] | None = None
        again = False
        for wave in waves:
            lost = self.ids([wave]) & asked
            if lost:
                if failed is None:
                    failed = self.failed_ids()
                lost -= failed
            if not lost:
                continue
            self.recovered.add(wave.n)
            assert wave.batch_id is not None
            try:
                async with self.waiting():
                    info = await self.service.retrieve(wave.batch_id)
                    report = await self.read_output(wave, info, lost)
            except ProviderError as err:
                if err.kind != "bad_request":  # the provider may answer later: the same command retries
                    raise
                self.say(
                    f"wave {wave.n}: {len(lost)} answer(s) the response cache no longer holds cannot be read "
                    f"again from {wave.batch_id} ({err}): they are asked again"
                )
                continue
            self.say(
                f"wave {wave.n}: {report.answers} of {len(lost)} answer(s) the response cache no longer holds "
                f"read again from {wave.batch_id}"
            )
            again = again or report.answers + report.failed > 0
        return again

    def ids_in(self, requests: Path) -> set[str]:
        """The custom_ids of a request file (a pass's)."""
        return self.ids([Wave(n=-1, file=requests.name, lines=0, bytes=0)])

    def failed_ids(self) -> set[str]:
        """The custom_ids in the run's failure logs (this one and those ``--retry-failed`` set aside)."""
        from reljudge.llm.batch.failures import FailureLog

        out = set(self.session.failures.ids())
        for path in self.session.batch_dir.glob("failures.*.jsonl"):
            out.update(FailureLog(path).ids())
        return out

    def progress(self, waves: list[Wave]) -> None:
        """One line of progress (counts from the batch objects), when something changed."""
        total = sum(w.lines for w in waves)
        done = sum(min(w.completed + w.failed, w.lines) for w in waves)
        failed = sum(min(w.failed, w.lines) for w in waves)
        states = ", ".join(f"{w.n}:{w.status}" for w in waves[:8]) + (" …" if len(waves) > 8 else "")
        line = f"batches: {done}/{total} request(s) done, {failed} failed ({states})"
        if line != self._last:
            self._last = line
            self.say(line)


def _stderr(text: str) -> None:
    print(text, file=sys.stderr, flush=True)
