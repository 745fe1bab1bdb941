"""Agreement between two system rankings, with bootstrap confidence intervals over topics.

Each ranking is given as ``{system: value}`` (higher is better unless the method's caller
negates the values). Methods:

- ``kendall`` — Kendall τ-b (scipy; the default, as in the Arabzadeh & Clarke papers);
- ``tau_ap`` — Yilmaz et al.'s AP correlation of the *second* ranking against the first
  (asymmetric; tied reference values count one half; ties in the second ranking are broken
  by the first argument's order of systems);
- ``spearman`` — Spearman ρ (scipy);
- ``pearson`` — Pearson R of the values themselves (scipy; linear, not a rank correlation: KRS's
  meta-evaluation reports it beside Spearman ρ);
- ``rbo`` — extrapolated RBO of the two orderings (``rbo`` package ``rbo_ext``, p default
  0.9; the package's own default p of ``rbo()`` is 1.0, i.e. average overlap, which is not used).
  Ties are broken by the first argument's order of systems.

Each method is also a `RankingMeasure` (`KENDALL_TAU_B`, `SPEARMAN`, `TAU_AP`, `RBO_P09`),
registered in `reljudge.metrics.registry`, which is how ``judge evaluate``, ``judge fd`` and the
sweep analysis use them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, Literal

import numpy as np

from reljudge.metrics.base import RankingMeasure

Method = Literal["kendall", "tau_ap", "spearman", "rbo", "pearson"]
METHODS: tuple[str, ...] = ("kendall", "tau_ap", "spearman", "rbo", "pearson")
#: the methods whose significance scipy tests (`agreement_test`); τ_AP and RBO have no p-value
TESTED_METHODS: tuple[str, ...] = ("kendall", "spearman", "pearson")


def _aligned(x: Mapping[str, float], y: Mapping[str, float]) -> tuple[list[str], np.ndarray, np.ndarray]:
    systems = [s for s in x if s in y]
    if len(systems) < 2:
        raise ValueError("need at least two systems present in both rankings")
    return systems, np.array([x[s] for s in systems], float), np.array([y[s] for s in systems], float)


def _order(values: np.ndarray) -> np.ndarray:
    """Indices by value descending, ties by position (stable)."""
    return np.argsort(-values, kind="stable")


def tau_ap(reference: Sequence[float] | np.ndarray, estimate: Sequence[float] | np.ndarray) -> float:
    """AP correlation τ_AP of the ranking by ``estimate`` against the ranking by ``reference``."""
    ref = np.asarray(reference, float)
    est = np.asarray(estimate, float)
    n = ref.size
    if n < 2:
        return float("nan")
    order = _order(est)
    r = ref[order]
    total = 0.0
    for i in range(1, n):
        above = r[:i]
        correct = np.count_nonzero(above > r[i]) + 0.5 * np.count_nonzero(above == r[i])
        total += correct / i
    return float(2.0 * total / (n - 1) - 1.0)


def kendall_tau_b_batch(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Kendall τ-b of the columns of two n × B arrays (vectorised; equals scipy's τ-b)."""
    n = x.shape[0]
    i, j = np.triu_indices(n, k=1)
    dx = np.sign(x[i] - x[j])
    dy = np.sign(y[i] - y[j])
    num = (dx * dy).sum(axis=0)
    den = np.sqrt((dx * dx).sum(axis=0) * (dy * dy).sum(axis=0))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


def _rbo(x: np.ndarray, y: np.ndarray, p: float) -> float:
    import rbo

    s = _order(x).tolist()
    t = _order(y).tolist()
    return float(rbo.RankingSimilarity(s, t).rbo_ext(p=p))


def _kendall(x: np.ndarray, y: np.ndarray) -> float:
    from scipy.stats import kendalltau

    return float(kendalltau(x, y).statistic)


def _spearman(x: np.ndarray, y: np.ndarray) -> float:
    from scipy.stats import spearmanr

    return float(spearmanr(x, y).statistic)


def _pearson(x: np.ndarray, y: np.ndarray) -> float:
    return _tested(x, y, "pearson")[0]


def _tested(x: np.ndarray, y: np.ndarray, method: str) -> tuple[float, float]:
    """(statistic, two-sided p-value) by scipy; NaN, NaN with fewer than two values or a constant input."""
    import warnings

    from scipy import stats

    x = np.asarray(x, float)
    y = np.asarray(y, float)
    if x.size < 2 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return float("nan"), float("nan")
    tests: dict[str, Callable[..., Any]] = {
        "kendall": stats.kendalltau,
        "spearman": stats.spearmanr,
        "pearson": stats.pearsonr,
    }
    test = tests[method]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = test(x, y)
    return float(result.statistic), float(result.pvalue)


KENDALL_TAU_B = RankingMeasure(
    "kendall_tau_b", "kendall", "Kendall tau-b", "tau-b", _kendall, batch=kendall_tau_b_batch, interval=True
)
SPEARMAN = RankingMeasure("spearman", "spearman", "Spearman", "spearman", _spearman)
TAU_AP = RankingMeasure("tau_ap", "tau_ap", "tau_AP", "tau_ap", tau_ap, top_weighted=True)
PEARSON = RankingMeasure("pearson", "pearson", "Pearson R", "R", _pearson)
RBO_P09 = RankingMeasure("rbo_p0.9", "rbo", "RBO", "rbo", partial(_rbo, p=0.9), top_weighted=True)

_BY_METHOD: dict[str, RankingMeasure] = {m.method: m for m in (KENDALL_TAU_B, SPEARMAN, TAU_AP, PEARSON)}


def agreement_arrays(x: np.ndarray, y: np.ndarray, method: Method = "kendall", *, p: float = 0.9) -> float:
    """Agreement of two aligned value arrays (see the module docstring for ``method``)."""
    if method == "rbo":
        return _rbo(x, y, p)
    measure = _BY_METHOD.get(method)
    if measure is None:
        raise ValueError(f"unknown ranking agreement method {method!r}; choose from {', '.join(METHODS)}")
    return measure.compute(x, y)


def ranking_agreement(
    x: Mapping[str, float], y: Mapping[str, float], method: Method = "kendall", *, p: float = 0.9
) -> float:
    """Agreement of the system rankings by ``x`` and by ``y`` over the systems in both."""
    _, a, b = _aligned(x, y)
    return agreement_arrays(a, b, method, p=p)


#: the bootstrap interval of a ranking agreement (see `bootstrap_ranking_agreement`)
DEFAULT_INTERVAL = "basic"


def agreement_test(x: np.ndarray, y: np.ndarray, method: Method = "kendall") -> tuple[float, float]:
    """Agreement of two aligned value arrays with its two-sided p-value (scipy's test for
    ``kendall`` τ-b, ``spearman`` and ``pearson``; the statistic equals `agreement_arrays`'s).
    ``tau_ap`` and ``rbo`` have no test: their p-value is NaN. NaN, NaN for a constant input."""
    if method in TESTED_METHODS:
        return _tested(x, y, method)
    return agreement_arrays(np.asarray(x, float), np.asarray(y, float), method), float("nan")


def ranking_agreement_test(
    x: Mapping[str, float], y: Mapping[str, float], method: Method = "kendall"
) -> tuple[float, float]:
    """`ranking_agreement` with its p-value (`agreement_test`), over the systems in both with a
    finite value in each."""
    systems = [s for s in x if s in y and np.isfinite(x[s]) and np.isfinite(y[s])]
    if len(systems) < 2:
        raise ValueError("need at least two systems present in both rankings")
    return agreement_test(np.array([x[s] for s in systems]), np.array([y[s] for s in systems]), method)


@dataclass(frozen=True)
class Interval:
    value: float
    low: float
    high: float
    n_boot: int
    level: float = 0.95


def bootstrap_ranking_agreement(
    x: Mapping[str, Mapping[str, float]],
    y: Mapping[str, Mapping[str, float]],
    method: Method | RankingMeasure = "kendall",
    *,
    n_boot: int = 1000,
    level: float = 0.95,
    seed: int = 0,
    p: float = 0.9,
    interval: str = DEFAULT_INTERVAL,
) -> Interval:
    """Agreement of two system rankings from per-topic values ``{system: {qid: value}}``.

    The point value compares the systems' means over the common topics (topics present for
    every system in both inputs). The interval resamples those topics (`scipy.stats.bootstrap`,
    the replicates computed together from topic counts, `reljudge.metrics.bootstrap`);
    ``interval`` is the method: ``basic`` by default, because the replicates of a rank
    correlation are biased towards 0 (see `reljudge.metrics.bootstrap`), ``BCa`` or
    ``percentile``. Where the method is undefined (all replicates equal), the percentile
    interval of the replicates. The ends are clipped to the measure's range.
    """
    from reljudge.metrics.bootstrap import bootstrap_interval

    systems, X, Y = _per_topic(x, y)
    mx0, my0 = X.mean(axis=1), Y.mean(axis=1)
    if isinstance(method, RankingMeasure):
        value = method.compute(mx0, my0)
    else:
        value = agreement_arrays(mx0, my0, method, p=p)
    if n_boot <= 0:
        return Interval(value, float("nan"), float("nan"), 0, level)

    def statistic(W: np.ndarray) -> np.ndarray:
        total = W.sum(axis=1)
        mx, my = X @ W.T / total, Y @ W.T / total
        if isinstance(method, RankingMeasure):
            reps = method.replicates(mx, my)
        elif method == "kendall":
            reps = kendall_tau_b_batch(mx, my)
        else:
            reps = np.array([agreement_arrays(mx[:, b], my[:, b], method, p=p) for b in range(mx.shape[1])])
        return np.asarray(reps, dtype=float)[None, :]

    low, high, _ = bootstrap_interval(
        statistic, X.shape[1], n_boot=n_boot, level=level, seed=seed, method=interval
    )
    # a basic interval reflects the replicates around the estimate and can pass the measure's
    # range: clipped to it (rank correlations -1..1, RBO 0..1)
    floor = 0.0 if method == "rbo" else -1.0
    return Interval(
        value, float(np.clip(low[0], floor, 1.0)), float(np.clip(high[0], floor, 1.0)), n_boot, level
    )


def _per_topic(
    x: Mapping[str, Mapping[str, float]], y: Mapping[str, Mapping[str, float]]
) -> tuple[list[str], np.ndarray, np.ndarray]:
    """The systems present in both inputs and their values over the common topics (systems ×
    topics arrays, topics sorted)."""
    systems = [s for s in x if s in y]
    if len(systems) < 2:
        raise ValueError("need at least two systems present in both inputs")
    topics = sorted(set.intersection(*(set(x[s]) & set(y[s]) for s in systems)))
    if not topics:
        raise ValueError("no topic is shared by every system in both inputs")
    X = np.array([[x[s][q] for q in topics] for s in systems], float)
    Y = np.array([[y[s][q] for q in topics] for s in systems], float)
    return systems, X, Y
