"""Scripted token log-probabilities for `MockLLMServer`: answers whose tokens spell the text, with
a chosen probability distribution at the label token (``label-logprobs``), and a provider that
never returns log-probabilities (``no-logprobs``).

`scripted_logprobs` builds the list the server sends for one answer; tests give it a known
distribution and check the expected grade the judge computes from it.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from reljudge.testing.exchange import MockReply, MockRequest, Responder

__all__ = ["label_logprobs", "no_logprobs", "scripted_logprobs", "tokens_of"]

#: tokens that spell a text: each word or punctuation mark with the whitespace before it
_TOKENS = re.compile(r"\s*(?:\w+|[^\w\s])|\s+")


def tokens_of(text: str) -> list[str]:
    """``text`` cut into tokens whose concatenation is ``text``."""
    return _TOKENS.findall(text)


def scripted_logprobs(
    text: str, dist: Mapping[str, float], *, position: int | None = None
) -> list[dict[str, Any]]:
    """Token log-probabilities for ``text``: every token certain (logprob 0) except the label
    token -- ``position``, or the last token whose text (without its leading space) is a key of
    ``dist`` -- whose alternatives are the keys of ``dist`` (with the token's leading space) at
    log ``dist[key]``. Probabilities of 0 are left out of the list."""
    tokens = tokens_of(text)
    if position is None:
        hits = [i for i, t in enumerate(tokens) if t.strip() in dist]
        position = hits[-1] if hits else None
    items: list[dict[str, Any]] = []
    for i, token in enumerate(tokens):
        if i != position:
            items.append({"token": token, "logprob": 0.0, "top_logprobs": [{"token": token, "logprob": 0.0}]})
            continue
        space = token[: len(token) - len(token.lstrip())]
        tops = [
            {"token": space + key, "logprob": math.log(p)}
            for key, p in sorted(dist.items(), key=lambda kv: -kv[1])
            if p > 0
        ]
        chosen = dist.get(token.strip(), 0.0)
        items.append(
            {"token": token, "logprob": math.log(chosen) if chosen > 0 else -30.0, "top_logprobs": tops}
        )
    return items


def _reply(inner: Responder, req: MockRequest) -> MockReply:
    reply = inner(req)
    return MockReply(text=reply) if isinstance(reply, str) else reply


def _default_dist(req: MockRequest, text: str) -> dict[str, float]:
    """A deterministic distribution around the answer's last digit or yes/no word: the answer
    gets 0.6-0.9, the other grades of 0-3 (or the other word) share 80 % of the rest, and the
    word "maybe" (off every scale) the remaining 20 %."""
    words = [t.strip() for t in tokens_of(text) if t.strip()]
    chosen = next((w for w in reversed(words) if w in "0123" or w.lower() in ("yes", "no")), None)
    if chosen is None:
        return {}
    u = hashlib.sha256(req.content_key.encode()).digest()[0] / 255
    top = 0.6 + 0.3 * u
    if chosen.isdigit():
        others = [d for d in "0123" if d != chosen]
    else:
        others = ["No" if chosen.lower() == "yes" else "Yes"]
    dist = {chosen: top, "maybe": (1 - top) * 0.2}
    for other in others:
        dist[other] = (1 - top) * 0.8 / len(others)
    return dist


def label_logprobs(
    inner: Responder | None = None, dist: Callable[[MockRequest, str], Mapping[str, float]] | None = None
) -> Responder:
    """``inner``'s answers (default: auto) with log-probabilities from `scripted_logprobs`, the
    distribution at the label token given by ``dist(request, answer)`` (default: see
    `_default_dist`)."""
    from reljudge.testing.responders.hostile import _auto

    inner = inner or _auto()
    choose = dist or _default_dist

    def answer(req: MockRequest) -> MockReply:
        reply = _reply(inner, req)
        if reply.status != 200 or not reply.text:
            return reply
        return replace(reply, logprobs=scripted_logprobs(reply.text, choose(req, reply.text)))

    return answer


def no_logprobs(inner: Responder | None = None) -> Responder:
    """``inner``'s answers (default: auto) from a provider that never returns log-probabilities."""
    from reljudge.testing.responders.hostile import _auto

    inner = inner or _auto()
    return lambda req: replace(_reply(inner, req), logprobs=None)
