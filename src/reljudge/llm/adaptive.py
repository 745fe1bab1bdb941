"""Adaptive concurrency and pace: how many requests a client keeps in flight, and how fast it sends.

`AdaptiveConcurrency` is a pure controller driven by events (the caller passes ``now``; it defaults
to `time.monotonic`), so tests drive it with synthetic events on a clock of their own. It steers two
things, both AIMD (as TCP and Netflix's concurrency-limits do):

- the **level** (requests in flight): it starts at a moderate level (``start``, 8 -- the default
  ``--concurrency``, so a default client starts as ``fixed:8`` would -- and at most the ceiling), doubles per level's worth of healthy answers until the first back-off (slow start: a
  client with nothing to fear runs at its ceiling within a round trip or two), then grows
  additively, by one slot per level's worth of healthy answers, up to ``ceiling``; it is halved (``backoff``) on a *limit signal* (below) and cut gently
  (``latency_backoff``, 0.9) when latency rises well above the best seen (``latency_factor`` times
  the lowest smoothed latency), at most once per level's worth of answers;
- the **pace** (a minimum spacing between sends, ``interval_s``). A provider that sends
  ``x-ratelimit-limit-requests`` (per minute) sets it: ``60 / (limit * pace_share)`` seconds, so
  the client stays under the limit instead of learning it from 429s (that pace is never changed by
  the rules below); ``x-ratelimit-remaining-requests`` or ``-tokens`` at 0 stops the level's growth.
  A provider that answers 429 + ``Retry-After`` only (vLLM, Ollama, most LiteLLM proxies) has its
  pace learnt: there is none until the first limit signal; then the rate (requests/s) is set to
  ``rate_backoff`` (0.85) times the rate of healthy answers observed over the last
  ``rate_window_s`` seconds (what the provider actually admitted), grows additively on each healthy
  answer (``rate_growth``: about 6 % of the rate set at the cut per second, so a cut made from a
  short window at the start is made good within seconds), and an isolated 429
  takes ``background_ratio`` (9) growth steps back, never below the rate set at the cut: a client
  above the limit settles where about 1 in 10 responses is a 429 while the provider admits all it
  allows, and the retries that costs rarely fail (6 attempts in a row at 10 %: 1e-6).

**Limit signal.** A 429 is treated as a limit only when 429s cluster: at least ``signal_share``
(60 %) of the last ``signal_window`` (32) responses (429s and healthy answers; a window not yet
full counts as full, so 20 429s) are 429s. A provider rejecting requests at random (20 % 429s
spread evenly) practically never gets there (P ~ 1e-6 per window; at 50 % it did, 8 times in
200,000 simulated responses), so it costs no back-off and the client runs as fast
as a fixed concurrency; a client sending above a limit gets mostly 429s at once and reacts within
a few responses. Above a learnt pace, a retry refused again is a signal too (the pace is above
the limit and in step with it: cut before that request runs out of attempts). After a signal, the
responses of the requests still in flight (the old level's
worth) are not counted, so one burst is one signal.

**No thundering herd.** A limit signal with a ``Retry-After`` imposes a shared pause: no request
(first send or retry) is sent before that instant (capped at `MAX_PAUSE_S`); after it, sends are
spaced by the pace again rather than released at once. `AdaptiveGate` serves a retry before the
requests that have not been sent yet (``acquire(first=True)``), so a request that waited out its
``Retry-After`` keeps its place instead of queueing behind every other chat. A long ``Retry-After``
never freezes the client beyond the cap: the level never drops below ``floor``, the learnt rate
never below one request a minute.

Nothing a provider sends can break it: header values are parsed defensively and clamped.
"""

from __future__ import annotations

from collections import deque
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
#: the slowest learnt rate (requests/s): one request a minute
MIN_RATE = 1.0 / 60.0
#: the longest shared pause a ``Retry-After`` imposes on every send
MAX_PAUSE_S = 60.0


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
    """The controller (module docstring). ``level`` is the number of requests allowed in flight,
    ``interval_s`` the pace (minimum seconds between sends, 0 = none)."""

    def __init__(
        self,
        ceiling: int,
        *,
        start: int = 8,
        floor: int = 1,
        backoff: float = 0.5,
        latency_backoff: float = 0.9,
        latency_factor: float = 2.0,
        pace_share: float = 0.97,
        rate_backoff: float = 0.85,
        rate_growth: float = 0.06,
        background_ratio: float = 9.0,
        rate_window_s: float = 10.0,
        signal_window: int = 32,
        signal_least: int = 4,
        signal_share: float = 0.6,
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
        self.rate_backoff = rate_backoff
        self.rate_growth = rate_growth
        self.background_ratio = background_ratio
        self.rate_window_s = rate_window_s
        self.signal_least = signal_least
        self.signal_share = signal_share
        self._header_interval = 0.0  # the pace a rate header set (0 = none)
        self._rate: float | None = None  # the learnt rate, requests/s (None: no limit seen)
        self._rate_cut = 0.0  # the rate set at the last limit signal (growth unit and floor)
        self._recent: deque[int] = deque(maxlen=signal_window)  # 1 = a 429, 0 = a healthy answer
        self._answers: deque[float] = deque()  # when the healthy answers of the window came
        self._sends: deque[float] = deque()  # when the sends of the window went
        self._first_event: float | None = None
        self._first_answer: float | None = None
        self._ignore = 0  # responses still to leave out of the signal window (in flight at a signal)
        self._next_send = 0.0
        self.paused_until = 0.0  # no send before this instant (a limit signal's Retry-After)
        self._since_cut = 0  # answers since the last back-off
        self._smoothed: float | None = None  # smoothed latency
        self._best: float | None = None  # the lowest smoothed latency seen
        self.peak = self.level
        self.backoffs = 0
        self.rate_limited = 0
        self.limit_signals = 0

    @property
    def level(self) -> int:
        return max(self.floor, min(self.ceiling, int(self._level)))

    @property
    def interval_s(self) -> float:
        """The pace: minimum seconds between sends (0 = none); a rate header's pace first."""
        if self._header_interval > 0:
            return self._header_interval
        return 1.0 / self._rate if self._rate else 0.0

    def as_dict(self) -> dict[str, Any]:
        interval = self.interval_s
        return {
            "mode": "adaptive",
            "ceiling": self.ceiling,
            "level": self.level,
            "peak": self.peak,
            "backoffs": self.backoffs,
            "rate_limited": self.rate_limited,
            "limit_signals": self.limit_signals,
            "pace_rpm": round(60.0 / interval, 1) if interval > 0 else None,
            "pace_from": None if interval <= 0 else ("headers" if self._header_interval > 0 else "429s"),
        }

    # -- events ---------------------------------------------------------------------------------
    def send_delay(self, now: float) -> float:
        """Seconds to wait before sending a request at ``now`` under the pace and any shared pause;
        the send slot is taken (the next caller waits one interval more)."""
        self._note(self._sends, now)
        interval = self.interval_s
        earliest = max(now, self.paused_until)
        if interval <= 0:
            return earliest - now
        slot = max(earliest, self._next_send)
        self._next_send = slot + interval
        return slot - now

    def on_success(
        self, latency_s: float, headers: Mapping[str, str] | None = None, now: float | None = None
    ) -> None:
        """A healthy answer that took ``latency_s`` seconds, with the provider's rate headers."""
        self._learn(headers)
        now = _now(now)
        if self._first_answer is None:
            self._first_answer = now
        self._note(self._answers, now)
        self._observe(0)
        if self._rate is not None:  # additive increase of the learnt rate
            self._rate = min(MAX_RPM / 60.0, self._rate + self.rate_growth * self._rate_cut / self._rate)
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
        if not exhausted:  # slow start (one slot per answer) until the first back-off
            growth = 1.0 if self.backoffs == 0 else 1.0 / max(1.0, self._level)
            self._level = min(float(self.ceiling), self._level + growth)
            self.peak = max(self.peak, self.level)

    def on_rate_limited(
        self,
        headers: Mapping[str, str] | None = None,
        retry_after: float | None = None,
        now: float | None = None,
        attempt: int = 1,
    ) -> None:
        """A 429, with its rate headers and ``Retry-After`` seconds, on the request's ``attempt``-th
        send (module docstring)."""
        self.rate_limited += 1
        self._learn(headers)
        now = _now(now)
        counted = self._observe(1)
        if counted and (self._is_signal() or (attempt > 1 and self._rate is not None)):
            self._on_limit(now, retry_after)
        elif self._rate is not None:  # an isolated 429 above a learnt pace: a small step back
            step = self.background_ratio * self.rate_growth * self._rate_cut / self._rate
            self._rate = max(self._rate_cut, self._rate - step)

    # -- internals ------------------------------------------------------------------------------
    def _note(self, stamps: deque[float], now: float) -> None:
        if self._first_event is None:
            self._first_event = now
        stamps.append(now)
        while stamps and stamps[0] < now - self.rate_window_s:
            stamps.popleft()

    def _observe(self, refused: int) -> bool:
        """Count a response in the signal window; False while the responses of the requests in
        flight at the last signal are still coming back (they are left out)."""
        if self._ignore > 0:
            self._ignore -= 1
            return False
        self._recent.append(refused)
        return True

    def _is_signal(self) -> bool:
        refused = sum(self._recent)
        window = max(len(self._recent), self._recent.maxlen or 0)  # a window not yet full counts full
        return refused >= self.signal_least and refused >= self.signal_share * window

    def _on_limit(self, now: float, retry_after: float | None) -> None:
        """A limit signal: the level halves, the learnt rate is cut from what was observed, and
        a ``Retry-After`` pauses every send until its instant."""
        self.limit_signals += 1
        self._ignore = self.level  # the requests in flight answer from before the cut
        self._recent.clear()
        self._cut(self.backoff)
        if self._header_interval <= 0:
            observed = self._observed_rate(now)
            current = self._rate if self._rate is not None else observed
            rate = max(MIN_RATE, self.rate_backoff * min(current, observed))
            self._rate = self._rate_cut = rate
        if retry_after is not None and retry_after == retry_after and retry_after > 0:
            self.paused_until = max(self.paused_until, now + min(float(retry_after), MAX_PAUSE_S))

    def _observed_rate(self, now: float) -> float:
        """Healthy answers per second over the window (sends per second when there were none)."""
        for stamps in (self._answers, self._sends):
            while stamps and stamps[0] < now - self.rate_window_s:
                stamps.popleft()
        stamps = self._answers or self._sends
        first = self._first_event if self._first_event is not None else now
        if stamps and self._answers:  # from the first answer (not a canary's wait before the flood)
            first = max(first, self._first_answer if self._first_answer is not None else first)
        span = max(1.0, min(self.rate_window_s, now - first))
        return len(stamps) / span

    def _may_cut(self) -> bool:
        return self.backoffs == 0 or self._since_cut >= self.level

    def _cut(self, factor: float) -> None:
        self._level = max(float(self.floor), self._level * factor)
        self._since_cut = 0
        self.backoffs += 1

    def _learn(self, headers: Mapping[str, str] | None) -> None:
        limit = _number(headers, "x-ratelimit-limit-requests")
        if limit is not None and 0 < limit <= MAX_RPM:
            self._header_interval = 60.0 / (limit * self.pace_share)


def _now(now: float | None) -> float:
    import time

    return time.monotonic() if now is None else float(now)


class AdaptiveGate:
    """An asyncio semaphore whose size is an `AdaptiveConcurrency`'s level (read at each acquire and
    release), with the controller's pace and shared pause applied to every send. Waiters are served
    in order, retries first."""

    def __init__(self, controller: AdaptiveConcurrency) -> None:
        self.controller = controller
        self.in_use = 0
        self._waiters: deque[Any] = deque()

    async def acquire(self, first: bool = False) -> None:
        """Take a slot, then wait for the pace; ``first``: a retry, served before the requests
        not yet sent (it keeps its place)."""
        import asyncio
        import time

        if self._waiters or self.in_use >= self.controller.level:
            waiter = asyncio.get_running_loop().create_future()
            if first:
                self._waiters.appendleft(waiter)
            else:
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
