"""Request- and token-per-minute limits shared by all calls of one client.

`RateLimiter` holds two token buckets (RPM and TPM), each refilling continuously at
``limit / 60`` per second. A bucket holds at most `BURST_S` seconds' worth (at least one request,
or one request's tokens up to a minute's worth): a full bucket lets a few seconds of requests
through at once, never a whole minute's (a provider that enforces its per-minute limit over short
intervals, as most do, would refuse the rest of such a burst with 429s). A call first estimates its
tokens (prompt characters / 4 plus the completion budget), waits until both buckets can pay, and
afterwards `settle`s the difference with the real usage, so the TPM bucket tracks what the
provider counts. A request larger than the burst waits for a full bucket and leaves the rest as
debt, which later requests wait out, so the average stays at the limit. Waiters are served in
arrival order (one lock), so a large request cannot starve. ``clock`` and ``sleep``
(`time.monotonic`, `asyncio.sleep`) can be replaced, so that tests check the limiter's accounting
on a clock of their own instead of wall-clock margins.

Bounded waits: what a provider reports cannot stall the limiter. A request takes at most one
minute's worth (``capacity``), and the bucket goes at most one ``capacity`` into debt (through a
request or `settle`), so a request's own wait for the limiter is at most about a minute plus the
burst, under two minutes (`MAX_WAIT_S`), whatever usage a provider claims (a reported 10^12 tokens
would otherwise mean a wait of years); the wait is slept in steps of at most `WAIT_STEP_S`,
re-checking the buckets after each.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

#: the longest a request waits for its own tokens (a minute of debt plus the burst, rounded up)
MAX_WAIT_S = 120.0
#: the longest single sleep; the buckets are re-checked after each
WAIT_STEP_S = 60.0
#: the seconds' worth of requests or tokens a full bucket lets through at once
BURST_S = 3.0


class _Bucket:
    """``capacity``: one minute's worth (the most one request takes, and the deepest debt);
    ``burst``: the most the bucket holds (`BURST_S` seconds' worth)."""

    def __init__(self, per_minute: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.capacity = float(per_minute)
        self.rate = float(per_minute) / 60.0
        self.burst = min(self.capacity, max(1.0, self.rate * BURST_S))
        self.level = self.burst
        self.clock = clock
        self.stamp = clock()

    def refill(self) -> None:
        now = self.clock()
        self.level = min(self.burst, self.level + (now - self.stamp) * self.rate)
        self.stamp = now

    def wait_for(self, amount: float) -> float:
        """Seconds until ``amount`` (at most a full bucket) is available."""
        self.refill()
        need = min(amount, self.burst) - self.level
        return 0.0 if need <= 1e-9 else need / self.rate  # (a rounding error is no wait)

    def take(self, amount: float) -> None:
        """Take ``amount`` (at most a minute's worth; the bucket may go into debt, at most one
        capacity deep)."""
        self.level = max(-self.capacity, self.level - min(max(0.0, amount), self.capacity))


class RateLimiter:
    """Token buckets for requests/min and tokens/min (either may be None = unlimited)."""

    def __init__(
        self,
        rpm: float | None = None,
        tpm: float | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
    ) -> None:
        self._rpm = _Bucket(rpm, clock) if rpm else None
        self._tpm = _Bucket(tpm, clock) if tpm else None
        self._sleep = sleep
        self._lock = asyncio.Lock()
        self.waited_s = 0.0  # total time spent waiting for the limiter

    @property
    def active(self) -> bool:
        return self._rpm is not None or self._tpm is not None

    async def acquire(self, tokens: int = 0) -> None:
        if not self.active:
            return
        async with self._lock:
            while True:
                delay = 0.0
                if self._rpm is not None:
                    delay = max(delay, self._rpm.wait_for(1))
                if self._tpm is not None:
                    delay = max(delay, self._tpm.wait_for(tokens))
                if delay <= 0:
                    break
                delay = min(delay, WAIT_STEP_S)
                self.waited_s += delay
                await self._sleep(delay)
            if self._rpm is not None:
                self._rpm.take(1)
            if self._tpm is not None:
                self._tpm.take(tokens)

    def settle(self, estimated: int, actual: int) -> None:
        """Correct the TPM bucket once the real token count of a request is known.

        The debt is bounded: the level never goes below ``-capacity``, however many tokens a
        provider reports (see the module docstring)."""
        if self._tpm is not None:
            self._tpm.refill()
            level = self._tpm.level + max(0, estimated) - max(0, actual)
            self._tpm.level = max(-self._tpm.capacity, min(self._tpm.burst, level))


def estimate_tokens(prompt_chars: int, max_tokens: int | None) -> int:
    """Rough token estimate for the TPM limiter: ~4 characters per token, plus the answer budget
    (256 tokens when unbounded)."""
    return prompt_chars // 4 + 1 + (max_tokens if max_tokens is not None else 256)
