"""What aggregation left out, and why.

A judgment whose status is not ``ok`` carries no label. Aggregation never turns it into a 0
behind the caller's back: by default (``on_failure="exclude"``) the record is left out of
every numerator *and* denominator, and counted here. A caller who wants the behaviour of the
reference tools (nuggetizer counts a failed assignment as ``not_support``) chooses
``on_failure="zero"``: the failure then counts as the lowest label, and is still counted here
(as ``zeroed``).

Duplicates are resolved the same way everywhere (`collect`): for one key, an ``ok`` record
wins over failed ones (a resumed run that retried a failure), identical ``ok`` records count
once, and ``ok`` records with different labels are an error.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

from reljudge.records import Judgment

FailurePolicy = Literal["exclude", "zero"]
FAILURE_POLICIES: tuple[str, ...] = ("exclude", "zero")

K = TypeVar("K", bound=Hashable)


@dataclass
class Exclusions:
    """Counts and keys of everything an aggregation did not score normally.

    - ``failed``: non-``ok`` records by status (``unparsed``, ``api_error``, ``skipped``, ...);
    - ``failed_keys``: their keys, e.g. ``(qid, docid, item_id)``;
    - ``zeroed``: how many of them were counted as the lowest label (``on_failure="zero"``);
    - ``superseded``: failed records ignored because an ``ok`` record exists for the same key;
    - ``duplicates``: identical ``ok`` records counted once;
    - ``missing``: items expected (from a question or nugget bank) but never judged;
    - ``unscored``: ``(qid, docid, reason)`` for scores that could not be computed (no valid
      item left, an empty vital/okay class, a document whose every comparison failed).
    """

    policy: str = "exclude"
    failed: Counter[str] = field(default_factory=Counter)
    failed_keys: list[tuple[Any, ...]] = field(default_factory=list)
    zeroed: int = 0
    superseded: int = 0
    duplicates: int = 0
    missing: list[tuple[str, ...]] = field(default_factory=list)
    unscored: list[tuple[str, str, str]] = field(default_factory=list)

    @property
    def n_failed(self) -> int:
        return sum(self.failed.values())

    def __bool__(self) -> bool:
        return bool(self.n_failed or self.missing or self.unscored)

    def summary(self) -> str:
        """One line for a log or a report, e.g. ``3 failed (unparsed 2, api_error 1) excluded``."""
        parts: list[str] = []
        if self.n_failed:
            detail = ", ".join(f"{s} {n}" for s, n in sorted(self.failed.items()))
            how = "counted as 0" if self.policy == "zero" else "excluded"
            parts.append(f"{self.n_failed} failed ({detail}) {how}")
        if self.missing:
            how = "counted as 0" if self.policy == "zero" else "excluded"
            parts.append(f"{len(self.missing)} expected items never judged ({how})")
        if self.unscored:
            reasons = Counter(r for _, _, r in self.unscored)
            detail = ", ".join(f"{r} {n}" for r, n in sorted(reasons.items()))
            parts.append(f"{len(self.unscored)} scores undefined ({detail})")
        if self.superseded:
            parts.append(f"{self.superseded} failed records superseded by a later ok record")
        if self.duplicates:
            parts.append(f"{self.duplicates} duplicate records counted once")
        return "; ".join(parts) if parts else "nothing excluded"

    def as_dict(self) -> dict[str, Any]:
        return {
            "policy": self.policy,
            "failed": dict(self.failed),
            "failed_keys": [list(k) for k in self.failed_keys],
            "zeroed": self.zeroed,
            "superseded": self.superseded,
            "duplicates": self.duplicates,
            "missing": [list(k) for k in self.missing],
            "unscored": [list(k) for k in self.unscored],
        }


def check_policy(on_failure: str) -> None:
    if on_failure not in FAILURE_POLICIES:
        raise ValueError(f"on_failure must be one of {', '.join(FAILURE_POLICIES)}, not {on_failure!r}")


def collect(
    judgments: Iterable[Judgment],
    key: Callable[[Judgment], K],
    exclusions: Exclusions,
    value: Callable[[Judgment], Any] | None = None,
) -> tuple[dict[K, Judgment], dict[K, Judgment]]:
    """Split records into ``ok`` and failed ones, one record per key (insertion order kept).

    Failed records whose key also has an ``ok`` record are counted as ``superseded`` and
    dropped. The returned failed records are counted in ``exclusions.failed`` by status.
    Raises ValueError when two ``ok`` records share a key but disagree on the label (or on
    ``value(record)`` when given, e.g. an orientation-free pairwise outcome).
    """
    value = value or (lambda j: j.label)
    ok: dict[K, Judgment] = {}
    failed: dict[K, Judgment] = {}
    for j in judgments:
        k = key(j)
        if j.ok:
            prev = ok.get(k)
            if prev is not None:
                if value(prev) != value(j):
                    raise ValueError(f"conflicting judgments for {k}: {value(prev)!r} and {value(j)!r}")
                exclusions.duplicates += 1
                continue
            ok[k] = j
            if k in failed:
                del failed[k]
                exclusions.superseded += 1
        elif k in ok:
            exclusions.superseded += 1
        elif k in failed:
            exclusions.superseded += 1  # an earlier failure retried and failed again
            failed[k] = j
        else:
            failed[k] = j
    for k, j in failed.items():
        exclusions.failed[j.status] += 1
        exclusions.failed_keys.append(k if isinstance(k, tuple) else (k,))
    return ok, failed


def single_method(judgments: Iterable[Any]) -> str | None:
    """The one `method` the records share (None for no records); mixed methods are an error."""
    methods = {j.method for j in judgments}
    if len(methods) > 1:
        raise ValueError(f"judgments of several methods mixed: {', '.join(sorted(methods))}")
    return next(iter(methods), None)
