"""What a registered measure is: a small declarative object, in the way ``ir_measures`` declares
its measures (`reljudge.metrics.registry` holds the instances, in one place).

Every measure has a ``name`` (its key in the registry and in the reports), what it
``applies_to``, the ``columns`` it outputs, and a ``compute`` function. Two kinds exist:

- `JudgmentMeasure` — judge quality: one judge's labels (`JudgeLabels`: pointwise scores or
  pairwise preference records) against the human qrels. ``applies_to`` is a subset of
  ``{"pointwise", "preferences"}``. ``compute`` returns an `Outcome`: the measure's own result
  object, the ``fields`` it adds to the set's entry in ``evaluation.json`` and its ``row`` in
  ``<name>.csv``. Where the measure does not apply, the set's entry gets ``empty`` instead.
- `RankingMeasure` — the agreement of two system rankings (``applies_to`` ``"rankings"``):
  ``compute(x, y)`` on two aligned value arrays (higher is better in both), optionally a
  vectorised ``batch`` over bootstrap replicates and an ``interval`` (a bootstrap interval
  reported in the columns ``<method>_ci_low`` / ``<method>_ci_high``). A ``top_weighted``
  measure compares the tops of the two rankings, so a ranking where lower is better is negated
  for it; a correlation keeps the raw values (a negative value then means agreement).

Nothing here reads files or calls a model.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

Scores = Mapping[str, Mapping[str, float]]
Preference = tuple[str, str, str, int]  # (qid, docid_a, docid_b, label: 1 = a, 2 = b, 0 = tie)


@dataclass(frozen=True)
class JudgeLabels:
    """One judge's labels on the topics of the human qrels, with the conventions to read them.

    ``scores``: pointwise scores ``{qid: {docid: score}}`` on any scale; ``preferences``: the
    pairwise records of a preference judge (then ``scores`` holds its win counts).
    ``missing``: the score of a human-judged document the judge does not list (None: skipped).
    ``unacceptable``: the highest human grade that is Unacceptable; ``human_threshold`` /
    ``judge_threshold``: relevant is ``>=`` the threshold (judge: None = chosen from the labels,
    on ``judge_scale`` when the judge declares its scale), printed as ``judge_threshold_text``
    when given (``> 0``). ``grade_scale``: the human scale [lo, hi] when the judge's labels are
    grades on it: graded κ/α read a label outside it as the nearest end; ``graded`` False: the
    labels are not grades on the human scale, no graded κ/α (None: graded when the labels lie
    on the human grades seen).
    """

    qrels: Scores
    scores: Scores
    preferences: Sequence[Preference] | None = None
    missing: float | None = None
    unacceptable: float = 0
    human_threshold: float = 2
    judge_threshold: float | None = None
    alignment_average: str = "pairs"  # alignment shares over all pairs, or the mean over topics
    #: the judge's own scale [lo, hi] of float scores (expected grades), when it declares one
    judge_scale: tuple[float, float] | None = None
    judge_threshold_text: str | None = None
    grade_scale: tuple[float, float] | None = None
    graded: bool | None = None

    @property
    def kind(self) -> str:
        """``"preferences"`` for a pairwise judge's records, else ``"pointwise"``."""
        return "preferences" if self.preferences is not None else "pointwise"


@dataclass(frozen=True)
class Outcome:
    """What a `JudgmentMeasure` found for one judgment set."""

    value: Any  # the measure's own result (e.g. an `AlignmentResult`)
    fields: Mapping[str, Any]  # keys of the set's entry in evaluation.json
    row: Mapping[str, Any] | None = None  # its row in <name>.csv (None: no row for this set)


@dataclass(frozen=True)
class JudgmentMeasure:
    """A judge-quality measure of one judgment set against the human qrels."""

    name: str
    description: str
    applies_to: frozenset[str]  # "pointwise", "preferences"
    columns: tuple[str, ...]  # the columns of its CSV table after "set" (a row may leave some out)
    empty: Mapping[str, Any]  # its evaluation.json fields where it does not apply
    compute: Callable[[JudgeLabels], Outcome]

    def __call__(self, labels: JudgeLabels) -> Outcome | None:
        """The outcome for ``labels``, or None when the measure does not apply to them."""
        if labels.kind not in self.applies_to:
            return None
        return self.compute(labels)


@dataclass(frozen=True)
class RankingMeasure:
    """Agreement of two system rankings (see the module docstring)."""

    name: str  # its column, e.g. "kendall_tau_b"
    method: str  # its short name, e.g. "kendall" (`ranking_agreement(x, y, method)`)
    label: str  # in prose, e.g. "Kendall tau-b"
    header: str  # in a console table, e.g. "tau-b"
    compute: Callable[[np.ndarray, np.ndarray], float]
    batch: Callable[[np.ndarray, np.ndarray], np.ndarray] | None = None
    top_weighted: bool = False
    interval: bool = False
    applies_to: frozenset[str] = field(default=frozenset({"rankings"}))

    @property
    def columns(self) -> tuple[str, ...]:
        return (self.name, *self.interval_columns) if self.interval else (self.name,)

    @property
    def interval_columns(self) -> tuple[str, str]:
        return (f"{self.method}_ci_low", f"{self.method}_ci_high")

    def __call__(
        self, x: Mapping[str, float], y: Mapping[str, float], *, lower_is_better: bool = False
    ) -> float:
        """Agreement of the rankings by ``x`` and ``y`` over the systems in both (at least two).

        ``lower_is_better``: ``y`` ranks best-first by its lowest values (e.g. a distance)."""
        systems = [s for s in x if s in y]
        if len(systems) < 2:
            raise ValueError("need at least two systems present in both rankings")
        a = np.array([x[s] for s in systems], float)
        b = np.array([y[s] for s in systems], float)
        return self.compute(a, -b if lower_is_better and self.top_weighted else b)

    def replicates(self, x: np.ndarray, y: np.ndarray, *, lower_is_better: bool = False) -> np.ndarray:
        """The measure of every column of two systems × replicates arrays (``lower_is_better``: as
        for `__call__`)."""
        if lower_is_better and self.top_weighted:
            y = -y
        if self.batch is not None:
            return self.batch(x, y)
        return np.array([self.compute(x[:, b], y[:, b]) for b in range(x.shape[1])], float)

    def paired(self, x: np.ndarray, y: np.ndarray) -> float:
        """The measure over the positions where both arrays have a value (NaN with fewer than two),
        by the vectorised form when there is one."""
        keep = ~(np.isnan(x) | np.isnan(y))
        if keep.sum() < 2:
            return float("nan")
        return float(self.replicates(x[keep, None], y[keep, None])[0])


def percentile_interval(values: np.ndarray, level: float = 0.95) -> tuple[float, float]:
    """The percentile interval of bootstrap replicates, NaN ones left out (NaN, NaN when none is left)."""
    values = np.asarray(values, float)
    values = values[~np.isnan(values)]
    if not values.size:
        return float("nan"), float("nan")
    alpha = (1.0 - level) / 2.0
    low, high = np.quantile(values, [alpha, 1.0 - alpha])
    return float(low), float(high)
