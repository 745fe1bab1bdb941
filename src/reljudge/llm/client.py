"""`LLMClient`: one async chat interface over the openai, ollama and litellm backends.

A call goes: build messages and effective params -> response cache -> (join an identical call
already in flight) -> RPM/TPM limiter -> concurrency semaphore -> backend request, retried by the
policy in `reljudge.llm.retry` -> classify (ok / truncated / refused / api_error) -> cache (ok only:
a cut-off answer is asked again by ``judge run --retry-failed``) -> `ChatResult`. `chat` never
raises for provider errors, except `ProviderAbort` once the client has decided the provider cannot
serve the job (fail fast).

Fail fast (``ClientConfig.fail_fast``, on by default; `reljudge.llm.failfast`): the first request
to the provider is a canary the others wait for, and the client gives up on a provider that
cannot serve the job (bad key, unknown model, no server), with a hint of what to check.

What a provider sends is bounded: bodies (`MAX_RESPONSE_BYTES`, in the backends), answer text
(`MAX_ANSWER_CHARS`: a longer answer keeps its beginning, ``status="truncated"``,
``oversized=True``), error messages (`MAX_ERROR_CHARS`), token counts (`MAX_TOKENS_PER_CALL`), and
limiter waits (`reljudge.llm.limits`). Secrets the client knows (the API key, secret environment
variables, the password and Basic credentials of a ``user:pass@`` base URL) are replaced by ``***``
in the answer, its logprobs and errors before anything is cached or returned
(`reljudge.llm.results`, with `reljudge.io.redact.KnownSecrets`).

The cache is optional equipment (`reljudge.llm.optional_cache`): a cache file that cannot be
opened, read or written is reported once and the job goes on without it (or without storing).

Collect mode (``LLMClient(config, batch=collector)``, `reljudge.llm.batch.collect`): a chat the
cache cannot answer is written as an OpenAI batch line and raises `Deferred` instead of being sent.

Accounting: ``client.usage`` sums what this run spent at the provider (cache hits add nothing);
``client.stats`` counts chats, provider requests, cache hits, retries and final failures by kind.
``on_event(kind, info)`` is called with ``kind`` in {"retry", "failure", "truncated"} so a progress
display can tell "retrying" from "stuck".
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from tenacity import RetryCallState

from reljudge.errors import InputError
from reljudge.io.redact import KnownSecrets
from reljudge.llm.adaptive import AdaptiveConcurrency, AdaptiveGate
from reljudge.llm.backends import Backend, create_backend
from reljudge.llm.backends.base import normalise_base_url
from reljudge.llm.budget import BudgetExhausted, CostBudget
from reljudge.llm.cache import CacheKeys
from reljudge.llm.failfast import FailFast
from reljudge.llm.images import content_chars
from reljudge.llm.limits import RateLimiter, estimate_tokens
from reljudge.llm.optional_cache import OptionalCache
from reljudge.llm.pricing import PriceTable, price_cost
from reljudge.llm.results import ResultBuilder, shared
from reljudge.llm.retry import make_retrying
from reljudge.llm.routing import resolve_model
from reljudge.llm.stats import ClientStats
from reljudge.llm.types import (
    ChatResult,
    ClientConfig,
    Completion,
    Message,
    ProviderAbort,
    ProviderError,
)
from reljudge.llm.usage_bound import (
    UNBOUNDED_ANSWER_TOKENS,
    UsageBound,
    answer_budget,
    own_endpoint,
    prompt_bound,
    unknown_outcome,
)
from reljudge.records import Usage, canonical_json, sha256_text

log = logging.getLogger("reljudge.llm")

EventCallback = Callable[[str, dict[str, Any]], Any]
__all__ = ["UNBOUNDED_ANSWER_TOKENS", "LLMClient", "chat_sync"]


class LLMClient:
    """Async chat client. Use ``async with LLMClient(cfg) as client: await client.chat(msgs)``."""

    def __init__(
        self,
        config: ClientConfig,
        on_event: EventCallback | None = None,
        *,
        budget: CostBudget | None = None,
        batch: Any = None,
    ) -> None:
        self.config = config
        #: the collect mode's `reljudge.llm.batch.BatchCollector` (requests are collected, not sent)
        self.batch = batch
        resolved = config.resolved if config.resolved is not None else resolve_model(config.model)
        #: the model as resolved (its backend's capabilities: ``resolved.capabilities``)
        self.resolved = resolved
        self.backend_name, self.model = resolved.backend, resolved.model
        self.on_event = on_event
        self.usage = Usage()
        self.stats = ClientStats()
        self._keys = CacheKeys(self.backend_name, self.model, normalise_base_url(config.base_url))
        #: the adaptive level's controller (`reljudge.llm.adaptive`), None for a fixed concurrency
        self.adaptive = AdaptiveConcurrency(config.concurrency) if config.adaptive else None
        self.stats.concurrency = self.adaptive or {"mode": "fixed", "level": config.concurrency}
        self._semaphore: Any = (
            AdaptiveGate(self.adaptive) if self.adaptive else asyncio.Semaphore(config.concurrency)
        )
        self._limiter = RateLimiter(config.rpm, config.tpm)
        self._backend: Backend | None = None
        self._inflight: dict[str, asyncio.Future[ChatResult]] = {}
        self._results = ResultBuilder(
            self.backend_name,
            self.model,
            self._keys.base_url,
            PriceTable.of(config.prices).quote(resolved).price,  # the model is fixed: look it up once
            KnownSecrets(config.api_key, config.base_url),
            # the openai backend's answers (and every batch line) name the model that served them
            check_served=resolved.capabilities.reports_served_model or batch is not None,
            accept_served=frozenset(config.accept_served_models),
        )
        self._failfast = FailFast(config, self.backend_name, self.model, self._results.redact)
        self._cache = OptionalCache(config.cache_path, config.use_cache, self._results.redact)
        self._tokens: Any = None  # the `TokenCounter` of the bounds and estimates (made once needed)
        #: the prompt bound counts with the tokenizer (else bytes): `reljudge.llm.usage_bound`
        self._exact_bound = own_endpoint(config.base_url)
        self._warned: set[str] = set()  # the usage anomalies warned about (once each)
        self._longest_answer = 0  # completion tokens of the longest answer yet (the cap's estimate)
        #: the cost cap (``max_cost_usd``, or ``budget``: one shared by several clients, e.g. all
        #: those of a sweep), None without one; `BudgetExhausted` once it is reached
        self.budget = budget
        if budget is None and config.max_cost_usd is not None:
            self.budget = CostBudget(config.max_cost_usd, config.spent_usd)

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
        self._cache.open()
        return self

    async def aclose(self) -> None:
        if self._backend is not None:
            await self._backend.aclose()
            self._backend = None
        self._cache.close()

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
        An image file whose bytes changed since its hash was taken raises
        `reljudge.llm.images.ImageChanged` before anything is sent (the caller records the item).
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
        msg_dicts = [m.to_dict() for m in msgs]  # image parts by their SHA-256 (`reljudge.llm.images`)
        images = any(m.has_images for m in msgs)
        if images and not self.resolved.capabilities.sends_images:
            raise InputError(
                f"the {self.backend_name} backend cannot send images: use an OpenAI-compatible server "
                "(openai/MODEL with --base-url) or litellm/PROVIDER/MODEL"
            )
        wire, effective = backend.adapt_params(self._params(overrides))
        # one canonical JSON of the messages for both hashes (provenance and cache key)
        messages_json = canonical_json(msg_dicts)
        digest = sha256_text(messages_json)  # = records.messages_sha256(msgs)
        key = self._keys.key(messages_json, effective)
        if self.batch is not None:  # collect mode (`reljudge.llm.batch.collect`): a re-ask has its own key
            key, refresh = self.batch.slot(key, refresh), False
        cache_key = key if self._cache.db is not None else None
        result: ChatResult | None  # the answer, once there is one

        if self._cache.db is not None and not refresh:
            # a point read in WAL mode takes tens of microseconds: cheaper inline than a thread hop
            hit = self._cache.get(key)
            if hit is None and self._cache.db is not None:  # one an earlier version stored (first format)
                legacy = self._keys.legacy(messages_json, effective)
                hit = self._cache.get(legacy)
                if hit is not None:
                    key = cache_key = legacy
            if hit is not None:
                result = self._results.cached(hit, digest, effective, start)
                result = result if self.batch is None else self.batch.hit(key, result, self._results)
                return self._finish(result, msg_dicts, cache_key)
        if self.config.cache_only:  # an offline replay: nothing is sent
            raise ProviderAbort(
                "cache_miss",
                f"--cache-only: the response cache holds no answer for this request (messages {digest[:12]}, "
                f"model {self.config.model})",
                hint="run without --cache-only to ask the provider, or point --cache at the cache that holds the answers",
            )
        # the request's images, read (and checked against their hashes) only now that it is sent:
        # base64 only in the request itself (`reljudge.llm.images`: ImageChanged when one changed)
        sent_msgs = [m.to_wire() for m in msgs] if images else msg_dicts
        if self.batch is not None:  # answered by its batch failure, or collected: raises `Deferred`
            body = lambda: backend.batch_body(sent_msgs, wire)  # noqa: E731
            result = self.batch.miss(key, body, self._results, digest, effective, start)
            return self._finish(result, msg_dicts, cache_key)

        pending = None if refresh else self._inflight.get(key)
        if pending is not None:  # an identical call is running: share its answer if it succeeds
            try:
                first: ChatResult | None = await asyncio.shield(pending)
            except asyncio.CancelledError:
                if not pending.cancelled():
                    raise  # this call was cancelled, not the one it waited for
                first = None
            if first is not None and first.status in ("ok", "truncated"):
                return self._finish(shared(first, time.monotonic() - start), msg_dicts, cache_key)
            if self._failfast.aborted is not None:
                raise self._failfast.aborted
        future: asyncio.Future[ChatResult] = asyncio.get_running_loop().create_future()
        self._inflight[key] = future
        account = self._account(msg_dicts, effective)
        result = None
        try:
            result = await self._failfast.run(
                lambda: self._call(
                    backend, msg_dicts, wire, effective, digest, start, key, account, sent_msgs
                )
            )
            if account.unknown:  # attempts the provider may have billed: charged their bound
                result = replace(
                    result, usage=result.usage + self._results.charge(account.bound, account.unknown)
                )
            future.set_result(result)
        finally:
            if not future.done():
                future.cancel()
            if self._inflight.get(key) is future:
                del self._inflight[key]
            if account.reserved and self.budget is not None:
                # settled in the caller's task, which records the answer before it next yields:
                # a call waiting for the budget cannot end the job between answer and record.
                # A call cancelled during an attempt may have been sent: charged its bound.
                if result is not None:
                    cost = result.usage.cost_usd - account.settled_usd
                else:
                    cost = account.bound_usd if account.sending else 0.0
                self.budget.settle(account.bound_usd, cost)
            if result is not None and result.status in ("ok", "truncated"):
                self._longest_answer = max(self._longest_answer, result.usage.completion_tokens)
        self.usage = self.usage + result.usage
        return self._finish(result, msg_dicts, cache_key)

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Vectors of ``texts`` from the provider's embeddings endpoint (OpenAI-compatible
        backends only), in input order, with the client's rate limits, concurrency bound, timeout
        and retry policy. A final failure raises `ProviderError` with secrets redacted; a backend
        without embeddings is an `InputError`. (Vectors are not kept in the response cache: the
        caller keeps them, e.g. `reljudge.vectors.embedding_cache.TextEmbeddings`.)"""
        texts = [str(t) for t in texts]
        if not texts:
            return []
        self.open()
        backend = self._backend
        embed = getattr(backend, "embed", None)
        if embed is None:
            raise InputError(
                f"the {self.backend_name} backend has no embeddings endpoint; use an openai/ model"
            )
        cfg = self.config
        estimate = estimate_tokens(sum(len(t) for t in texts), 0)

        async def one_attempt() -> list[list[float]]:
            await self._limiter.acquire(estimate)
            async with self._semaphore:
                self.stats.calls += 1
                try:
                    vectors, tokens = await asyncio.wait_for(embed(texts), cfg.timeout_s)
                except TimeoutError:
                    raise ProviderError("timeout", f"no answer within {cfg.timeout_s:g} s") from None
            self._limiter.settle(estimate, tokens)
            self.usage = self.usage + Usage(prompt_tokens=tokens, calls=1)
            return vectors

        retrying = make_retrying(
            cfg.max_attempts, cfg.backoff_base_s, cfg.backoff_max_s, cfg.retry_after_max_s
        )
        try:
            async for attempt in retrying:
                with attempt:
                    if attempt.retry_state.attempt_number > 1:
                        self.stats.retries += 1
                    return await one_attempt()
        except ProviderError as err:
            self.stats.failures[err.kind] += 1
            raise ProviderError(
                err.kind, self._redact(err.message), status_code=err.status_code, retry_after=err.retry_after
            ) from None
        raise AssertionError("unreachable: tenacity re-raises or returns")

    def forget(self, result: ChatResult) -> bool:
        """Drop ``result``'s answer from the response cache (an answer the judge could not use,
        so that a later run asks again instead of replaying it). True when an entry was removed."""
        if self.batch is not None:  # collect mode: done once no pass defers anything
            return self.batch.forget(result.cache_key)
        return result.cache_key is not None and self._cache.forget(result.cache_key)

    # -- internals ------------------------------------------------------------------------------
    def _account(self, msg_dicts: list[dict[str, Any]], effective: Mapping[str, Any]) -> _Account:
        """A call's bound (`reljudge.llm.usage_bound`: what its usage is clamped to) and its
        estimates under the cost cap (`reljudge.llm.budget`): the bound at the model's price, and
        the expected cost (the prompt's token count, the longest answer seen so far: the answer
        budget before any was seen)."""
        price = self._results.price
        exact = self._exact_bound and (price is not None or self.budget is not None)
        if self._tokens is None and (exact or (price is not None and self.budget is not None)):
            from reljudge.llm.tokens import TokenCounter

            self._tokens = TokenCounter(self.model)
        answer = answer_budget(effective)
        bound = UsageBound(prompt_bound(msg_dicts, self._tokens, exact), answer)
        if price is None or self.budget is None:  # a free (local) model: nothing to reserve
            return _Account(bound)
        prompt = self._tokens.messages(msg_dicts)
        return _Account(
            bound, price_cost(price, self.backend_name, bound.prompt_tokens, answer)[0], prompt_count=prompt
        )

    def _expected(self, account: _Account) -> float:
        """A call's expected cost under the cap, as it stands now: its prompt's token count and
        the longest answer seen so far (its answer budget before any was seen)."""
        answer = account.bound.answer_tokens
        seen = min(self._longest_answer, answer) if self._longest_answer else answer
        return price_cost(self._results.price, self.backend_name, account.prompt_count, seen)[0]

    def _checked(self, completion: Completion, bound: UsageBound) -> Completion:
        """``completion`` with its usage within ``bound``; an anomaly counted and warned once."""
        completion = bound.check(completion)
        anomaly = completion.usage_anomaly
        if anomaly is not None:
            if anomaly == "missing":
                seen = "no usage (no prompt and no completion tokens)"
            else:
                prompt, answer = completion.reported_usage or (0, 0)
                seen = f"{prompt:,} prompt + {answer:,} completion tokens"
            self.usage_anomaly(
                anomaly,
                f"the provider reported {seen} for a request that could have used at most "
                f"{bound.prompt_tokens:,} prompt + {bound.answer_tokens:,} completion tokens; "
                + (
                    "such an answer is charged that bound (its cost is an estimate)"
                    if anomaly == "missing"
                    else "its usage is clamped to that bound (its cost is an estimate)"
                ),
            )
        return completion

    def usage_anomaly(self, kind: str, text: str, count: int = 1, warn: bool = True) -> None:
        """Count ``count`` usage anomalies of a kind (``ClientStats.usage_anomalies``,
        `reljudge.llm.usage_bound.ANOMALIES`) and warn about the kind once (``text``: what was seen)."""
        self.stats.usage_anomalies[kind] += count
        if warn and kind not in self._warned:
            self._warned.add(kind)
            log.warning("%s: %s (counted in the manifest; warned once)", self.config.model, text)

    def _guarded(
        self, one_attempt: Callable[[], Awaitable[Completion]], account: _Account
    ) -> Callable[[], Awaitable[Completion]]:
        """``one_attempt`` with the charge of attempts whose outcome is unknown
        (`reljudge.llm.usage_bound.unknown_outcome`): each is charged its bound, and under the cost
        cap the next attempt reserves its bound anew (the charge is settled first), so a call never
        spends more than it reserved."""

        async def attempt() -> Completion:
            if account.pending and account.reserved and self.budget is not None:
                account.pending = False
                self.budget.settle(account.bound_usd, account.bound_usd)
                account.settled_usd += account.bound_usd
                account.reserved = False
                await self.budget.reserve(account.bound_usd, lambda: self._expected(account))
                account.reserved = True
            account.sending = True
            try:
                return await one_attempt()
            except ProviderError as err:
                if unknown_outcome(err):
                    account.unknown += 1
                    account.pending = True
                    self.usage_anomaly(
                        "unknown_outcome",
                        f"an attempt ended without a known outcome ({self._redact(str(err))}); the provider "
                        "may bill it: such an attempt is charged what the request could have cost",
                        warn=account.bound_usd > 0,
                    )
                raise
            finally:
                account.sending = False

        return attempt

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
        msg_dicts: list[dict[str, Any]],
        wire: dict[str, Any],
        effective: dict[str, Any],
        digest: str,
        start: float,
        key: str,
        account: _Account,
        sent_msgs: list[dict[str, Any]] | None = None,
    ) -> tuple[ChatResult, ProviderError | None]:
        """One call with its retries: (result, the final provider error or None).

        The concurrency slot of the attempt that brings an answer is held until the answer is
        committed to the response cache, so that at any moment at most ``concurrency`` answers
        are paid for but not yet durable: a process killed at any point (SIGKILL) pays again for
        no more than the requests in flight. (Failed attempts give their slot back at once, so a
        backoff never holds one.)"""
        if self.budget is not None:  # the cost cap: reserve this call's bound first
            # (past the fail-fast gate: a call waiting for the first request holds no reservation,
            # so the first request's retries never wait for calls that wait for it)
            await self.budget.reserve(account.bound_usd, lambda: self._expected(account))
            account.reserved = True
        cfg = self.config
        attempts = 0
        estimate = estimate_tokens(
            sum(content_chars(m["content"]) for m in msg_dicts), effective.get("max_tokens")
        )
        holding = False  # the slot of the attempt that brought the answer
        sent = start  # when the last attempt was sent: latency_s is the provider's time from then

        async def one_attempt() -> Completion:
            nonlocal attempts, holding, sent
            waited = self._limiter.waited_s
            await self._limiter.acquire(estimate)
            self.stats.limiter_wait_s += self._limiter.waited_s - waited
            if self.adaptive is not None:  # a retry keeps its place (`AdaptiveGate`)
                await self._semaphore.acquire(first=attempts > 0)
            else:
                await self._semaphore.acquire()
            try:
                attempts += 1
                sent = time.monotonic()  # the timeout, too, runs from here: never the wait for a slot
                self.stats.calls += 1
                try:
                    request = sent_msgs if sent_msgs is not None else msg_dicts
                    completion = await asyncio.wait_for(backend.complete(request, wire), cfg.timeout_s)
                except TimeoutError:
                    raise ProviderError("timeout", f"no answer within {cfg.timeout_s:g} s") from None
                if self.adaptive is not None:
                    self.adaptive.on_success(time.monotonic() - sent, completion.rate_headers)
            except BaseException as err:
                if self.adaptive is not None and getattr(err, "kind", None) == "rate_limit":
                    self.adaptive.on_rate_limited(
                        getattr(err, "rate_headers", None),
                        getattr(err, "retry_after", None),
                        attempt=attempts,
                    )
                self._semaphore.release()
                raise
            holding = True  # released in `_call` once the answer is durable
            completion = self._checked(completion, account.bound)
            self._limiter.settle(estimate, completion.prompt_tokens + completion.completion_tokens)
            return completion

        try:
            result, error = await self._attempts(
                self._guarded(one_attempt, account),
                cfg,
                msg_dicts,
                effective,
                digest,
                lambda: sent,
                lambda: attempts,
                account.bound,
            )
            if holding:  # commit the answer while its slot is held
                await self._cache.store(key, self.backend_name, self.model, result)
            return result, error
        finally:
            if holding:
                self._semaphore.release()

    async def _attempts(
        self,
        one_attempt: Callable[[], Awaitable[Completion]],
        cfg: ClientConfig,
        msg_dicts: list[dict[str, Any]],
        effective: dict[str, Any],
        digest: str,
        sent: Callable[[], float],
        attempts_made: Callable[[], int],
        bound: UsageBound | None = None,
    ) -> tuple[ChatResult, ProviderError | None]:
        """`one_attempt` with the retry policy, classified into a `ChatResult` whose ``latency_s``
        runs from ``sent()``: when the last attempt was sent (after any wait for a slot)."""

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
            failed = self._results.failure(err, digest, effective, attempts_made(), sent())
            return failed, (None if failed.status == "refused" else err)
        except BudgetExhausted:  # the cap, reached by a retry after an attempt of unknown outcome
            raise
        except Exception as err:  # a bug in a provider library must not kill a whole run
            log.warning(
                "unexpected error from the %s backend: %s", self.backend_name, self._redact(repr(err))
            )
            failed = self._results.unexpected(err, digest, effective, attempts_made(), sent())
            return failed, ProviderError("other", failed.error or "")
        if completion.model is not None:
            self.stats.served_models[completion.model[:100]] += 1
        return self._results.answer(completion, digest, effective, attempts_made(), sent(), bound), None

    def _finish(self, result: ChatResult, prompt: list[dict[str, Any]], cache_key: str | None) -> ChatResult:
        result.prompt = prompt
        result.cache_key = cache_key if self._cache.db is not None else None
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
        """An error message fit to keep (`ResultBuilder.redact`)."""
        return self._results.redact(text)


@dataclass
class _Account:
    """One call under its bound: the bound, its cost under the cap (0 without one) and its
    prompt's token count (`LLMClient._expected`), whether a reservation is held, what was settled before the end (attempts of unknown
    outcome), how many attempts were of unknown outcome and whether the last one is not settled,
    and whether an attempt is under way."""

    bound: UsageBound
    bound_usd: float = 0.0
    prompt_count: int = 0  # the prompt's tokens as the tokenizer counts them (the expected cost)
    reserved: bool = False
    settled_usd: float = 0.0
    unknown: int = 0
    pending: bool = False
    sending: bool = False


def chat_sync(
    config: ClientConfig, messages: Sequence[Message | Mapping[str, Any]], **overrides: Any
) -> ChatResult:
    """One chat call from synchronous code (scripts, notebooks without a running loop)."""

    async def run() -> ChatResult:
        async with LLMClient(config) as client:
            return await client.chat(messages, **overrides)

    return asyncio.run(run())
