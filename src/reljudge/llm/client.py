"""`LLMClient`: one async chat interface over the openai, ollama and litellm backends.

A call goes: build messages and effective params -> response cache -> (join an identical call
already in flight) -> RPM/TPM limiter -> concurrency semaphore -> backend request, retried by the
policy in `reljudge.llm.retry` -> classify (ok / truncated / refused / api_error) -> cache (ok only:
a cut-off answer is asked again by ``judge run --retry-failed``) -> `ChatResult`. `chat` never raises for provider errors,
except `ProviderAbort` once the client has decided the provider cannot serve the job (fail fast).

Fail fast (``ClientConfig.fail_fast``, on by default; `reljudge.llm.failfast`): the first request
to the provider is a canary the others wait for, and the client gives up on a provider that
cannot serve the job (bad key, unknown model, no server), with a hint of what to check.

What a provider sends is bounded: bodies (`MAX_RESPONSE_BYTES`, in the backends), answer text
(`MAX_ANSWER_CHARS`: a longer answer keeps its beginning, ``status="truncated"``,
``oversized=True``), error messages (`MAX_ERROR_CHARS`), token counts (`MAX_TOKENS_PER_CALL`), and
limiter waits (`reljudge.llm.limits`). Secrets the client knows (the API key, secret environment
variables, the password and Basic credentials of a ``user:pass@`` base URL) are replaced by ``***``
in the answer, its logprobs and errors before anything is cached or returned.

The cache is optional equipment: a cache file that cannot be opened, read or written (damaged,
read-only, disk full) is reported once (a logging warning) and the job goes on without it (or
without storing); the file is left as it is (``judge cache clear --yes`` deletes a damaged one).

Accounting: ``client.usage`` sums what this run spent at the provider (cache hits add nothing);
``client.stats`` counts chats, provider requests, cache hits, retries and final failures by kind.
``on_event(kind, info)`` is called with ``kind`` in {"retry", "failure", "truncated"} so a progress
display can tell "retrying" from "stuck".
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from tenacity import RetryCallState

from reljudge.errors import InputError
from reljudge.io.redact import KnownSecrets
from reljudge.llm.backends import Backend, create_backend
from reljudge.llm.backends.base import clamp_tokens, clean_logprobs, normalise_base_url
from reljudge.llm.cache import CacheKeys, ResponseCache
from reljudge.llm.failfast import FailFast
from reljudge.llm.limits import RateLimiter, estimate_tokens
from reljudge.llm.pricing import find_price, merge_prices, price_cost
from reljudge.llm.retry import make_retrying
from reljudge.llm.routing import resolve_model
from reljudge.llm.types import (
    MAX_ANSWER_CHARS,
    MAX_ERROR_CHARS,
    ChatResult,
    ClientConfig,
    Completion,
    Message,
    ProviderAbort,
    ProviderError,
)
from reljudge.records import Usage, canonical_json, sha256_text

log = logging.getLogger("reljudge.llm")

EventCallback = Callable[[str, dict[str, Any]], Any]


@dataclass
class ClientStats:
    chats: int = 0  # chat() calls
    calls: int = 0  # requests sent to the provider (every attempt)
    cache_hits: int = 0  # answered from the persistent cache or by an identical call in flight
    retries: int = 0
    failures: Counter = field(default_factory=Counter)  # final failures by error kind
    statuses: Counter = field(default_factory=Counter)  # results by status
    unpriced_models: set = field(default_factory=set)
    limiter_wait_s: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "chats": self.chats,
            "calls": self.calls,
            "cache_hits": self.cache_hits,
            "retries": self.retries,
            "failures": dict(self.failures),
            "statuses": dict(self.statuses),
            "unpriced_models": sorted(self.unpriced_models),
            "limiter_wait_s": round(self.limiter_wait_s, 3),
        }


class LLMClient:
    """Async chat client. Use ``async with LLMClient(cfg) as client: await client.chat(msgs)``."""

    def __init__(self, config: ClientConfig, on_event: EventCallback | None = None) -> None:
        self.config = config
        self.backend_name, self.model = resolve_model(config.model)
        self.on_event = on_event
        self.usage = Usage()
        self.stats = ClientStats()
        self._prices = merge_prices(config.prices)
        self._price = find_price(self.model, self._prices)  # the model is fixed: look it up once
        self._keys = CacheKeys(self.backend_name, self.model, normalise_base_url(config.base_url))
        self._semaphore = asyncio.Semaphore(config.concurrency)
        self._limiter = RateLimiter(config.rpm, config.tpm)
        self._backend: Backend | None = None
        self._cache: ResponseCache | None = None
        self._cache_writable = True
        self._cache_warned = False
        self._inflight: dict[str, asyncio.Future[ChatResult]] = {}
        self._secrets = KnownSecrets(config.api_key, config.base_url)
        self._failfast = FailFast(config, self.backend_name, self.model, self._redact)

    # -- lifecycle ------------------------------------------------------------------------------
    def open(self) -> LLMClient:
        """Create the backend connection and open the cache (done by ``async with`` or lazily)."""
        if self._backend is None:
            try:
                self._backend = create_backend(
                    self.backend_name,
                    self.model,
                    base_url=self.config.base_url,
                    api_key=self.config.api_key,
                    timeout_s=self.config.timeout_s,
                    concurrency=self.config.concurrency,
                )
            except ValueError as err:
                raise InputError(self._redact(str(err))) from None
        if (
            self._cache is None
            and not self._cache_warned
            and self.config.use_cache
            and self.config.cache_path is not None
        ):
            try:
                self._cache = ResponseCache(self.config.cache_path)
            except (sqlite3.Error, OSError) as err:  # damaged, read-only, no room: go on without
                self._cache_trouble("opened", err)
        return self

    async def aclose(self) -> None:
        if self._backend is not None:
            await self._backend.aclose()
            self._backend = None
        if self._cache is not None:
            try:
                self._cache.close()
            except sqlite3.Error:
                pass
            self._cache = None

    async def __aenter__(self) -> LLMClient:
        return self.open()

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    @property
    def aborted(self) -> ProviderAbort | None:
        """The `ProviderAbort` that ended this client's job, or None."""
        return self._failfast.aborted

    # -- the call -------------------------------------------------------------------------------
    def effective_params(self, **overrides: Any) -> dict[str, Any]:
        """The decoding params a call with these overrides would send (``None`` removes one)."""
        backend = self.open()._backend
        assert backend is not None
        return backend.adapt_params(self._params(overrides))[1]

    async def chat(
        self, messages: Sequence[Message | Mapping[str, Any]], *, refresh: bool = False, **overrides: Any
    ) -> ChatResult:
        """Send one chat; returns a `ChatResult` (failures included, see its docstring).

        ``overrides`` replace decoding params for this call (temperature, seed, max_tokens,
        logprobs, top_logprobs or any provider param); ``name=None`` removes a param.
        ``refresh=True`` asks the provider again instead of answering from the cache (or from an
        identical call in flight); a good new answer replaces the cached one.
        Malformed messages raise ValueError/TypeError (a programming error, not a provider one).
        Raises `ProviderAbort` once the client has given up on the provider (module docstring).
        """
        if self._failfast.aborted is not None:
            raise self._failfast.aborted
        start = time.monotonic()
        msgs = [Message.coerce(m) for m in messages]
        if not msgs:
            raise ValueError("chat() needs at least one message")
        self.open()
        backend = self._backend
        assert backend is not None
        self.stats.chats += 1
        msg_dicts = [m.to_dict() for m in msgs]
        wire, effective = backend.adapt_params(self._params(overrides))
        # one canonical JSON of the messages for both hashes (provenance and cache key)
        messages_json = canonical_json(msg_dicts)
        digest = sha256_text(messages_json)  # = records.messages_sha256(msgs)
        key = self._keys.key(messages_json, effective)
        cache_key = key if self._cache is not None else None

        if self._cache is not None and not refresh:
            # a point read in WAL mode takes tens of microseconds: cheaper inline than a thread hop
            hit = self._cache_get(key)
            if hit is not None:
                return self._finish(self._from_cache(hit, digest, effective, start), msg_dicts, cache_key)

        pending = None if refresh else self._inflight.get(key)
        if pending is not None:  # an identical call is running: share its answer if it succeeds
            try:
                first: ChatResult | None = await asyncio.shield(pending)
            except asyncio.CancelledError:
                if not pending.cancelled():
                    raise  # this call was cancelled, not the one it waited for
                first = None
            if first is not None and first.status in ("ok", "truncated"):
                return self._finish(_as_cached(first, time.monotonic() - start), msg_dicts, cache_key)
            if self._failfast.aborted is not None:
                raise self._failfast.aborted
        future: asyncio.Future[ChatResult] = asyncio.get_running_loop().create_future()
        self._inflight[key] = future
        try:
            result = await self._failfast.run(
                lambda: self._call(backend, msg_dicts, wire, effective, digest, start, key)
            )
            future.set_result(result)
        finally:
            if not future.done():
                future.cancel()
            if self._inflight.get(key) is future:
                del self._inflight[key]
        self.usage = self.usage + result.usage
        return self._finish(result, msg_dicts, cache_key)

    async def _store(self, key: str, result: ChatResult) -> None:
        """Commit a good answer to the response cache (called while its request still holds its
        concurrency slot: see `_call`)."""
        if self._cache is None or not self._cache_writable or not _cacheable(result):
            return
        try:
            await asyncio.to_thread(self._cache.put, key, self.backend_name, self.model, _cache_value(result))
        except sqlite3.Error as err:  # a full disk or a locked file must not lose the answer
            self._cache_trouble("written", err, reads_too=False)

    def forget(self, result: ChatResult) -> bool:
        """Drop ``result``'s answer from the response cache (an answer the judge could not use,
        so that a later run asks again instead of replaying it). True when an entry was removed."""
        if self._cache is None or result.cache_key is None or not self._cache_writable:
            return False
        try:
            return self._cache.delete(result.cache_key)
        except sqlite3.Error as err:
            self._cache_trouble("written", err, reads_too=False)
            return False

    # -- internals ------------------------------------------------------------------------------
    def _params(self, overrides: Mapping[str, Any]) -> dict[str, Any]:
        params = self.config.decoding_params()
        for name, value in overrides.items():
            if value is None:
                params.pop(name, None)
            else:
                params[name] = value
        if not params.get("logprobs"):
            params.pop("logprobs", None)
            params.pop("top_logprobs", None)
        return params

    async def _call(
        self,
        backend: Backend,
        msg_dicts: list[dict[str, str]],
        wire: dict[str, Any],
        effective: dict[str, Any],
        digest: str,
        start: float,
        key: str,
    ) -> tuple[ChatResult, ProviderError | None]:
        """One call with its retries: (result, the final provider error or None).

        The concurrency slot of the attempt that brings an answer is held until the answer is
        committed to the response cache, so that at any moment at most ``concurrency`` answers
        are paid for but not yet durable: a process killed at any point (SIGKILL) pays again for
        no more than the requests in flight. (Failed attempts give their slot back at once, so a
        backoff never holds one.)"""
        cfg = self.config
        attempts = 0
        estimate = estimate_tokens(sum(len(m["content"]) for m in msg_dicts), effective.get("max_tokens"))
        holding = False  # the slot of the attempt that brought the answer

        async def one_attempt() -> Completion:
            nonlocal attempts, holding
            waited = self._limiter.waited_s
            await self._limiter.acquire(estimate)
            self.stats.limiter_wait_s += self._limiter.waited_s - waited
            await self._semaphore.acquire()
            try:
                attempts += 1
                self.stats.calls += 1
                try:
                    completion = await asyncio.wait_for(backend.complete(msg_dicts, wire), cfg.timeout_s)
                except TimeoutError:
                    raise ProviderError("timeout", f"no answer within {cfg.timeout_s:g} s") from None
            except BaseException:
                self._semaphore.release()
                raise
            holding = True  # released in `_call` once the answer is durable
            self._limiter.settle(estimate, completion.prompt_tokens + completion.completion_tokens)
            return completion

        try:
            result, error = await self._attempts(
                one_attempt, cfg, msg_dicts, effective, digest, start, lambda: attempts
            )
            if holding:
                await self._store(key, result)
            return result, error
        finally:
            if holding:
                self._semaphore.release()

    async def _attempts(
        self,
        one_attempt: Callable[[], Awaitable[Completion]],
        cfg: ClientConfig,
        msg_dicts: list[dict[str, str]],
        effective: dict[str, Any],
        digest: str,
        start: float,
        attempts_made: Callable[[], int],
    ) -> tuple[ChatResult, ProviderError | None]:
        """`one_attempt` with the retry policy, classified into a `ChatResult`."""

        def before_sleep(state: RetryCallState) -> None:
            self.stats.retries += 1
            err = state.outcome.exception() if state.outcome is not None else None
            wait = state.next_action.sleep if state.next_action is not None else 0.0
            self._emit(
                "retry",
                {
                    "kind": getattr(err, "kind", "other"),
                    "error": self._redact(str(err)),
                    "attempt": state.attempt_number,
                    "wait_s": round(float(wait), 3),
                    "model": cfg.model,
                    "messages_sha256": digest,
                },
            )

        base = {
            "backend": self.backend_name,
            "base_url": self._keys.base_url,
            "model": self.model,
            "messages_sha256": digest,
            "params": effective,
        }
        retrying = make_retrying(
            cfg.max_attempts, cfg.backoff_base_s, cfg.backoff_max_s, cfg.retry_after_max_s, before_sleep
        )
        try:
            completion: Completion | None = None
            async for attempt in retrying:
                with attempt:
                    completion = await one_attempt()
            assert completion is not None
        except ProviderError as err:
            status = "refused" if err.kind == "content_filter" else "api_error"
            failed = ChatResult(
                text="",
                status=status,
                error=self._redact(str(err)),
                error_kind=err.kind,
                usage=Usage(calls=attempts_made()),
                latency_s=time.monotonic() - start,
                attempts=attempts_made(),
                **base,
            )
            return failed, (None if status == "refused" else err)
        except Exception as err:  # a bug in a provider library must not kill a whole run
            log.warning(
                "unexpected error from the %s backend: %s", self.backend_name, self._redact(repr(err))
            )
            failed = ChatResult(
                text="",
                status="api_error",
                error=self._redact(f"unexpected {type(err).__name__}: {err}"),
                error_kind="other",
                usage=Usage(calls=attempts_made()),
                latency_s=time.monotonic() - start,
                attempts=attempts_made(),
                **base,
            )
            return failed, ProviderError("other", failed.error or "")

        cost, known = price_cost(
            self._price, self.backend_name, completion.prompt_tokens, completion.completion_tokens
        )
        text = self._secrets.answer(completion.text)
        oversized = len(text) > MAX_ANSWER_CHARS
        if oversized:
            text = text[:MAX_ANSWER_CHARS]
        status, error, kind = "ok", None, None
        if completion.refusal or completion.finish_reason == "content_filter":
            status, kind = "refused", "content_filter"
            error = self._redact(completion.refusal or "the provider's content filter stopped the answer")
        elif oversized:
            status = "truncated"
            error = (
                f"the answer was cut to its first {MAX_ANSWER_CHARS} characters "
                f"(the provider sent {len(completion.text)})"
            )
        elif completion.finish_reason == "length":
            status = "truncated"
            error = "the answer hit the token limit (finish_reason=length)"
        result = ChatResult(
            text=text,
            status=status,
            error=error,
            error_kind=kind,
            finish_reason=completion.finish_reason,
            usage=Usage(
                prompt_tokens=completion.prompt_tokens,
                completion_tokens=completion.completion_tokens,
                calls=attempts_made(),
                cost_usd=cost,
            ),
            price_known=known,
            latency_s=time.monotonic() - start,
            attempts=attempts_made(),
            logprobs=self._secrets.logprobs(completion.logprobs),
            oversized=oversized,
            **base,
        )
        return result, None

    def _from_cache(
        self, hit: dict[str, Any], digest: str, effective: dict[str, Any], start: float
    ) -> ChatResult:
        _, known = price_cost(self._price, self.backend_name, 0, 0)
        return ChatResult(
            text=self._secrets.answer(hit["text"]),
            status="ok",
            error=None,
            finish_reason=hit.get("finish_reason"),
            usage=Usage(
                prompt_tokens=hit["prompt_tokens"],
                completion_tokens=hit["completion_tokens"],
                calls=0,
                cost_usd=0.0,
            ),
            price_known=known,
            latency_s=time.monotonic() - start,
            cached=True,
            attempts=0,
            logprobs=self._secrets.logprobs(hit.get("logprobs")),
            backend=self.backend_name,
            base_url=self._keys.base_url,
            model=self.model,
            messages_sha256=digest,
            params=effective,
        )

    # -- the cache, which may fail ----------------------------------------------------------------
    def _cache_get(self, key: str) -> dict[str, Any] | None:
        """A valid cached entry for ``key`` (`_valid_entry`), or None: a miss, a damaged entry, or
        a cache that cannot be read (then the client goes on without it)."""
        assert self._cache is not None
        try:
            hit = self._cache.get(key)
        except sqlite3.Error as err:
            self._cache_trouble("read", err)
            return None
        return _valid_entry(hit) if hit is not None else None

    def _cache_trouble(self, what: str, err: BaseException, *, reads_too: bool = True) -> None:
        """Warn once that the cache cannot be used, and go on without it (``reads_too=False``:
        still read it, but store nothing more, e.g. on a full disk)."""
        path = self.config.cache_path
        if not self._cache_warned:
            self._cache_warned = True
            log.warning(
                "the response cache %s cannot be %s (%s); going on without %s. "
                "A damaged cache file can be deleted with: judge cache clear --cache %s --yes",
                path,
                what,
                self._redact(str(err) or type(err).__name__),
                "it" if reads_too else "storing answers",
                path,
            )
        self._cache_writable = False
        if reads_too and self._cache is not None:
            try:
                self._cache.close()
            except sqlite3.Error:
                pass
            self._cache = None

    def _finish(self, result: ChatResult, prompt: list[dict[str, str]], cache_key: str | None) -> ChatResult:
        result.prompt = prompt
        result.cache_key = cache_key if self._cache is not None else None
        self.stats.statuses[result.status] += 1
        if result.cached:
            self.stats.cache_hits += 1
        if not result.price_known:
            self.stats.unpriced_models.add(f"{result.backend}/{result.model}")
        if result.status in ("api_error", "refused"):
            self.stats.failures[result.error_kind or "other"] += 1
            self._emit(
                "failure",
                {
                    "kind": result.error_kind,
                    "status": result.status,
                    "error": result.error,
                    "attempts": result.attempts,
                    "model": self.config.model,
                    "messages_sha256": result.messages_sha256,
                },
            )
        elif result.status == "truncated" and not result.cached:
            self._emit("truncated", {"model": self.config.model, "messages_sha256": result.messages_sha256})
        return result

    def _emit(self, kind: str, info: dict[str, Any]) -> None:
        if self.on_event is None:
            return
        try:
            self.on_event(kind, info)
        except Exception as err:  # a display callback must not break the run
            log.warning("on_event callback failed: %r", err)

    # -- secrets ----------------------------------------------------------------------------------
    def _redact(self, text: str) -> str:
        """An error message fit to keep (`reljudge.io.redact.KnownSecrets.message`)."""
        return self._secrets.message(text, MAX_ERROR_CHARS)


def _valid_entry(hit: Any) -> dict[str, Any] | None:
    """A cached value as the client stores it, with its fields of the right types, or None (a
    value that is not a valid entry is a miss: never ``str()`` it into an answer)."""
    if not isinstance(hit, dict) or hit.get("status", "ok") != "ok":
        return None
    text = hit.get("text")
    if not isinstance(text, str) or len(text) > MAX_ANSWER_CHARS:
        return None
    finish = hit.get("finish_reason")
    logprobs = hit.get("logprobs")
    if logprobs is not None and not isinstance(logprobs, list):
        return None
    return {
        "text": text,
        "finish_reason": finish if isinstance(finish, str) else None,
        "prompt_tokens": clamp_tokens(hit.get("prompt_tokens")),
        "completion_tokens": clamp_tokens(hit.get("completion_tokens")),
        "logprobs": clean_logprobs(logprobs),
    }


def _cacheable(result: ChatResult) -> bool:
    """Only a whole, good answer is stored (and its fields are what `_valid_entry` accepts)."""
    return result.status == "ok" and not result.oversized and isinstance(result.text, str)


def _cache_value(result: ChatResult) -> dict[str, Any]:
    return {
        "text": result.text,
        "status": result.status,
        "error": result.error,
        "finish_reason": result.finish_reason,
        "prompt_tokens": result.usage.prompt_tokens,
        "completion_tokens": result.usage.completion_tokens,
        "logprobs": result.logprobs,
        "stored": time.time(),
    }


def _as_cached(result: ChatResult, latency_s: float) -> ChatResult:
    return replace(
        result,
        cached=True,
        attempts=0,
        latency_s=latency_s,
        usage=Usage(
            prompt_tokens=result.usage.prompt_tokens, completion_tokens=result.usage.completion_tokens
        ),
    )


def chat_sync(
    config: ClientConfig, messages: Sequence[Message | Mapping[str, Any]], **overrides: Any
) -> ChatResult:
    """One chat call from synchronous code (scripts, notebooks without a running loop)."""

    async def run() -> ChatResult:
        async with LLMClient(config) as client:
            return await client.chat(messages, **overrides)

    return asyncio.run(run())
