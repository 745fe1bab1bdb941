"""Agreement between two system rankings, with bootstrap confidence intervals over topics.

Each ranking is given as ``{system: value}`` (higher is better unless the method's caller
negates the values). Methods:

- ``kendall`` — Kendall τ-b (scipy; the default, as in the Arabzadeh & Clarke papers);
- ``tau_ap`` — Yilmaz et al.'s AP correlation of the *second* ranking against the first
  (asymmetric; tied reference values count one half; ties in the second ranking are broken
  by the first argument's order of systems);
- ``spearman`` — Spearman ρ (scipy);
- ``rbo`` — extrapolated RBO of the two orderings (``rbo`` package ``rbo_ext``, p default
  0.9; the package's own default p of ``rbo()`` is 1.0, i.e. average overlap, which is not used).
  Ties are broken by the first argument's order of systems.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

Method = Literal["kendall", "tau_ap", "spearman", "rbo"]
METHODS: tuple[str, ...] = ("kendall", "tau_ap", "spearman", "rbo")


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


def agreement_arrays(x: np.ndarray, y: np.ndarray, method: Method = "kendall", *, p: float = 0.9) -> float:
    """Agreement of two aligned value arrays (see the module docstring for ``method``)."""
    if method == "kendall":
        from scipy.stats import kendalltau

        return float(kendalltau(x, y).statistic)
    if method == "spearman":
        from scipy.stats import spearmanr

        return float(spearmanr(x, y).statistic)
    if method == "tau_ap":
        return tau_ap(x, y)
    if method == "rbo":
        return _rbo(x, y, p)
    raise ValueError(f"unknown ranking agreement method {method!r}; choose from {', '.join(METHODS)}")


def ranking_agreement(
    x: Mapping[str, float], y: Mapping[str, float], method: Method = "kendall", *, p: float = 0.9
) -> float:
    """Agreement of the system rankings by ``x`` and by ``y`` over the systems in both."""
    _, a, b = _aligned(x, y)
    return agreement_arrays(a, b, method, p=p)


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
    method: Method = "kendall",
    *,
    n_boot: int = 1000,
    level: float = 0.95,
    seed: int = 0,
    p: float = 0.9,
) -> Interval:
    """Agreement of two system rankings from per-topic values ``{system: {qid: value}}``.

    The point value compares the systems' means over the common topics (topics present for
    every system in both inputs); the interval is the percentile bootstrap over those topics
    (each replicate draws |topics| topics with replacement and recomputes both means).
    """
    systems = [s for s in x if s in y]
    if len(systems) < 2:
        raise ValueError("need at least two systems present in both inputs")
    topics = sorted(set.intersection(*(set(x[s]) & set(y[s]) for s in systems)))
    if not topics:
        raise ValueError("no topic is shared by every system in both inputs")
    X = np.array([[x[s][q] for q in topics] for s in systems], float)
    Y = np.array([[y[s][q] for q in topics] for s in systems], float)
    value = agreement_arrays(X.mean(axis=1), Y.mean(axis=1), method, p=p)
    if n_boot <= 0:
        return Interval(value, float("nan"), float("nan"), 0, level)
    rng = np.random.default_rng(seed)
    t = len(topics)
    draws = rng.integers(0, t, size=(n_boot, t))
    weights = np.zeros((n_boot, t))
    np.add.at(weights, (np.repeat(np.arange(n_boot), t), draws.ravel()), 1.0)
    mx = X @ weights.T / t  # systems × replicates
    my = Y @ weights.T / t
    if method == "kendall":
        reps = kendall_tau_b_batch(mx, my)
    else:
        reps = np.array([agreement_arrays(mx[:, b], my[:, b], method, p=p) for b in range(n_boot)])
    reps = reps[~np.isnan(reps)]
    alpha = (1.0 - level) / 2.0
    low, high = np.quantile(reps, [alpha, 1.0 - alpha]) if reps.size else (float("nan"), float("nan"))
    return Interval(value, float(low), float(high), n_boot, level)
