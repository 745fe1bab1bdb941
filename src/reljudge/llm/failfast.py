"""Fail fast: the canary gate, and the decision that a provider cannot serve a job.

With ``ClientConfig.fail_fast`` (on by default) the first request to the provider is a *canary*:
until it has finished (with its retries) the other requests wait (cache hits do not), so a
misconfigured job sends one request, not the pool; a cancelled canary hands over to the next
waiter. The client aborts after an authentication error (401/403) or a 404 (model or endpoint not
found); when the canary cannot reach the server (connection/timeout after all its attempts, nothing
ever succeeded); or after ``abort_after`` consecutive final failures of a permanent kind (a 4xx
other than context length and content filter) or of connection/timeout, with no success between.
The call whose failure decides it returns its failed result, as always; every later call, and
every call still waiting or in flight, raises the same `ProviderAbort` (see `LLMClient.aborted`),
whose ``hint`` (`abort_hint`) says what to check (a missing ``/v1``, the API key, whether the
server runs).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from reljudge.llm.backends import capabilities
from reljudge.llm.backends.base import normalise_base_url
from reljudge.llm.types import RETRYABLE_KINDS, ChatResult, ClientConfig, ProviderAbort, ProviderError

log = logging.getLogger("reljudge.llm")

#: failure kinds that count towards ``abort_after`` as permanent (besides any other 4xx of a kind
#: not listed in ``_NOT_PERMANENT_KINDS``)
_PERMANENT_KINDS = frozenset({"bad_request", "auth"})
#: never a reason to abort: a problem of one prompt or one answer, or a transient one
_NOT_PERMANENT_KINDS = frozenset({"context_length", "content_filter", "invalid_response", *RETRYABLE_KINDS})

#: one network call with its retries: (its result, the final provider error or None)
NetworkCall = Callable[[], Awaitable[tuple[ChatResult, ProviderError | None]]]


class FailFast:
    """The fail-fast state of one client: the canary gate and what decides an abort.

    ``redact`` makes a provider's message fit to keep (the client's known secrets masked)."""

    def __init__(
        self, config: ClientConfig, backend_name: str, model: str, redact: Callable[[str], str]
    ) -> None:
        self.config = config
        self.backend_name = backend_name
        self.model = model
        self._redact = redact
        self._gate = asyncio.Lock()
        self.gate_open = False
        #: the `ProviderAbort` that ended the job, or None
        self.aborted: ProviderAbort | None = None
        self._abort_signal: asyncio.Future[None] | None = None
        self._observed_any = False  # a network call has finished (its outcome was observed)
        self._succeeded = False  # a provider ever answered
        self._permanent_run = 0  # consecutive final permanent failures since the last success
        self._transport_run = 0  # consecutive final connection/timeout failures since the last success

    async def run(self, call: NetworkCall) -> ChatResult:
        """``call`` behind the canary gate, raced against the abort: when the client aborts, a
        call still waiting (at the gate, the limiter, the semaphore, a backoff) or in flight is
        cancelled and raises `ProviderAbort` at once."""
        if not self.config.fail_fast:
            return (await call())[0]
        if self.aborted is not None:
            raise self.aborted
        loop = asyncio.get_running_loop()
        if self._abort_signal is None or self._abort_signal.get_loop() is not loop:
            self._abort_signal = loop.create_future()  # (a client reused under a new event loop)
        signal = self._abort_signal
        task = asyncio.ensure_future(self._gated(call))
        try:
            await asyncio.wait((task, signal), return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            task.cancel()
            raise
        if task.done():  # the call that decided an abort still returns its own result
            return task.result()
        task.cancel()
        await asyncio.wait((task,))  # let it unwind (close its connection) before raising
        assert self.aborted is not None
        raise self.aborted

    async def _gated(self, call: NetworkCall) -> ChatResult:
        canary = False
        if not self.gate_open:  # the first request is out: wait for its outcome
            await self._gate.acquire()
            if self.gate_open or self.aborted is not None:
                self._gate.release()
                if self.aborted is not None:
                    raise self.aborted
            else:
                canary = True
        try:
            result, error = await call()
        except BaseException:
            if canary:  # a cancelled canary: the next waiter becomes the canary
                self._gate.release()
            raise
        self._observe(error)
        if canary:
            self.gate_open = True
            self._gate.release()
        return result

    def _observe(self, error: ProviderError | None) -> None:
        """Decide from one finished network call (its final provider error, or None for an
        answer: ok, truncated or refused) whether the provider can serve the job."""
        first = not self._observed_any
        self._observed_any = True
        if error is None:  # an answer: the provider works
            self._succeeded = True
            self._permanent_run = self._transport_run = 0
            return
        kind, status = error.kind, error.status_code
        limit = self.config.abort_after
        if kind == "auth" or (status == 404 and kind not in _NOT_PERMANENT_KINDS):
            self._abort(error)
        elif kind in ("connection", "timeout"):
            self._transport_run += 1
            if (first and not self._succeeded) or self._transport_run >= limit:
                self._abort(error, run=self._transport_run)
        elif kind in _PERMANENT_KINDS or (
            status is not None and 400 <= status < 500 and kind not in _NOT_PERMANENT_KINDS
        ):
            self._permanent_run += 1
            if self._permanent_run >= limit:
                self._abort(error, run=self._permanent_run)

    def _abort(self, error: ProviderError, run: int = 1) -> None:
        if self.aborted is not None:
            return
        message = self._redact(error.message)
        if run > 1:
            message = f"{run} requests in a row failed; the last: {message}"
        hint = abort_hint(error, self.config, self.backend_name, self.model)
        self.aborted = ProviderAbort(error.kind, message, status_code=error.status_code, hint=hint)
        log.debug("aborting: %s", self.aborted)
        if self._abort_signal is not None and not self._abort_signal.done():
            self._abort_signal.set_result(None)


def abort_hint(error: ProviderError, config: ClientConfig, backend_name: str, model: str) -> str | None:
    """What to check, for the failures that usually mean a misconfiguration (the backend's own
    hints: `reljudge.llm.backends.capabilities`)."""
    backend = capabilities(backend_name)
    base = config.base_url
    where = normalise_base_url(base) or backend.default_address
    if error.kind == "auth":
        return f"check the API key ({backend.key_variable} / --api-key-env)"
    if error.status_code == 404:
        return backend.not_found_hint(base, model) or f"is the model {model!r} served at {where}?"
    if error.kind == "connection":
        return f"is the server running at {where}?"
    if error.kind == "timeout":
        return (
            f"the server at {where} did not answer within {config.timeout_s:g} s: "
            "is it the right address, and is it up?"
        )
    return None
