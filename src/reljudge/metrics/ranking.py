"""Agreement between two system rankings, with bootstrap confidence intervals over topics.

Each ranking is given as ``{system: value}`` (higher is better unless the method's caller
negates the values). Every measure is a function of the values alone: the order in which the
systems are listed never changes it, also when values tie (tests/test_metrics_ranking_ties.py
checks this with random permutations). Methods:

- ``kendall`` — Kendall τ-b (scipy; the default, as in the Arabzadeh & Clarke papers): a pair
  tied in either ranking is neither concordant nor discordant, and τ-b's normalisation makes a
  ranking agree fully with itself;
- ``tau_ap`` — Yilmaz et al.'s AP correlation of the *second* ranking against the first
  (asymmetric). Without ties it is Yilmaz's τ_AP. With ties it is the *mean of Yilmaz's τ_AP
  over every order that breaks the ties, the same order breaking them in both rankings*
  (equivalently: over every permutation of the systems used as the secondary sort key of both
  rankings), computed in closed form (`tau_ap`). Consequences: a ranking has τ_AP 1 with
  itself; ties in the second ranking only give Urbano & Marrero's τ_AP-a (the expected τ_AP
  under random tie-breaking); a pair tied in the first ranking only counts one half;
- ``tau_ap_b`` — Urbano & Marrero's symmetric, tie-aware τ_AP-b ("The Treatment of Ties in AP
  Correlation", ICTIR 2017), the AP correlation TREC AutoJudge's meta-evaluation reports: each
  ranking in turn is walked by its tie groups, a system's score is the share of the systems
  strictly above it that the other ranking also puts strictly above it, and the two directions
  are averaged (`tau_ap_b`). Kept apart from ``tau_ap``: the two differ whenever a ranking ties;
- ``spearman`` — Spearman ρ (scipy; tied values get their average rank);
- ``pearson`` — Pearson R of the values themselves (scipy; linear, not a rank correlation: KRS's
  meta-evaluation reports it beside Spearman ρ);
- τ_GAP (`tau_gap`, the `TAU_GAP` measure, not a ``method``) — Gao & Oard's head-weighted,
  gap-sensitive AP correlation of a predicted ranking against graded truth values, as TREC
  AutoJudge's meta-evaluation (autojudge-evaluate 1.1.0) computes it. Its ties in the prediction
  are broken by the order the systems are listed in (autojudge-evaluate lists them by run id),
  so it is the one measure here that is not a function of the values alone: it stays out of the
  registry, whose measures never depend on the listing order;
- ``rbo`` — extrapolated RBO of the two orderings (p default 0.9; the ``rbo`` package's default
  p of ``rbo()`` is 1.0, i.e. average overlap, which is not used). Without ties it equals the
  ``rbo`` package's ``rbo_ext``. With ties, as for ``tau_ap``, the mean over every order that
  breaks the ties, one order breaking them in both rankings, in closed form (`rbo_ties`): a
  ranking has RBO 1 with itself, and ties in one ranking only give Corsi & Urbano's RBO^a ("The
  Treatment of Ties in Rank-Biased Overlap", SIGIR 2024).

Each method is also a `RankingMeasure` (`KENDALL_TAU_B`, `SPEARMAN`, `TAU_AP`, `TAU_AP_B`,
`RBO_P09`), registered in `reljudge.metrics.registry`, which is how ``judge evaluate``,
``judge fd`` and the sweep analysis use them. `PEARSON` and `TAU_GAP` are measures too, used by
``judge leaderboard`` (`reljudge.analyses.leaderboard`) without the registry.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, Literal

import numpy as np

from reljudge.metrics.base import RankingMeasure

Method = Literal["kendall", "tau_ap", "tau_ap_b", "spearman", "rbo", "pearson"]
METHODS: tuple[str, ...] = ("kendall", "tau_ap", "tau_ap_b", "spearman", "rbo", "pearson")
#: the methods whose significance scipy tests (`agreement_test`); τ_AP, τ_AP-b and RBO have no p-value
TESTED_METHODS: tuple[str, ...] = ("kendall", "spearman", "pearson")


def _aligned(x: Mapping[str, float], y: Mapping[str, float]) -> tuple[list[str], np.ndarray, np.ndarray]:
    systems = [s for s in x if s in y]
    if len(systems) < 2:
        raise ValueError("need at least two systems present in both rankings")
    return systems, np.array([x[s] for s in systems], float), np.array([y[s] for s in systems], float)


def _harmonic_terms(p: int, t: int) -> tuple[float, float, float]:
    """For a tie group of ``t`` systems below ``p`` others, placed in random order (the system at
    offset ``k`` has ``p + k`` systems above it): the means E[1/(p+k)], E[(k+1)/((t+1)(p+k))]
    over the group's offsets, and the sum Σ_{k≥1} k/(p+k) (terms with no system above left out)."""
    k = np.arange(t, dtype=float)
    above = p + k
    ok = above > 0
    inverse = np.where(ok, 1.0 / np.where(ok, above, 1.0), 0.0)
    return (
        float(inverse.mean()),
        float(((k + 1.0) * inverse).sum() / (t * (t + 1.0))),
        float((k * inverse).sum()),
    )


def tau_ap(reference: Sequence[float] | np.ndarray, estimate: Sequence[float] | np.ndarray) -> float:
    """AP correlation τ_AP (Yilmaz, Aslam & Robertson 2008) of the ranking by ``estimate``
    against the ranking by ``reference`` (both best-first by the highest value).

    Without ties: ``2/(n-1) Σ_{i=2..n} C(i)/(i-1) - 1``, ``C(i)`` the number of the systems the
    estimate puts above its ``i``-th that the reference also puts above it.

    With ties: the mean of that value over every order that breaks the ties, one order breaking
    them in both rankings (a uniformly random permutation of the systems as both rankings'
    secondary key), in closed form. For a system ``d`` in a tie group of the estimate of size
    ``t`` below ``p`` systems, its offset ``k`` in the group is uniform on ``0..t-1``, so

    - a system above ``d``'s group that the reference puts above ``d`` adds E[1/(p+k)];
    - one the reference ties with ``d`` is above it in the shared order with chance
      ``(k+1)/(t+1)`` given ``k``, and adds E[(k+1)/((t+1)(p+k))];
    - the pairs inside the group add ``(s + 2u)/(t(t-1)) Σ_{k≥1} k/(p+k)``, ``s`` the pairs the
      reference orders and ``u`` those it ties (which the shared order puts the same way in
      both rankings).

    So a ranking has τ_AP 1 with itself whatever its ties; ties in the estimate only give
    Urbano & Marrero's τ_AP-a; a pair tied in the reference only counts one half. Never depends
    on the order the systems are listed in. NaN with fewer than two systems."""
    ref = np.asarray(reference, float)
    est = np.asarray(estimate, float)
    n = ref.size
    if n < 2:
        return float("nan")
    above = est[:, None] > est[None, :]  # [e, d]: the estimate puts e strictly above d
    ref_above = (above & (ref[:, None] > ref[None, :])).sum(axis=0)
    ref_tied = (above & (ref[:, None] == ref[None, :])).sum(axis=0)
    n_above = above.sum(axis=0)  # p of each system's tie group
    total = 0.0
    for p in np.unique(n_above):
        members = np.flatnonzero(n_above == p)
        t = members.size
        inverse_mean, tied_mean, within = _harmonic_terms(int(p), t)
        total += ref_above[members].sum() * inverse_mean + ref_tied[members].sum() * tied_mean
        if t > 1:
            r = ref[members]
            tied_pairs = (np.count_nonzero(r[:, None] == r[None, :]) - t) / 2
            ordered_pairs = t * (t - 1) / 2 - tied_pairs
            total += (ordered_pairs + 2.0 * tied_pairs) / (t * (t - 1)) * within
    return float(2.0 * total / (n - 1) - 1.0)


def _tau_ap_walk(walked: np.ndarray, other: np.ndarray) -> float:
    """One direction of τ_AP-b: ``walked``'s systems below its top tie group, each scored by the
    share of the systems strictly above it in ``walked`` that ``other`` also puts strictly above
    it; ``2 * mean - 1``. NaN when ``walked`` ties every system."""
    above = walked[:, None] > walked[None, :]  # [j, i]: j strictly above i
    n_above = above.sum(axis=0)
    agree = (above & (other[:, None] > other[None, :])).sum(axis=0)
    below_top = n_above > 0
    if not below_top.any():
        return float("nan")
    return float(2.0 * np.mean(agree[below_top] / n_above[below_top]) - 1.0)


def tau_ap_b(x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray) -> float:
    """Urbano & Marrero's τ_AP-b (ICTIR 2017), the symmetric tie-aware AP correlation TREC
    AutoJudge's meta-evaluation reports: the mean of the two directions

        τ_AP-b(x → y) = 2 / (n − t₁) · Σ_{i below y's top group} c_i / p_i − 1,

    ``p_i`` the number of systems ``y`` puts strictly above ``i``, ``c_i`` how many of them ``x``
    also puts strictly above ``i`` and ``t₁`` the size of ``y``'s top tie group; and the same
    with ``x`` and ``y`` exchanged. Without ties in ``y``, its direction is Yilmaz's τ_AP of
    ``x`` against ``y``. A ranking has τ_AP-b 1 with itself. NaN with fewer than two systems or
    when a ranking ties every system (its direction is undefined)."""
    a = np.asarray(x, float)
    b = np.asarray(y, float)
    if a.size < 2:
        return float("nan")
    return (_tau_ap_walk(b, a) + _tau_ap_walk(a, b)) / 2.0


def tau_gap(truth: Sequence[float] | np.ndarray, predicted: Sequence[float] | np.ndarray) -> float:
    """τ_GAP (Gao & Oard, "A Head-Weighted Gap-Sensitive Correlation Coefficient", SIGIR 2015)
    of the ranking by ``predicted`` against the values ``truth`` (both best-first by the highest
    value), as autojudge-evaluate 1.1.0 (``autojudge_evaluate/tau_gap.py``) computes it:

        τ_GAP = 2 / m · Σ_i [ Σ_{j above i} |CG_ji| / Σ_{j above i} |G_ji| ] − 1,

    ``i`` running over the positions of the predicted ranking below the first, ``j`` over the
    systems it puts above ``i``, ``G_ji`` the truth gap of the pair and ``CG_ji`` that gap when the
    truth also puts ``j`` above ``i`` (else 0). A position whose systems above are all tied with
    it in the truth adds nothing and is not counted in ``m`` (the positions that are). So a swap
    near the head, or across a large truth gap, costs more than one near the tail across a small
    gap. Asymmetric: ``truth`` gives the gaps, ``predicted`` only the order.

    Ties in ``predicted`` are broken by position (the system listed first is put first), as
    autojudge-evaluate does after listing the systems by run id. NaN with fewer than two systems
    or when the truth ties every pair."""
    t = np.asarray(truth, float)
    p = np.asarray(predicted, float)
    if t.shape != p.shape:
        raise ValueError(f"unequal lengths: {t.size} != {p.size}")
    if t.size < 2:
        return float("nan")
    ordered = t[np.argsort(-p, kind="stable")]
    above = np.triu(np.ones((t.size, t.size), dtype=bool), k=1)  # [j, i]: j is placed above i
    gaps = np.abs(ordered[:, None] - ordered[None, :]) * above
    correct = np.where(ordered[:, None] > ordered[None, :], gaps, 0.0)
    total, right = gaps.sum(axis=0), correct.sum(axis=0)
    used = total > 0
    if not used.any():
        return float("nan")
    return float(2.0 * np.mean(right[used] / total[used]) - 1.0)


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


def pearson_batch(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Pearson r of the columns of two n × B arrays (vectorised; NaN for a constant column)."""
    dx = x - x.mean(axis=0)
    dy = y - y.mean(axis=0)
    den = np.sqrt((dx * dx).sum(axis=0) * (dy * dy).sum(axis=0))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, (dx * dy).sum(axis=0) / np.where(den > 0, den, 1.0), np.nan)


def spearman_batch(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Spearman ρ of the columns of two n × B arrays: Pearson r of their ranks, tied values
    given their mean rank (vectorised; equals scipy's ``spearmanr``)."""
    from scipy.stats import rankdata

    return pearson_batch(rankdata(x, axis=0), rankdata(y, axis=0))


def _tie_groups(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per system: how many systems rank strictly above it, and the size of its tie group."""
    n_above = (values[:, None] > values[None, :]).sum(axis=0)
    group = (values[:, None] == values[None, :]).sum(axis=0)
    return n_above, group


def _depth_shares(values: np.ndarray) -> np.ndarray:
    """Systems × depths (1..n): the chance a system is in the top ``d`` when its tie group is in
    random order -- 0 above its group, the share ``(d - p) / t`` of its group (``t`` systems below
    ``p`` others) that fits above ``d`` inside it, 1 below it."""
    n_above, group = _tie_groups(values)
    depth = np.arange(1, values.size + 1, dtype=float)
    return np.clip((depth[None, :] - n_above[:, None]) / group[:, None], 0.0, 1.0)


def _expected_overlaps(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """E[X_d], d = 1..n: the expected overlap of the top-``d`` sets of the rankings by ``x`` and
    ``y`` when one uniformly random order of the systems breaks the ties in both.

    A system is in both tops with the product of its two chances (`_depth_shares`) unless ``d``
    falls inside its tie group in both rankings; then the two events share the system's place
    ``u`` in the random order: given ``u``, each other member of a group precedes it with chance
    ``u``, independently, so with ``c`` systems tied with it in both rankings and ``a`` / ``b``
    in one only, P = ∫₀¹ Σ_k Bin(k; c, u) F(α - k; a, u) F(β - k; b, u) du (α, β: how many may
    precede it), integrated exactly by Gauss-Legendre (the integrand is a polynomial of degree
    at most n)."""
    from scipy.stats import binom

    n = x.size
    a = _depth_shares(x)
    b = _depth_shares(y)
    joint = a * b
    inside = (a > 0) & (a < 1) & (b > 0) & (b < 1)
    if inside.any():
        above_x, _ = _tie_groups(x)
        above_y, _ = _tie_groups(y)
        nodes, weights = np.polynomial.legendre.leggauss(n // 2 + 2)
        u, w = (nodes + 1.0) / 2.0, weights / 2.0
        for i in np.flatnonzero(inside.any(axis=1)):
            in_x = x == x[i]
            in_y = y == y[i]
            in_x[i] = in_y[i] = False
            c = int(np.count_nonzero(in_x & in_y))
            a_only = int(np.count_nonzero(in_x & ~in_y))
            b_only = int(np.count_nonzero(in_y & ~in_x))
            shared = binom.pmf(np.arange(c + 1)[:, None], c, u[None, :])  # k × nodes
            for d0 in np.flatnonzero(inside[i]):
                alpha = d0 - above_x[i]  # at most alpha systems of its x group may precede it
                beta = d0 - above_y[i]
                k = np.arange(c + 1)[:, None]
                integrand = shared * binom.cdf(alpha - k, a_only, u) * binom.cdf(beta - k, b_only, u)
                joint[i, d0] = float(integrand.sum(axis=0) @ w)
    return joint.sum(axis=0)


def rbo_ties(x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray, p: float = 0.9) -> float:
    """Extrapolated rank-biased overlap (Webber, Moffat & Zobel 2010) of the rankings by ``x``
    and ``y`` (the same systems, best-first by the highest value):

        RBO = (1 − p)/p · Σ_{d=1..n} (X_d / d) p^d + p^n,

    ``X_d`` the overlap of the two top-``d`` sets -- without ties, the ``rbo`` package's
    ``rbo_ext``. With ties: the mean of that value over every order that breaks the ties, one
    order breaking them in both rankings (as for `tau_ap`), exact because RBO is linear in the
    ``X_d`` (`_expected_overlaps`). So a ranking has RBO 1 with itself whatever its ties, and
    when only one ranking ties this is Corsi & Urbano's RBO^a (the expected RBO under random
    tie-breaking, SIGIR 2024). Never depends on the order the systems are listed in."""
    if not 0.0 < p < 1.0:
        raise ValueError(f"RBO needs 0 < p < 1, not {p}")
    a = np.asarray(x, float)
    b = np.asarray(y, float)
    n = a.size
    if n == 0:
        return float("nan")
    depth = np.arange(1, n + 1, dtype=float)
    return float((1.0 - p) / p * np.sum(_expected_overlaps(a, b) / depth * p**depth) + p**n)


def _rbo(x: np.ndarray, y: np.ndarray, p: float) -> float:
    return rbo_ties(x, y, p)


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
SPEARMAN = RankingMeasure("spearman", "spearman", "Spearman", "spearman", _spearman, batch=spearman_batch)
TAU_AP = RankingMeasure("tau_ap", "tau_ap", "tau_AP", "tau_ap", tau_ap, top_weighted=True)
TAU_AP_B = RankingMeasure("tau_ap_b", "tau_ap_b", "tau_AP-b", "tau_ap_b", tau_ap_b, top_weighted=True)
PEARSON = RankingMeasure("pearson", "pearson", "Pearson R", "R", _pearson, batch=pearson_batch)
#: τ_GAP: not in the registry (its ties in the prediction follow the listing order, see `tau_gap`)
TAU_GAP = RankingMeasure("tau_gap", "tau_gap", "tau_GAP", "tau_gap", tau_gap, top_weighted=True)
RBO_P09 = RankingMeasure("rbo_p0.9", "rbo", "RBO", "rbo", partial(_rbo, p=0.9), top_weighted=True)

_BY_METHOD: dict[str, RankingMeasure] = {
    m.method: m for m in (KENDALL_TAU_B, SPEARMAN, TAU_AP, TAU_AP_B, PEARSON)
}


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
DEFAULT_INTERVAL = "t"


#: how often the 95 % t interval held its target in the simulation of ``bench/bench_bootstrap.py``
#: (six settings, 100-500 collections each), by whether the collection has more than
#: `FEW_TOPICS` topics: (lowest, highest) share. The bench checks its figures against these.
T_INTERVAL_COVERAGE = {"topics": (0.91, 0.99), "few topics": (0.97, 1.0)}
FEW_TOPICS = 5
#: the same for the other intervals, over all six settings (they undercover: the label says so)
OTHER_INTERVAL_COVERAGE = {"basic": (0.37, 0.83), "BCa": (0.27, 0.84), "percentile": (0.19, 1.0)}


def interval_note(
    n_boot: int, level: float = 0.95, method: str = DEFAULT_INTERVAL, *, width: int | None = None
) -> str:
    """What a ranking agreement's bootstrap interval is, for reports (wrapped at ``width``)."""
    import textwrap

    pct = f"{100 * level:g}%"
    if method == "t":
        note = (
            f"{pct} CI: t interval with the bootstrap standard error ({n_boot} resamples of the topics, "
            "with replacement). It is about the agreement expected from as many topics drawn like "
            "these, not the agreement of the rankings by population means, which can lie outside it "
            "(with few topics or close systems the estimate is biased, usually towards 0). Measured on "
            "simulated collections (bench/bench_bootstrap.py), the 95% interval held that target "
            f"{_share(T_INTERVAL_COVERAGE['topics'])} of the time with more than {FEW_TOPICS} topics, and "
            f"{_share(T_INTERVAL_COVERAGE['few topics'])} (wider than needed) with {FEW_TOPICS} or fewer."
        )
    else:
        measured = OTHER_INTERVAL_COVERAGE.get(method)
        note = (
            f"{pct} CI: {method} bootstrap interval ({n_boot} resamples of the topics); "
            "see reljudge.metrics.bootstrap for what it covers."
        )
        if measured is not None:
            note += (
                f" Measured on simulated collections (bench/bench_bootstrap.py), a nominal {pct} {method} "
                f"interval held its target only {_share(measured)} of the time (the default t interval: "
                f"{_share(T_INTERVAL_COVERAGE['topics'])})."
            )
    return textwrap.fill(note, width) if width else note


def _share(bounds: tuple[float, float]) -> str:
    return f"{100 * bounds[0]:g}-{100 * bounds[1]:g}%"


def agreement_test(x: np.ndarray, y: np.ndarray, method: Method = "kendall") -> tuple[float, float]:
    """Agreement of two aligned value arrays with its two-sided p-value (scipy's test for
    ``kendall`` τ-b, ``spearman`` and ``pearson``; the statistic equals `agreement_arrays`'s).
    ``tau_ap``, ``tau_ap_b`` and ``rbo`` have no test: their p-value is NaN. NaN, NaN for a constant input."""
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
    """A bootstrap interval around ``value`` (``method``: see `reljudge.metrics.bootstrap`)."""

    value: float
    low: float
    high: float
    n_boot: int
    level: float = 0.95
    method: str = ""
    #: why [low, high] does not contain ``value`` (None when it does or has no ends)
    excludes_estimate_because: str | None = None


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
    every system in both inputs). The interval resamples those topics with replacement
    (`scipy.stats.bootstrap`, the replicates computed together from topic counts,
    `reljudge.metrics.bootstrap`); ``interval`` is the method. The default, ``t``, is the value ±
    Student-t quantile × the bootstrap standard error: an interval for the agreement expected on
    a collection of as many topics drawn from the same population, which holds the value (not
    for the agreement of the rankings by population means, which the value underestimates when
    systems are close: see `reljudge.metrics.bootstrap` and `interval_note`). ``basic``, ``BCa``
    and ``percentile`` are scipy's; they can exclude the value, and then
    ``excludes_estimate_because`` says why. Where a method is undefined (all replicates equal),
    the percentile interval of the replicates. The ends are clipped to the measure's range.
    """
    from reljudge.metrics.bootstrap import bootstrap_interval, outside_reason

    systems, X, Y = _per_topic(x, y)
    mx0, my0 = X.mean(axis=1), Y.mean(axis=1)
    if isinstance(method, RankingMeasure):
        value = method.compute(mx0, my0)
    else:
        value = agreement_arrays(mx0, my0, method, p=p)
    if n_boot <= 0:
        return Interval(value, float("nan"), float("nan"), 0, level, interval)

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

    low, high, reps = bootstrap_interval(
        statistic, X.shape[1], n_boot=n_boot, level=level, seed=seed, method=interval
    )
    # a basic or t interval can pass the measure's range: clipped to it (rank correlations -1..1, RBO 0..1)
    is_rbo = method == "rbo" or (isinstance(method, RankingMeasure) and method.method == "rbo")
    floor = 0.0 if is_rbo else -1.0
    lo, hi = float(np.clip(low[0], floor, 1.0)), float(np.clip(high[0], floor, 1.0))
    return Interval(value, lo, hi, n_boot, level, interval, outside_reason(value, lo, hi, reps[0], interval))


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
