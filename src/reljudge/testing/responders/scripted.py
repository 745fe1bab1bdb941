"""Scripted responders for `MockLLMServer`: fixed answers, errors, sequences (`Scripted`),
answers by how often a prompt was seen (`PerPrompt`), and a deterministic fault injector
(`FaultInjector`).
"""

from __future__ import annotations

import hashlib
import random
import threading
from collections.abc import Callable, Iterable
from dataclasses import replace

from reljudge.testing.exchange import MockReply, MockRequest, Responder


def fixed(text: str) -> Responder:
    """Always answer ``text``."""
    return lambda req: MockReply(text=text)


def echo(req: MockRequest) -> MockReply:
    """Answer with the last user message."""
    return MockReply(text=req.last_user)


def from_prompt(fn: Callable[[str], str]) -> Responder:
    """Answer ``fn(prompt)`` where prompt is all message contents joined by newlines."""
    return lambda req: MockReply(text=fn(req.prompt))


def error(
    status: int, message: str | None = None, *, retry_after: float | None = None, code: str | None = None
) -> MockReply:
    """An HTTP error reply (429 with ``retry_after`` sends the ``Retry-After`` header)."""
    headers = {"Retry-After": f"{retry_after:g}"} if retry_after is not None else {}
    return MockReply(status=status, error=message or f"mock HTTP {status}", error_code=code, headers=headers)


def rate_limited(retry_after: float | None = 1.0) -> MockReply:
    return error(429, "Rate limit reached (mock)", retry_after=retry_after, code="rate_limit_exceeded")


def server_error(status: int = 500) -> MockReply:
    return error(status, "The server had an error while processing your request (mock)")


def hang() -> MockReply:
    """Never answer (until the server stops or its ``hang_s`` passes)."""
    return MockReply(hang=True)


def truncated(text: str) -> MockReply:
    """Answer ``text`` with finish reason ``length``."""
    return MockReply(text=text, finish_reason="length")


def refused(message: str = "I can't help with that.") -> MockReply:
    """A content-filter stop (finish reason ``content_filter``) with a refusal message."""
    return MockReply(text="", finish_reason="content_filter", refusal=message)


def context_too_long() -> MockReply:
    return error(
        400,
        "This model's maximum context length is 128000 tokens. However, your messages resulted in 200000 tokens.",
        code="context_length_exceeded",
    )


class Scripted:
    """Answer with ``replies`` in order (str or `MockReply` or responder), then repeat the last.

    Thread-safe; ``Scripted([rate_limited(0.1), "ok"])`` makes the first call fail once.
    """

    def __init__(self, replies: Iterable[MockReply | str | Responder]) -> None:
        self.replies = list(replies)
        if not self.replies:
            raise ValueError("Scripted needs at least one reply")
        self._i = 0
        self._lock = threading.Lock()

    def __call__(self, req: MockRequest) -> MockReply | str:
        with self._lock:
            item = self.replies[min(self._i, len(self.replies) - 1)]
            self._i += 1
        return item if isinstance(item, str) else item(req)


class PerPrompt:
    """Answer by how many times the same prompt was seen: ``replies[seen]`` (last repeats).

    Unlike `Scripted` it is independent of the order concurrent requests arrive in.
    """

    def __init__(self, replies: Iterable[MockReply | str | Responder]) -> None:
        self.replies = list(replies)
        if not self.replies:
            raise ValueError("PerPrompt needs at least one reply")

    def __call__(self, req: MockRequest) -> MockReply | str:
        item = self.replies[min(req.seen, len(self.replies) - 1)]
        return item if isinstance(item, str) else item(req)


def _unit(*parts: object) -> float:
    """A deterministic number in [0, 1) from the parts."""
    digest = hashlib.sha256("\x1f".join(map(str, parts)).encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def garble(text: str, salt: str = "") -> str:
    """Deterministic nonsense of about the same length, with no digits (unparseable)."""
    rng = random.Random(hashlib.sha256(f"{salt}|{text}".encode()).digest())
    letters = [c for c in text if not c.isdigit()] or list("lorem ipsum")
    rng.shuffle(letters)
    return "~" + "".join(letters[: max(8, len(text))]).replace("#", "%")


class FaultInjector:
    """Wrap a responder and inject faults at given rates, deterministically.

    For each request the fault is drawn from a hash of (seed, request content, times this content
    was seen), so a retry of the same prompt gets a fresh draw (retries eventually succeed when
    all rates sum below 1) and a run is reproducible whatever the request order. Faults, in draw
    order: 429 (with ``Retry-After: retry_after``), 5xx, hang, garbled text, empty text.
    ``counts`` tallies injected faults by name.
    """

    FAULTS = ("429", "5xx", "hang", "garbled", "empty")

    def __init__(
        self,
        inner: Responder,
        *,
        rate_429: float = 0.0,
        rate_5xx: float = 0.0,
        rate_hang: float = 0.0,
        rate_garbled: float = 0.0,
        rate_empty: float = 0.0,
        seed: int = 0,
        retry_after: float | None = 0.0,
    ) -> None:
        rates = (rate_429, rate_5xx, rate_hang, rate_garbled, rate_empty)
        if any(r < 0 or r > 1 for r in rates) or sum(rates) > 1:
            raise ValueError(f"fault rates must be in [0, 1] and sum to at most 1, got {rates}")
        self.inner = inner
        self.rates = dict(zip(self.FAULTS, rates, strict=True))
        self.seed = seed
        self.retry_after = retry_after
        self.counts: dict[str, int] = dict.fromkeys(self.FAULTS, 0)
        self._lock = threading.Lock()

    def fault_for(self, req: MockRequest) -> str | None:
        u = _unit(self.seed, req.content_key, req.seen)
        edge = 0.0
        for name in self.FAULTS:
            edge += self.rates[name]
            if u < edge:
                return name
        return None

    def __call__(self, req: MockRequest) -> MockReply | str:
        fault = self.fault_for(req)
        if fault is not None:
            with self._lock:
                self.counts[fault] += 1
        if fault == "429":
            return rate_limited(self.retry_after)
        if fault == "5xx":
            return server_error(500 if _unit(self.seed, req.content_key, req.seen, "code") < 0.5 else 503)
        if fault == "hang":
            return hang()
        reply = self.inner(req)
        if isinstance(reply, str):
            reply = MockReply(text=reply)
        if fault == "garbled":
            return replace(reply, text=garble(reply.text, f"{self.seed}:{req.seen}"))
        if fault == "empty":
            return replace(reply, text="")
        return reply
