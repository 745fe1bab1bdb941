"""A hard cap on what a client spends at the provider (``judge run --max-cost USD``).

`CostBudget` accounts every network call twice: before it is sent, its *estimated* cost is
reserved; when its result is back, the reservation is replaced by the *real* cost the provider's
usage gives. A call has two estimates: its ``bound`` (the prompt's tokens and the answer's token
limit at the model's price) and its ``expected`` cost (the prompt and the longest answer seen so
far). A call is sent when what was spent, what is reserved by the calls in flight and its bound
fit under the cap. Near the cap, where the bound no longer fits, calls go one at a time: a call
is sent when nothing is in flight and what was spent plus its expected cost fit. One that does
not fit waits while other calls are in flight (their real cost is usually below their
reservation); when nothing is in flight and it still does not fit, the budget is exhausted: that
call and every later one raise `BudgetExhausted`, and no call is sent again.

So a job stops less than one call's expected cost below the cap, and goes over it only by as
much as one answer longer than any before it (or prompt tokens above their estimate) costs.
Calls in flight are never cancelled by the cap: each answer that was paid for is kept (cached,
recorded).

The budget lives on one event loop; `reserve` and `settle` are called from its tasks only.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable


class BudgetExhausted(Exception):
    """The next call would take the spending over the cap (``--max-cost``); nothing is in flight.

    ``cap``: the cap in USD; ``spent``: what was spent (earlier sessions included);
    ``next_cost``: the estimated cost of the call that did not fit."""

    def __init__(self, cap: float, spent: float, next_cost: float) -> None:
        self.cap = cap
        self.spent = spent
        self.next_cost = next_cost
        super().__init__(
            f"the cost cap is reached: ${spent:.4f} spent of --max-cost ${cap:.4f}; "
            f"the next request (~${next_cost:.4f}) would go over it"
        )


class CostBudget:
    """Spending under a cap: ``spent`` (settled, USD, from ``spent`` at the start: what earlier
    sessions paid), ``reserved`` (the estimates of the calls in flight), ``in_flight``."""

    def __init__(self, cap: float, spent: float = 0.0) -> None:
        if not (isinstance(cap, (int, float)) and math.isfinite(cap) and cap >= 0):
            raise ValueError(f"a cost cap must be a finite number of USD, 0 or more, got {cap!r}")
        self.cap = float(cap)
        self.spent = max(0.0, float(spent)) if math.isfinite(spent) else 0.0
        self.reserved = 0.0
        self.in_flight = 0
        self.exhausted: BudgetExhausted | None = None
        self._changed = asyncio.Event()

    def fits(self, bound: float, expected: float | None = None) -> bool:
        """Whether a call with these estimates may be sent now (see the module docstring)."""
        if self.spent + self.reserved + bound <= self.cap:
            return True
        expected = bound if expected is None else min(expected, bound)
        return self.in_flight == 0 and self.spent + expected <= self.cap

    async def reserve(self, bound: float, expected: float | Callable[[], float] | None = None) -> None:
        """Reserve ``bound`` USD for one call before sending it: at once when it fits (or, with
        nothing in flight, its ``expected`` cost does); else after calls in flight settle;
        `BudgetExhausted` when nothing is in flight and it does not fit (and for every call
        after that). ``expected`` may be a function, asked again each time the call is looked
        at (what answers cost is learnt while a call waits)."""
        bound = _finite(bound, self.cap + 1.0)
        estimate = expected
        while True:
            if callable(estimate):
                expected = _finite(estimate(), bound)
            else:
                expected = bound if estimate is None else _finite(estimate, bound)
            if self.exhausted is not None:
                raise self.exhausted
            if self.fits(bound, expected):
                self.reserved += bound
                self.in_flight += 1
                return
            if self.in_flight == 0:
                self.exhausted = BudgetExhausted(self.cap, self.spent, min(expected, bound))
                self._wake()
                raise self.exhausted
            changed = self._changed
            await changed.wait()

    def settle(self, bound: float, cost: float) -> None:
        """A reserved call is over: its reservation (``bound``, as reserved) goes, its real
        ``cost`` is spent (0 for a call that failed or was cancelled; clamped to a finite,
        non-negative number)."""
        self.reserved = max(0.0, self.reserved - _finite(bound, self.cap + 1.0))
        self.in_flight = max(0, self.in_flight - 1)
        if self.in_flight == 0:
            self.reserved = 0.0  # no rounding drift left behind
        if isinstance(cost, (int, float)) and math.isfinite(cost) and cost > 0:
            self.spent += float(cost)
        self._wake()

    def _wake(self) -> None:
        changed, self._changed = self._changed, asyncio.Event()
        changed.set()


def _finite(value: float, otherwise: float) -> float:
    """``value`` when it is a finite number (at least 0), else ``otherwise``."""
    if isinstance(value, (int, float)) and math.isfinite(value):
        return max(0.0, float(value))
    return otherwise
