"""Adaptive concurrency: how many requests a client keeps in flight, and how fast it sends them.

`AdaptiveConcurrency` is a pure controller driven by events (no clock of its own: the caller passes
``now``), so tests drive it with synthetic events. The policy (AIMD, as TCP and Netflix's
concurrency-limits do):

- it starts at a moderate level (``start``, at most the ceiling) and grows additively, by one
  slot per level's worth of healthy answers (about one per round trip), up to ``ceiling``;
- it backs off multiplicatively (``backoff``, 0.5) on a 429, and gently (``latency_backoff``, 0.9)
  when latency rises well above the best seen (``latency_factor`` times the lowest smoothed
  latency), at most once per level's worth of answers, so one burst of 429s is one back-off;
- it reads what providers send: ``x-ratelimit-limit-requests`` (per minute) sets a pace, a minimum
  spacing between sends of ``60 / (limit * pace_share)`` seconds, so that the client stays under
  the limit instead of learning it from 429s; ``x-ratelimit-remaining-requests`` or ``-tokens`` at
  0 stops growth;
- a ``Retry-After`` never freezes it: the level never drops below ``floor`` and the controller
  imposes no pause of its own; the retried request's own wait is capped by the retry policy.

Nothing a provider sends can break it: header values are parsed defensively and clamped.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: the response headers the controller reads (lower case); the backends keep only these
RATE_HEADERS = (
    "x-ratelimit-limit-requests",
    "x-ratelimit-remaining-requests",
    "x-ratelimit-limit-tokens",
    "x-ratelimit-remaining-tokens",
)
#: the largest requests-per-minute limit a header may set (beyond it, no pacing)
MAX_RPM = 1e7


def rate_headers(headers: Any) -> dict[str, str] | None:
    """The `RATE_HEADERS` of a response's headers (short strings), None when it sent none."""
    if headers is None:
        return None
    out: dict[str, str] = {}
    for name in RATE_HEADERS:
        try:
            value = headers.get(name)
        except Exception:  # a header mapping of an unexpected shape
            return None
        if value is not None:
            out[name] = str(value)[:32]
    return out or None


def _number(headers: Mapping[str, str] | None, name: str) -> float | None:
    if not headers:
        return None
    try:
        value = float(str(headers.get(name, "")).strip())
    except ValueError:
        return None
    return value if value == value and 0 <= value < float("inf") else None


class AdaptiveConcurrency:
    """The controller (module docstring). ``level`` is the number of requests allowed in flight."""

    def __init__(
        self,
        ceiling: int,
        *,
        start: int = 4,
        floor: int = 1,
        backoff: float = 0.5,
        latency_backoff: float = 0.9,
        latency_factor: float = 2.0,
        pace_share: float = 0.97,
    ) -> None:
        if ceiling < 1:
            raise ValueError(f"ceiling must be >= 1, got {ceiling}")
        self.ceiling = int(ceiling)
        self.floor = max(1, min(int(floor), self.ceiling))
        self._level = float(max(self.floor, min(start, self.ceiling)))
        self.backoff = backoff
        self.latency_backoff = latency_backoff
        self.latency_factor = latency_factor
        self.pace_share = pace_share
        self.interval_s = 0.0  # the pace: minimum seconds between sends (0 = none)
        self._next_send = 0.0
        self._since_cut = 0  # answers since the last back-off
        self._smoothed: float | None = None  # smoothed latency
        self._best: float | None = None  # the lowest smoothed latency seen
        self.peak = self.level
        self.backoffs = 0
        self.rate_limited = 0

    @property
    def level(self) -> int:
        return max(self.floor, min(self.ceiling, int(self._level)))

    def as_dict(self) -> dict[str, Any]:
        return {
            "mode": "adaptive",
            "ceiling": self.ceiling,
            "level": self.level,
            "peak": self.peak,
            "backoffs": self.backoffs,
            "rate_limited": self.rate_limited,
            "pace_rpm": round(60.0 / self.interval_s, 1) if self.interval_s > 0 else None,
        }

    # -- events ---------------------------------------------------------------------------------
    def send_delay(self, now: float) -> float:
        """Seconds to wait before sending a request at ``now`` under the pace; the send slot is
        taken (the next caller waits one interval more)."""
        if self.interval_s <= 0:
            return 0.0
        slot = max(now, self._next_send)
        self._next_send = slot + self.interval_s
        return slot - now

    def on_success(self, latency_s: float, headers: Mapping[str, str] | None = None) -> None:
        """A healthy answer that took ``latency_s`` seconds, with the provider's rate headers."""
        self._learn(headers)
        self._since_cut += 1
        latency = max(0.0, float(latency_s)) if latency_s == latency_s else 0.0
        self._smoothed = latency if self._smoothed is None else 0.8 * self._smoothed + 0.2 * latency
        self._best = self._smoothed if self._best is None else min(self._best, self._smoothed)
        if self._best > 0 and self._smoothed > self.latency_factor * self._best and self._may_cut():
            self._cut(self.latency_backoff)
            return
        exhausted = any(
            _number(headers, name) == 0
            for name in ("x-ratelimit-remaining-requests", "x-ratelimit-remaining-tokens")
        )
        if not exhausted:
            self._level = min(float(self.ceiling), self._level + 1.0 / max(1.0, self._level))
            self.peak = max(self.peak, self.level)

    def on_rate_limited(self, headers: Mapping[str, str] | None = None) -> None:
        """A 429 (whatever its ``Retry-After``: see the module docstring)."""
        self.rate_limited += 1
        self._learn(headers)
        if self._may_cut():
            self._cut(self.backoff)

    # -- internals ------------------------------------------------------------------------------
    def _may_cut(self) -> bool:
        return self.backoffs == 0 or self._since_cut >= self.level

    def _cut(self, factor: float) -> None:
        self._level = max(float(self.floor), self._level * factor)
        self._since_cut = 0
        self.backoffs += 1

    def _learn(self, headers: Mapping[str, str] | None) -> None:
        limit = _number(headers, "x-ratelimit-limit-requests")
        if limit is not None and 0 < limit <= MAX_RPM:
            self.interval_s = 60.0 / (limit * self.pace_share)


class AdaptiveGate:
    """An asyncio semaphore whose size is an `AdaptiveConcurrency`'s level (read at each acquire and
    release), with the controller's pace applied to every send. Waiters are served in order."""

    def __init__(self, controller: AdaptiveConcurrency) -> None:
        from collections import deque

        self.controller = controller
        self.in_use = 0
        self._waiters: deque[Any] = deque()

    async def acquire(self) -> None:
        import asyncio
        import time

        if self._waiters or self.in_use >= self.controller.level:
            waiter = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            try:
                await waiter  # `_wake` counts this request in `in_use` before waking it
            except BaseException:
                if waiter.done() and not waiter.cancelled():
                    self.release()  # woken, then cancelled: give the slot back
                elif waiter in self._waiters:
                    self._waiters.remove(waiter)
                raise
        else:
            self.in_use += 1
        delay = self.controller.send_delay(time.monotonic())
        if delay > 0:
            try:
                await asyncio.sleep(delay)
            except BaseException:
                self.release()
                raise

    def release(self) -> None:
        self.in_use = max(0, self.in_use - 1)
        self._wake()

    def _wake(self) -> None:
        while self._waiters and self.in_use < self.controller.level:
            waiter = self._waiters.popleft()
            if not waiter.done():
                self.in_use += 1
                waiter.set_result(None)
