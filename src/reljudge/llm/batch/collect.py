"""The collect mode of `LLMClient` (``LLMClient(config, batch=BatchCollector(...))``).

In collect mode a chat is answered from the response cache as usual. A request whose batch line
failed (`FailureLog`) is answered with that failure (an ``api_error``, ``truncated`` or
``refused`` result, as the synchronous path would have made it), so that its item gets a record
that ``--retry-failed`` resubmits. Any other request is not sent: it is written to the pass's
request file as one batch line (``custom_id`` = its response-cache key, ``body`` = the request
body the synchronous path sends) and the call raises `Deferred`; the judges' fan-out
(`reljudge.judges.base.run_bounded`) drops that item for this pass, so it gets no record yet.

A request already in a live batch (``live``) is deferred without being collected again, and one
collected earlier in this pass is written once. An answer of one of this run's batches
(``fresh``) is no cache hit: its result counts one call at the batch price. A re-ask of an
unreadable answer (``refresh=True``) is its own request, under `refresh_key`, since the first
answer must stay readable until the item's record is written; the judge's `LLMClient.forget`
calls are kept and done by `BatchCollector.apply_forgets` once no pass defers anything.

Where the lines go is the sink's business (`reljudge.run.batch.requests`: one request file, or
shards by topic); a judge's chat names its topic in `REQUEST_TOPIC` for the sink that sorts by it.
"""

from __future__ import annotations

from collections.abc import Callable, Container
from contextvars import ContextVar
from dataclasses import replace
from typing import Any

from reljudge.llm.batch.failures import FailureLog
from reljudge.llm.batch.lines import request_line
from reljudge.llm.pricing import batch_price, price_cost
from reljudge.llm.results import ResultBuilder
from reljudge.llm.types import ChatResult, Completion, Deferred, ProviderError
from reljudge.records import Usage, sha256_text

#: the topic (query text) of the chat being made in this task, None when the chat names none
#: (set by `reljudge.judges.context.JudgeContext.chat`; read by a sink that sorts lines by topic)
REQUEST_TOPIC: ContextVar[str | None] = ContextVar("reljudge_request_topic", default=None)


def refresh_key(key: str) -> str:
    """The custom_id (and cache key) of the re-ask of the request ``key`` in a batch."""
    return sha256_text(f"refresh:{key}")


class BatchCollector:
    """What the client needs in collect mode (see the module docstring).

    ``sink`` receives the request lines (anything with ``write(bytes)``, e.g.
    `reljudge.run.batch.requests.RequestFile`);
    ``failures`` the failed lines of this run's batches; ``live`` the custom_ids of batches sent
    and not yet ingested; ``fresh`` those whose answers this run's batches brought."""

    def __init__(
        self,
        sink: Any,
        *,
        failures: FailureLog | None = None,
        live: Container[str] = frozenset(),
        fresh: Container[str] = frozenset(),
    ) -> None:
        self.sink = sink
        self.failures = failures
        self.live = live
        self.fresh = fresh
        self.deferred = 0  # chats deferred in this pass
        self.collected = 0  # request lines written in this pass
        self.waiting = 0  # deferred chats whose request is in a live batch
        self._seen: set[str] = set()  # custom_ids collected in this pass
        self._billed: set[str] = set()  # fresh answers counted as calls in this pass
        self._forget: set[str] = set()

    def new_pass(self, sink: Any) -> None:
        """Start another pass: new request lines go to ``sink``."""
        self.sink = sink
        self.deferred = self.collected = self.waiting = 0
        self._seen = set()
        self._billed = set()

    # -- the client's hooks -----------------------------------------------------------------
    def slot(self, key: str, refresh: bool) -> str:
        """The cache key and custom_id of a chat: its own, or `refresh_key` for a re-ask."""
        return refresh_key(key) if refresh else key

    def hit(self, key: str, result: ChatResult, results: ResultBuilder) -> ChatResult:
        """A cache hit; an answer this run's batches brought counts as the call that it was
        (once per pass), at the batch price."""
        if key not in self.fresh or key in self._billed:
            return result
        self._billed.add(key)
        return replace(result, cached=False, attempts=1, usage=_batch_usage(result.usage, results))

    def miss(
        self,
        key: str,
        body: Callable[[], dict[str, Any]],
        results: ResultBuilder,
        digest: str,
        params: dict[str, Any],
        start: float,
    ) -> ChatResult:
        """A chat the cache cannot answer: its batch failure, or `Deferred` (collected first)."""
        entry = self.failures.get(key) if self.failures is not None else None
        if entry is not None:
            return failed_result(entry, results, digest, params, start)
        self.deferred += 1
        if key in self.live:
            self.waiting += 1
        elif key not in self._seen:
            self._seen.add(key)
            self.sink.write(request_line(key, body()))
            self.collected += 1
        raise Deferred(key)

    def forget(self, key: str | None) -> bool:
        """Keep a judge's `LLMClient.forget` for `apply_forgets`."""
        if key is None:
            return False
        self._forget.add(key)
        return True

    def apply_forgets(self, forget: Callable[[str], Any]) -> int:
        """Drop the kept answers from the cache (``forget(key)``); how many."""
        keys, self._forget = self._forget, set()
        for key in keys:
            forget(key)
        return len(keys)


def _batch_usage(usage: Usage, results: ResultBuilder) -> Usage:
    cost, _ = price_cost(
        batch_price(results.price),
        results.backend,
        usage.prompt_tokens,
        usage.completion_tokens,
        usage.cached_tokens or 0,
    )
    return usage.model_copy(update={"calls": 1, "cost_usd": cost})


def failed_result(
    entry: dict[str, Any], results: ResultBuilder, digest: str, params: dict[str, Any], start: float
) -> ChatResult:
    """The result of a failed batch line (`reljudge.llm.batch.ingest.failure_entry`), built the way
    the synchronous path builds it: a provider error, or a completion that is not a good answer."""
    completion = entry.get("completion")
    if isinstance(completion, dict):
        done = Completion(
            text=str(completion.get("text") or ""),
            finish_reason=_str(completion.get("finish_reason")),
            prompt_tokens=_count(completion.get("prompt_tokens")),
            completion_tokens=_count(completion.get("completion_tokens")),
            refusal=_str(completion.get("refusal")),
        )
        result = results.answer(done, digest, params, 1, start)
        status = entry.get("status")
        if status in ("truncated", "refused") and result.status != status:  # an oversized answer
            error = _str(entry.get("error"))
            result = replace(result, status=status, error=error, error_kind=_str(entry.get("kind")))
        return replace(result, usage=_batch_usage(result.usage, results))
    failure = ProviderError(
        _str(entry.get("kind")) or "other",
        _str(entry.get("error")) or "the batch line failed",
        status_code=entry.get("status_code") if isinstance(entry.get("status_code"), int) else None,
    )
    return results.failure(failure, digest, params, 1, start)


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _count(value: Any) -> int:
    from reljudge.llm.backends.base import clamp_tokens

    return clamp_tokens(value)


__all__ = ["REQUEST_TOPIC", "BatchCollector", "Deferred", "failed_result", "refresh_key"]
