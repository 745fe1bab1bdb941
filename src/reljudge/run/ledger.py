"""The one account of what a job spent: usage and cost, cache hits, retries and re-asks.

Each is counted once, from the records the job writes (a record's provenance holds every call
made for it, see `reljudge.judges.reading.Answer`):

- a record's *calls* are one per order it was asked in (two for a pair judged in both orders);
- its *re-asks* are the calls made again because an answer could not be read (``extra.reasked``,
  one new call each);
- its *retries* are the attempts beyond those calls and re-asks;
- its usage and cost count unless it was answered from the response cache.

The client's events say *why* calls were retried or finally failed (``retry_causes``,
``failure_causes``); they are counted only when the job owns the client (a shared client, as in
a sweep, serves several jobs at once).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

from reljudge.records import Judgment, Usage


class UsageSum:
    """`Usage` summed with plain numbers (adding pydantic models per record is slow)."""

    __slots__ = (
        "prompt_tokens",
        "completion_tokens",
        "calls",
        "cost_usd",
        "cached_tokens",
        "reasoning_tokens",
        "estimated_usd",
    )

    def __init__(self) -> None:
        self.prompt_tokens = self.completion_tokens = self.calls = 0
        self.cost_usd = 0.0
        #: None until a record says how many (the provider reported them)
        self.cached_tokens: int | None = None
        self.reasoning_tokens: int | None = None
        self.estimated_usd: float | None = None  # of cost_usd, estimates (`Usage.estimated_usd`)

    def add(self, usage: Usage) -> None:
        self.prompt_tokens += usage.prompt_tokens
        self.completion_tokens += usage.completion_tokens
        self.calls += usage.calls
        self.cost_usd += usage.cost_usd
        if usage.cached_tokens is not None:
            self.cached_tokens = (self.cached_tokens or 0) + usage.cached_tokens
        if usage.reasoning_tokens is not None:
            self.reasoning_tokens = (self.reasoning_tokens or 0) + usage.reasoning_tokens
        if usage.estimated_usd is not None:
            self.estimated_usd = (self.estimated_usd or 0.0) + usage.estimated_usd

    def total(self) -> Usage:
        return Usage(
            prompt_tokens=self.prompt_tokens,
            completion_tokens=self.completion_tokens,
            calls=self.calls,
            cost_usd=self.cost_usd,
            cached_tokens=self.cached_tokens,
            reasoning_tokens=self.reasoning_tokens,
            estimated_usd=self.estimated_usd,
        )


def reasks(record: Judgment) -> int:
    """The calls made again for ``record`` because an answer could not be read (of every sample
    of a ``--samples`` record)."""
    samples = record.extra.get("samples")
    if isinstance(samples, list):
        return sum(len(s.get("reasked") or ()) for s in samples if isinstance(s, Mapping))
    earlier = record.extra.get("reasked")
    return len(earlier) if isinstance(earlier, list) else 0


def retries(record: Judgment) -> int:
    """The attempts made for ``record`` beyond one per call and re-ask."""
    orders = record.extra.get("orders")
    samples = record.extra.get("samples")
    calls = len(orders) if isinstance(orders, Mapping) and orders else 1
    if isinstance(samples, list) and samples:
        calls = len(samples)
    return max(0, record.provenance.attempts - calls - reasks(record))


class Ledger:
    """What one invocation of a job spent, counted as its records are written (no record is
    kept, so memory does not grow with the run)."""

    def __init__(self) -> None:
        self.usage = UsageSum()  # spent at the provider (records not answered from the cache)
        self.cache_hits = 0
        self.retries = 0  # attempts beyond one per call and re-ask
        self.reasks = 0  # calls made again for an answer that could not be read
        self.retry_causes: Counter[str] = Counter()  # retried attempts by error kind
        self.failure_causes: Counter[str] = Counter()  # calls that finally failed, by kind
        #: ok answers by their grade distribution (``--scores expected``): found, unavailable,
        #: no_logprobs (the provider sent none), none (no one-token label)
        self.distributions: Counter[str] = Counter()

    def count(self, record: Judgment) -> None:
        """Count a record the job wrote."""
        provenance = record.provenance
        if provenance.cached:
            self.cache_hits += 1
        else:
            self.usage.add(provenance.usage)
        self.retries += retries(record)
        self.reasks += reasks(record)
        if record.status == "ok" and record.docid is not None:
            found = record.extra.get("expected")
            if isinstance(found, dict):
                self.distributions["unavailable" if "unavailable" in found else "found"] += 1
            else:
                self.distributions["no_logprobs" if "logprobs" not in record.extra else "none"] += 1

    def on_event(self, kind: str, info: Mapping[str, Any]) -> None:
        """The client's event callback: why calls were retried or finally failed."""
        cause = str(info.get("kind") or "other")
        if kind == "retry":
            self.retry_causes[cause] += 1
        elif kind == "failure":
            self.failure_causes[cause] += 1

    def as_dict(self) -> dict[str, Any]:
        """The counts as the manifest's ``last_session`` holds them."""
        return {
            "usage": self.usage.total().model_dump(),
            "cache_hits": self.cache_hits,
            "retries": self.retries,
            "reasks": self.reasks,
            "retry_causes": dict(sorted(self.retry_causes.items())),
            "failure_causes": dict(sorted(self.failure_causes.items())),
        }
