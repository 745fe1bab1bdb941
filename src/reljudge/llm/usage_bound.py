"""What one request could have cost: the bound a provider's reported usage is clamped to.

A request's *bound* is its most prompt tokens and its answer budget (the request's
``max_tokens`` / ``max_completion_tokens``, or `UNBOUNDED_ANSWER_TOKENS` without one). Its
prompt tokens are bounded in one of two ways:

- the model's own tokenizer (`reljudge.llm.tokens.TokenCounter` is exact: tiktoken) and the
  provider's own endpoint (no base URL): the tokenizer's count * `EXACT_MARGIN` + `EXACT_FIXED`
  tokens (room for chat-template tokens the count leaves out: names, a response format);
- otherwise (a model tiktoken does not know, or any server behind a base URL, whose tokenizer the
  model's name does not tell): the UTF-8 bytes of each message's role and content plus
  `MESSAGE_OVERHEAD` a message and `FIXED_OVERHEAD` (a chat template's special tokens and default
  system prompt). No tokenizer makes more tokens of a text than it has bytes (byte-level BPE,
  SentencePiece with byte fallback), so an honest provider never reports more.

`UsageBound.check` reads a completion's usage against the bound: usage above it is clamped to it
(anomaly ``"over"``), and a completion with no usage at all (no prompt and no completion tokens)
is anomaly ``"missing"``: it is charged its bound (`UsageBound.cost`), and the record says the
cost is an estimate (``Usage.estimated_usd``). The same bound is what ``--max-cost`` reserves
before the request is sent (`reljudge.llm.budget`), so a charge never exceeds its reservation.

An attempt whose outcome is unknown (`unknown_outcome`: the client timed out, the connection
dropped, or a 200 answer could not be read: the provider may bill it) is charged its bound too.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from reljudge.llm.types import Completion, ProviderError

#: the answer tokens a request without a token limit is bounded by (and reserved under the cap)
UNBOUNDED_ANSWER_TOKENS = 4096
#: an exact tokenizer's count is multiplied by this ...
EXACT_MARGIN = 1.1
#: ... plus these tokens (a provider's own chat template: names, a response format)
EXACT_FIXED = 16
#: the bytes bound's tokens per message beyond its role and content (a template's special tokens)
MESSAGE_OVERHEAD = 8
#: the bytes bound's tokens per request (BOS, the answer's priming, a template's default system prompt)
FIXED_OVERHEAD = 64
#: the anomalies `UsageBound.check` and the client count (`reljudge.llm.stats.ClientStats`)
ANOMALIES = ("missing", "over", "unknown_outcome")


@dataclass(frozen=True)
class UsageBound:
    """The most tokens one request could have used: ``prompt_tokens`` and ``answer_tokens``."""

    prompt_tokens: int
    answer_tokens: int

    def check(self, completion: Completion) -> Completion:
        """``completion`` with its usage within the bound; ``usage_anomaly`` says what was wrong
        (None: nothing). Cached and reasoning tokens stay parts of what they are part of."""
        prompt, answer = completion.prompt_tokens, completion.completion_tokens
        if prompt <= 0 and answer <= 0:
            return replace(completion, usage_anomaly="missing")
        if prompt <= self.prompt_tokens and answer <= self.answer_tokens:
            return completion
        prompt, answer = min(prompt, self.prompt_tokens), min(answer, self.answer_tokens)
        cached, reasoning = completion.cached_tokens, completion.reasoning_tokens
        return replace(
            completion,
            prompt_tokens=prompt,
            completion_tokens=answer,
            cached_tokens=None if cached is None else min(cached, prompt),
            reasoning_tokens=None if reasoning is None else min(reasoning, answer),
            usage_anomaly="over",
            reported_usage=(completion.prompt_tokens, completion.completion_tokens),
        )


def answer_budget(params: Mapping[str, Any]) -> int:
    """A request's answer budget: its token limit, or `UNBOUNDED_ANSWER_TOKENS` without one."""
    from reljudge.llm.backends.base import clamp_tokens

    limit = params.get("max_tokens", params.get("max_completion_tokens"))
    budget = clamp_tokens(limit) if limit is not None else 0
    return budget if budget > 0 else UNBOUNDED_ANSWER_TOKENS


def own_endpoint(base_url: str | None) -> bool:
    """Whether requests go to the provider's own endpoint (no base URL, none in the environment)."""
    return not base_url and not os.environ.get("OPENAI_BASE_URL")


def bytes_bound(messages: Sequence[Mapping[str, Any]]) -> int:
    """The prompt bound of a tokenizer not known (see the module docstring)."""
    total = FIXED_OVERHEAD
    from reljudge.llm.images import content_image_tokens, content_text

    for m in messages:
        content = m.get("content", "")
        total += MESSAGE_OVERHEAD + len(str(m.get("role", "")).encode()) + len(content_text(content).encode())
        total += content_image_tokens(content, bound=True)  # images: their bound (`reljudge.llm.images`)
    return total


def prompt_bound(messages: Sequence[Mapping[str, Any]], counter: Any, exact: bool) -> int:
    """The most prompt tokens of a request with these messages (see the module docstring):
    ``counter`` (a `TokenCounter`) is used when ``exact`` (the provider's own endpoint) and it
    is exact, else the bytes bound."""
    if exact and counter is not None and counter.exact:
        from reljudge.llm.images import content_image_tokens

        images = sum(content_image_tokens(m.get("content"), bound=True) for m in messages)
        if images:  # the tokenizer counts the images' estimate: their bound replaces it
            images -= sum(content_image_tokens(m.get("content")) for m in messages)
        return math.ceil(counter.messages(messages) * EXACT_MARGIN) + EXACT_FIXED + images
    return bytes_bound(messages)


def unknown_outcome(err: BaseException) -> bool:
    """Whether a failed attempt may have been billed: the client timed out, the connection
    failed with no HTTP status (it may have dropped after the request was sent), or a 200
    answer could not be read."""
    if not isinstance(err, ProviderError):
        return False
    if err.kind in ("timeout", "connection"):
        return err.status_code is None
    return err.kind == "invalid_response"
