"""The mock server's own rate limit: requests per minute, tokens per minute and connections.

`ServerRateLimit` is what a provider's gateway does: each limit is a bucket that refills
continuously (``limit / 60`` per second) and holds ``burst_s`` seconds' worth (at least one
request / one request's tokens), so that, like hosted APIs that enforce a per-minute limit over
short intervals, a burst of a whole minute's budget is refused. ``max_connections`` bounds the
requests served at the same time. A refused request gets 429 with ``Retry-After`` (whole seconds,
at least 1) and the ``x-ratelimit-*`` headers OpenAI sends (``limit``, ``remaining`` and ``reset``
for requests and tokens); an admitted one gets the same ``x-ratelimit-*`` headers on its answer.
With ``rate_headers=False`` it sends none of them, only 429 + ``Retry-After``, as vLLM, Ollama and
most LiteLLM proxies do (the client must learn the limit from its 429s). ``clock`` can be replaced so that tests drive the limit on a clock of their own.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass
class Verdict:
    """The limit's answer to one request: admitted or not, the headers to send, and, when
    refused, which limit refused it."""

    admitted: bool
    headers: dict[str, str] = field(default_factory=dict)
    refused_by: str | None = None


class _Bucket:
    def __init__(self, per_minute: float, burst_s: float, least: float, now: float) -> None:
        self.limit = float(per_minute)
        self.rate = self.limit / 60.0
        self.capacity = max(least, self.rate * burst_s)
        self.level = self.capacity
        self.stamp = now

    def refill(self, now: float) -> None:
        self.level = min(self.capacity, self.level + max(0.0, now - self.stamp) * self.rate)
        self.stamp = now

    def wait_for(self, amount: float) -> float:
        need = min(amount, self.capacity) - self.level
        return 0.0 if need <= 0 else need / self.rate

    def reset_s(self) -> float:
        """Seconds until the bucket is full again."""
        return max(0.0, self.capacity - self.level) / self.rate


def _seconds(value: float) -> str:
    return f"{value:.3f}s"


class ServerRateLimit:
    """Requests/min, tokens/min (either None = unlimited) and concurrent requests (None = any)."""

    def __init__(
        self,
        rpm: float | None = None,
        tpm: float | None = None,
        max_connections: int | None = None,
        *,
        burst_s: float = 1.0,
        rate_headers: bool = True,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        for name, value in (("rpm", rpm), ("tpm", tpm), ("max_connections", max_connections)):
            if value is not None and value <= 0:
                raise ValueError(f"{name} must be > 0 or None, got {value}")
        if burst_s <= 0:
            raise ValueError(f"burst_s must be > 0, got {burst_s}")
        self.clock = clock
        self.rate_headers = rate_headers
        now = clock()
        self._requests = _Bucket(rpm, burst_s, 1.0, now) if rpm else None
        self._tokens = _Bucket(tpm, burst_s, 1.0, now) if tpm else None
        self.max_connections = max_connections
        self.in_flight = 0
        self.refused: dict[str, int] = {"requests": 0, "tokens": 0, "connections": 0}
        self.admitted = 0
        self._lock = threading.Lock()

    @property
    def active(self) -> bool:
        return self._requests is not None or self._tokens is not None or self.max_connections is not None

    def admit(self, tokens: int) -> Verdict:
        """Take one request costing ``tokens`` (prompt plus the answer budget) if every limit allows
        it; an admitted request must be `release`d once answered."""
        with self._lock:
            now = self.clock()
            for bucket in (self._requests, self._tokens):
                if bucket is not None:
                    bucket.refill(now)
            wait = 0.0
            refused_by = None
            if self.max_connections is not None and self.in_flight >= self.max_connections:
                refused_by, wait = "connections", 1.0
            if self._requests is not None and self._requests.wait_for(1) > 0:
                refused_by, wait = "requests", max(wait, self._requests.wait_for(1))
            if self._tokens is not None and self._tokens.wait_for(tokens) > 0:
                refused_by, wait = "tokens", max(wait, self._tokens.wait_for(tokens))
            if refused_by is None:
                self.in_flight += 1
                self.admitted += 1
                if self._requests is not None:
                    self._requests.level -= 1
                if self._tokens is not None:
                    self._tokens.level -= min(tokens, self._tokens.capacity)
            else:
                self.refused[refused_by] += 1
            headers = self._headers()
            if refused_by is not None:
                headers["Retry-After"] = str(max(1, math.ceil(wait)))
            return Verdict(refused_by is None, headers, refused_by)

    def release(self) -> None:
        with self._lock:
            self.in_flight = max(0, self.in_flight - 1)

    def _headers(self) -> dict[str, str]:
        out: dict[str, str] = {}
        if not self.rate_headers:
            return out
        for name, bucket in (("requests", self._requests), ("tokens", self._tokens)):
            if bucket is None:
                continue
            out[f"x-ratelimit-limit-{name}"] = str(int(bucket.limit))
            out[f"x-ratelimit-remaining-{name}"] = str(max(0, int(bucket.level)))
            out[f"x-ratelimit-reset-{name}"] = _seconds(bucket.reset_s())
        return out
