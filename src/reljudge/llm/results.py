"""The `ChatResult` of one call: built from a provider's completion (classified ok / truncated /
refused), from a final failure, or from a response-cache entry.

Every text that goes into a result passes the client's known secrets (`KnownSecrets`): the answer
and its logprobs by exact match, error messages also by pattern and cut to `MAX_ERROR_CHARS`. An
answer longer than `MAX_ANSWER_CHARS` keeps its beginning (``status="truncated"``,
``oversized=True``).

The ``model`` a provider names in its answer is checked (`served_model_problem`; on the openai
backend and for every batch line): an answer of another model than the one asked for (another
vLLM checkpoint, ``gpt-3.5-turbo-0125`` for ``gpt-4o``) is an ``api_error`` (``invalid_response``),
never cached nor a label, unless that model is accepted by name (``--accept-served-model NAME``).
A dated snapshot of the model asked for (``gpt-4o-2024-08-06`` for ``gpt-4o``), an Ollama tag
(``llama3.2:latest``) or the same name under a provider prefix is the same model; no ``model``
field is no mismatch.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, replace
from typing import Any

from reljudge.io.redact import KnownSecrets
from reljudge.llm.pricing import Price, batch_price, price_cost
from reljudge.llm.types import (
    MAX_ANSWER_CHARS,
    MAX_ERROR_CHARS,
    ChatResult,
    ChatStatus,
    Completion,
    ProviderError,
)
from reljudge.llm.usage_bound import UsageBound
from reljudge.records import Usage


@dataclass(frozen=True)
class ResultBuilder:
    """Builds the results of one client: its backend, model, base URL (as the cache key has it),
    price (None: not in the table) and known secrets."""

    backend: str
    model: str
    base_url: str
    price: Price | None
    secrets: KnownSecrets
    #: the ``model`` of an answer is checked against ``model`` (`served_model_problem`)
    check_served: bool = False
    #: served models accepted though they are not the one asked for (``--accept-served-model``)
    accept_served: frozenset[str] = frozenset()

    def served_problem(self, served: str | None) -> str | None:
        """Why an answer naming ``served`` is not one of this client's model (None: it is)."""
        return served_model_problem(self.model, served, self.accept_served)

    def redact(self, text: str) -> str:
        """An error message fit to keep (`KnownSecrets.message`, cut to `MAX_ERROR_CHARS`)."""
        return self.secrets.message(text, MAX_ERROR_CHARS)

    def _fixed(self, digest: str, params: dict[str, Any]) -> dict[str, Any]:
        return {
            "backend": self.backend,
            "base_url": self.base_url,
            "model": self.model,
            "messages_sha256": digest,
            "params": params,
        }

    def answer(
        self,
        completion: Completion,
        digest: str,
        params: dict[str, Any],
        attempts: int,
        start: float,
        bound: UsageBound | None = None,
    ) -> ChatResult:
        """The result of a completion: ok, refused (content filter) or truncated (too long an
        answer, or the token limit). A completion `UsageBound.check` found without usage costs
        its ``bound``; one with usage above it costs the bound's tokens; both are estimates
        (``Usage.estimated_usd``)."""
        cost, known = self.cost(completion, bound)
        text = self.secrets.answer(completion.text)
        oversized = len(text) > MAX_ANSWER_CHARS
        if oversized:
            text = text[:MAX_ANSWER_CHARS]
        status: ChatStatus = "ok"
        error: str | None = None
        kind: str | None = None
        if completion.refusal or completion.finish_reason == "content_filter":
            status, kind = "refused", "content_filter"
            error = self.redact(completion.refusal or "the provider's content filter stopped the answer")
        elif oversized:
            status = "truncated"
            error = (
                f"the answer was cut to its first {MAX_ANSWER_CHARS} characters "
                f"(the provider sent {len(completion.text)})"
            )
        elif completion.finish_reason == "length":
            status = "truncated"
            error = "the answer hit the token limit (finish_reason=length)"
        problem = self.served_problem(completion.model) if self.check_served else None
        if problem is not None:  # another model's answer: no label, not cached
            status, kind, error, text = "api_error", "invalid_response", self.redact(problem), ""
        return ChatResult(
            text=text,
            status=status,
            error=error,
            error_kind=kind,
            finish_reason=completion.finish_reason,
            usage=Usage(
                prompt_tokens=completion.prompt_tokens,
                completion_tokens=completion.completion_tokens,
                calls=attempts,
                cost_usd=cost,
                cached_tokens=completion.cached_tokens,
                reasoning_tokens=completion.reasoning_tokens,
                estimated_usd=cost if completion.usage_anomaly is not None else None,
            ),
            price_known=known,
            latency_s=time.monotonic() - start,
            attempts=attempts,
            logprobs=self.secrets.logprobs(completion.logprobs),
            oversized=oversized,
            **self._fixed(digest, params),
        )

    def cost(
        self, completion: Completion, bound: UsageBound | None = None, *, batch: bool = False
    ) -> tuple[float, bool]:
        """(what a completion costs, whether the price is known): its usage at the price (the
        batch price with ``batch``), or its ``bound`` when it reported no usage."""
        price = batch_price(self.price) if batch else self.price
        if completion.usage_anomaly == "missing" and bound is not None:
            return price_cost(price, self.backend, bound.prompt_tokens, bound.answer_tokens)
        return price_cost(
            price,
            self.backend,
            completion.prompt_tokens,
            completion.completion_tokens,
            completion.cached_tokens or 0,
        )

    def charge(self, bound: UsageBound, attempts: int) -> Usage:
        """What ``attempts`` attempts of unknown outcome are charged: their bound each, an estimate."""
        cost = price_cost(self.price, self.backend, bound.prompt_tokens, bound.answer_tokens)[0] * attempts
        return Usage(cost_usd=cost, estimated_usd=cost)

    def failure(
        self, error: ProviderError, digest: str, params: dict[str, Any], attempts: int, start: float
    ) -> ChatResult:
        """The result of a final provider error: refused (content filter) or api_error."""
        return ChatResult(
            text="",
            status="refused" if error.kind == "content_filter" else "api_error",
            error=self.redact(str(error)),
            error_kind=error.kind,
            usage=Usage(calls=attempts),
            latency_s=time.monotonic() - start,
            attempts=attempts,
            **self._fixed(digest, params),
        )

    def unexpected(
        self, error: Exception, digest: str, params: dict[str, Any], attempts: int, start: float
    ) -> ChatResult:
        """The result of an exception no backend should raise (a bug in a provider library)."""
        return ChatResult(
            text="",
            status="api_error",
            error=self.redact(f"unexpected {type(error).__name__}: {error}"),
            error_kind="other",
            usage=Usage(calls=attempts),
            latency_s=time.monotonic() - start,
            attempts=attempts,
            **self._fixed(digest, params),
        )

    def cached(self, hit: dict[str, Any], digest: str, params: dict[str, Any], start: float) -> ChatResult:
        """The result of a cache entry (`reljudge.llm.optional_cache.valid_entry`): no call, no cost; the token counts of the
        original answer kept for information."""
        _, known = price_cost(self.price, self.backend, 0, 0)
        return ChatResult(
            text=self.secrets.answer(hit["text"]),
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
            logprobs=self.secrets.logprobs(hit.get("logprobs")),
            **self._fixed(digest, params),
        )


#: a dated snapshot's suffix (``-2024-08-06``, ``-0613``, ``-20241022``) or an Ollama tag (``:latest``)
_SNAPSHOT = re.compile(r"(-\d{4}-\d{2}-\d{2}|-\d{4}|-\d{8}|:latest)")


def served_model_problem(
    requested: str, served: str | None, accepted: frozenset[str] = frozenset()
) -> str | None:
    """None when an answer naming ``served`` is an answer of ``requested`` (the same name, a dated
    snapshot of it, the same name under a provider prefix, no name at all, or a name in
    ``accepted``); else why not."""
    if served is None or served in accepted or _same_model(requested, served):
        return None
    shown = served[:100]
    return (
        f"the provider answered with model {shown!r}, not {requested!r}: not kept "
        f"(--accept-served-model {shown} accepts its answers)"
    )


def _same_model(requested: str, served: str) -> bool:
    a, b = requested.strip().lower(), served.strip().lower()
    for x, y in ((a, b), (b, a)):  # a provider prefix on either side (openai/gpt-4o, models/x)
        if x == y or x.endswith("/" + y):
            return True
        if x.startswith(y) and _SNAPSHOT.fullmatch(x[len(y) :]):
            return True
        tail = x.rsplit("/", 1)[-1]
        if "/" in x and tail.startswith(y) and _SNAPSHOT.fullmatch(tail[len(y) :]):
            return True
    return False


def shared(result: ChatResult, latency_s: float) -> ChatResult:
    """``result`` as the answer of an identical call that waited for it: a cache hit (no call,
    no cost)."""
    return replace(
        result,
        cached=True,
        attempts=0,
        latency_s=latency_s,
        usage=Usage(
            prompt_tokens=result.usage.prompt_tokens, completion_tokens=result.usage.completion_tokens
        ),
    )
