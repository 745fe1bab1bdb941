"""`LLMClient`: one async chat interface over the openai, ollama and litellm backends.

A call goes: build messages and effective params -> response cache -> (join an identical call
already in flight) -> RPM/TPM limiter -> concurrency semaphore -> backend request, retried by the
policy in `reljudge.llm.retry` -> classify (ok / truncated / refused / api_error) -> cache (ok only:
a cut-off answer is asked again by ``judge run --retry-failed``) -> `ChatResult`. `chat` never raises for provider errors.

Accounting: ``client.usage`` sums what this run spent at the provider (cache hits add nothing);
``client.stats`` counts chats, provider requests, cache hits, retries and final failures by kind.
``on_event(kind, info)`` is called with ``kind`` in {"retry", "failure", "truncated"} so a progress
display can tell "retrying" from "stuck".
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
import sqlite3
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from tenacity import RetryCallState

from reljudge.errors import InputError
from reljudge.llm.backends import Backend, create_backend
from reljudge.llm.backends.base import normalise_base_url
from reljudge.llm.cache import CacheKeys, ResponseCache
from reljudge.llm.limits import RateLimiter, estimate_tokens
from reljudge.llm.pricing import find_price, merge_prices, price_cost
from reljudge.llm.retry import make_retrying
from reljudge.llm.routing import resolve_model
from reljudge.llm.types import ChatResult, ClientConfig, Completion, Message, ProviderError, canonical_json
from reljudge.records import Usage, sha256_text

log = logging.getLogger("reljudge.llm")

EventCallback = Callable[[str, dict[str, Any]], Any]
_KEY_PATTERN = re.compile(r"\b(sk-[A-Za-z0-9_\-]{6,}|sk-ant-[A-Za-z0-9_\-]{6,})")


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
        self._inflight: dict[str, asyncio.Future[ChatResult]] = {}
        self._secrets = _collect_secrets(config.api_key)

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
        if self._cache is None and self.config.use_cache and self.config.cache_path is not None:
            self._cache = ResponseCache(self.config.cache_path)
        return self

    async def aclose(self) -> None:
        if self._backend is not None:
            await self._backend.aclose()
            self._backend = None
        if self._cache is not None:
            self._cache.close()
            self._cache = None

    async def __aenter__(self) -> LLMClient:
        return self.open()

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

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
        """
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
        digest = sha256_text(messages_json)  # = types.messages_sha256(msgs)
        key = self._keys.key(messages_json, effective)
        cache_key = key if self._cache is not None else None

        if self._cache is not None and not refresh:
            # a point read in WAL mode takes tens of microseconds: cheaper inline than a thread hop
            hit = self._cache.get(key)
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
        future: asyncio.Future[ChatResult] = asyncio.get_running_loop().create_future()
        self._inflight[key] = future
        try:
            result = await self._call(backend, msg_dicts, wire, effective, digest, start)
            if self._cache is not None and result.status == "ok":
                try:
                    await asyncio.to_thread(
                        self._cache.put, key, self.backend_name, self.model, _cache_value(result)
                    )
                except sqlite3.Error as err:  # a full disk or a locked file must not lose the answer
                    log.warning("could not store a response in the cache %s: %s", self.config.cache_path, err)
            future.set_result(result)
        finally:
            if not future.done():
                future.cancel()
            if self._inflight.get(key) is future:
                del self._inflight[key]
        self.usage = self.usage + result.usage
        return self._finish(result, msg_dicts, cache_key)

    def forget(self, result: ChatResult) -> bool:
        """Drop ``result``'s answer from the response cache (an answer the judge could not use,
        so that a later run asks again instead of replaying it). True when an entry was removed."""
        if self._cache is None or result.cache_key is None:
            return False
        try:
            return self._cache.delete(result.cache_key)
        except sqlite3.Error as err:
            log.warning("could not remove a response from the cache %s: %s", self.config.cache_path, err)
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
    ) -> ChatResult:
        cfg = self.config
        attempts = 0
        estimate = estimate_tokens(sum(len(m["content"]) for m in msg_dicts), effective.get("max_tokens"))

        async def one_attempt() -> Completion:
            nonlocal attempts
            waited = self._limiter.waited_s
            await self._limiter.acquire(estimate)
            self.stats.limiter_wait_s += self._limiter.waited_s - waited
            async with self._semaphore:
                attempts += 1
                self.stats.calls += 1
                try:
                    completion = await asyncio.wait_for(backend.complete(msg_dicts, wire), cfg.timeout_s)
                except TimeoutError:
                    raise ProviderError("timeout", f"no answer within {cfg.timeout_s:g} s") from None
            self._limiter.settle(estimate, completion.prompt_tokens + completion.completion_tokens)
            return completion

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
            return ChatResult(
                text="",
                status=status,
                error=self._redact(str(err)),
                error_kind=err.kind,
                usage=Usage(calls=attempts),
                latency_s=time.monotonic() - start,
                attempts=attempts,
                **base,
            )
        except Exception as err:  # a bug in a provider library must not kill a whole run
            log.warning("unexpected error from the %s backend: %r", self.backend_name, err)
            return ChatResult(
                text="",
                status="api_error",
                error=self._redact(f"unexpected {type(err).__name__}: {err}"),
                error_kind="other",
                usage=Usage(calls=attempts),
                latency_s=time.monotonic() - start,
                attempts=attempts,
                **base,
            )

        cost, known = price_cost(
            self._price, self.backend_name, completion.prompt_tokens, completion.completion_tokens
        )
        status, error, kind = "ok", None, None
        if completion.refusal or completion.finish_reason == "content_filter":
            status, kind = "refused", "content_filter"
            error = self._redact(completion.refusal or "the provider's content filter stopped the answer")
        elif completion.finish_reason == "length":
            status = "truncated"
            error = "the answer hit the token limit (finish_reason=length)"
        return ChatResult(
            text=completion.text,
            status=status,
            error=error,
            error_kind=kind,
            finish_reason=completion.finish_reason,
            usage=Usage(
                prompt_tokens=completion.prompt_tokens,
                completion_tokens=completion.completion_tokens,
                calls=attempts,
                cost_usd=cost,
            ),
            price_known=known,
            latency_s=time.monotonic() - start,
            attempts=attempts,
            logprobs=completion.logprobs,
            **base,
        )

    def _from_cache(
        self, hit: dict[str, Any], digest: str, effective: dict[str, Any], start: float
    ) -> ChatResult:
        _, known = price_cost(self._price, self.backend_name, 0, 0)
        return ChatResult(
            text=str(hit.get("text", "")),
            status=hit.get("status", "ok"),
            error=hit.get("error"),
            finish_reason=hit.get("finish_reason"),
            usage=Usage(
                prompt_tokens=int(hit.get("prompt_tokens", 0)),
                completion_tokens=int(hit.get("completion_tokens", 0)),
                calls=0,
                cost_usd=0.0,
            ),
            price_known=known,
            latency_s=time.monotonic() - start,
            cached=True,
            attempts=0,
            logprobs=hit.get("logprobs"),
            backend=self.backend_name,
            base_url=self._keys.base_url,
            model=self.model,
            messages_sha256=digest,
            params=effective,
        )

    def _finish(self, result: ChatResult, prompt: list[dict[str, str]], cache_key: str | None) -> ChatResult:
        result.prompt = prompt
        result.cache_key = cache_key
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

    def _redact(self, text: str) -> str:
        for secret in self._secrets:
            text = text.replace(secret, "***")
        return _KEY_PATTERN.sub("***", text)


def _collect_secrets(api_key: str | None) -> list[str]:
    secrets = {api_key} if api_key else set()
    for name, value in os.environ.items():
        if value and len(value) >= 8 and (name.endswith("_API_KEY") or name.endswith("_TOKEN")):
            secrets.add(value)
    return sorted(secrets, key=len, reverse=True)


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
