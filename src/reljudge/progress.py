"""Progress of a judging job: a tqdm bar (rate, ETA) with live counters.

`JobProgress` is fed from two sides:

- `on_record` — the runner's emit callback, once per judgment record (advances the bar and
  counts records by status, parse fallbacks and cache hits);
- `on_event` — the LLM client's ``on_event(kind, info)`` callback (retries and failed calls).

The counters are kept whether or not a bar is shown, so the runner's summary can use them.
The bar goes to stderr and is hidden when stderr is not a terminal (tqdm's ``disable=None``)
or when ``enabled=False``.
"""

from __future__ import annotations

import sys
import threading
from collections import Counter
from collections.abc import Mapping
from typing import IO, Any

from reljudge.records import FAILURE_STATUSES, Judgment

#: the LLM client's event kinds (`reljudge.llm.client`) counted as a retry / as a call that
#: finally failed; its third kind, "truncated", is counted with the records' statuses
RETRY_KINDS: frozenset[str] = frozenset({"retry"})
FAILURE_KINDS: frozenset[str] = frozenset({"failure"})


class JobProgress:
    """Counters of a running job, optionally shown as a tqdm progress bar."""

    def __init__(
        self,
        total: int | None = None,
        *,
        desc: str = "judging",
        initial: int = 0,
        enabled: bool | None = None,
        file: IO[str] | None = None,
        unit: str = "rec",
    ) -> None:
        self.statuses: Counter[str] = Counter()
        self.fallbacks: Counter[str] = Counter()
        self.events: Counter[str] = Counter()
        self.records = 0
        self.cache_hits = 0
        self.retries = 0
        self.failed_calls = 0
        self._lock = threading.Lock()
        self._bar: Any = None
        if enabled is not False:
            from tqdm.auto import tqdm

            self._bar = tqdm(
                total=total,
                initial=min(initial, total) if total is not None else initial,
                desc=desc,
                unit=unit,
                file=file or sys.stderr,
                disable=None if enabled is None else not enabled,
                dynamic_ncols=True,
                leave=True,
                smoothing=0.1,
            )

    #: the client's `AdaptiveConcurrency`, whose level the bar shows (None: not shown)
    concurrency: Any = None

    # -- feeding -------------------------------------------------------------------------
    def on_record(self, judgment: Judgment) -> None:
        """Count one emitted record and advance the bar."""
        with self._lock:
            self.records += 1
            self.statuses[judgment.status] += 1
            if judgment.parse and judgment.parse.startswith("fallback"):
                self.fallbacks[judgment.parse] += 1
            if judgment.provenance.cached:
                self.cache_hits += 1
            if self._bar is not None:
                if self._bar.total is not None and self._bar.n >= self._bar.total:
                    self._bar.total = self._bar.n + 1  # an estimate was low: grow, never overflow
                self._bar.update(1)
                self._refresh_postfix()

    def on_event(self, kind: str, info: Mapping[str, Any] | None = None) -> None:
        """The LLM client's event callback: counts retries and calls that finally failed."""
        with self._lock:
            self.events[kind] += 1
            if kind in RETRY_KINDS:
                self.retries += 1
            elif kind in FAILURE_KINDS:
                self.failed_calls += 1
            if self._bar is not None:
                self._refresh_postfix()

    # -- display -------------------------------------------------------------------------
    def _refresh_postfix(self) -> None:
        failed = sum(self.statuses[s] for s in FAILURE_STATUSES)
        parts = {"ok": self.statuses["ok"], "fail": failed}
        if self.retries:
            parts["retries"] = self.retries
        if self.cache_hits:
            parts["cached"] = self.cache_hits
        if self.statuses["skipped"]:
            parts["skipped"] = self.statuses["skipped"]
        if self.concurrency is not None:  # the adaptive level (`reljudge.llm.adaptive`)
            parts["conc"] = self.concurrency.level
        self._bar.set_postfix(parts, refresh=False)

    def write(self, message: str) -> None:
        """Print a line without breaking the bar."""
        if self._bar is not None and not self._bar.disable:
            self._bar.write(message, file=sys.stderr)
        else:
            print(message, file=sys.stderr)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def __enter__(self) -> JobProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
