"""`ClientStats`: what one `reljudge.llm.LLMClient` did (chats, calls, cache hits, retries,
failures), for the summary and the manifest."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any


@dataclass
class ClientStats:
    chats: int = 0  # chat() calls
    calls: int = 0  # requests sent to the provider (every attempt)
    cache_hits: int = 0  # answered from the persistent cache or by an identical call in flight
    retries: int = 0
    failures: Counter = field(default_factory=Counter)  # final failures by error kind
    statuses: Counter = field(default_factory=Counter)  # results by status
    unpriced_models: set = field(default_factory=set)
    served_models: Counter = field(default_factory=Counter)  # answers by the ``model`` they name
    limiter_wait_s: float = 0.0
    #: provider usage anomalies (`reljudge.llm.usage_bound.ANOMALIES`): answers without usage
    #: ("missing"), usage above the request's bound ("over", clamped), attempts of unknown outcome
    usage_anomalies: Counter = field(default_factory=Counter)
    concurrency: Any = None  # the `AdaptiveConcurrency` (its level in the manifest), or the fixed int

    def as_dict(self) -> dict[str, Any]:
        return {
            "chats": self.chats,
            "calls": self.calls,
            "cache_hits": self.cache_hits,
            "retries": self.retries,
            "failures": dict(self.failures),
            "statuses": dict(self.statuses),
            "unpriced_models": sorted(self.unpriced_models),
            "served_models": dict(self.served_models.most_common(20)),
            "limiter_wait_s": round(self.limiter_wait_s, 3),
            "usage_anomalies": dict(sorted(self.usage_anomalies.items())),
            "concurrency": getattr(self.concurrency, "as_dict", lambda: self.concurrency)(),
        }
