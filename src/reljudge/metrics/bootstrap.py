"""Bootstrap intervals over topics with `scipy.stats.bootstrap`, the statistic computed for all
replicates at once from topic counts.

A replicate draws the topics with replacement; a statistic that is a function of per-topic
quantities (a mean per system, the vectors of FD) needs only how often each topic was drawn:
``statistic(W)`` gets the counts (replicates × topics) and returns one row per output.

Which interval (``method``):

- ``"t"`` -- θ̂ ± t_{T−1, (1+level)/2} · s* · √(T/(T−1)): a Student-t interval with the bootstrap
  standard error, ``s*`` the standard deviation of the replicates and ``T`` the number of topics
  (the factor turns the bootstrap's plug-in variance, which divides by ``T``, into the unbiased
  one; t with ``T − 1`` degrees of freedom because the error is estimated from ``T`` topics).
  Symmetric about the estimate, so it always contains it. The default of ranking agreements
  (`reljudge.metrics.ranking.DEFAULT_INTERVAL`).
- ``"BCa"``, ``"percentile"``, ``"basic"`` -- `scipy.stats.bootstrap`'s.

What a ``"t"`` interval is about: the topics are a sample of a population of topics, and the
interval is for the statistic's mean over collections of ``T`` topics drawn from it,
E_T[θ̂] -- for a rank correlation between two system rankings by their means over topics, the
agreement a collection of this size delivers. It is not an interval for the agreement of the
rankings by population means (infinitely many topics): the rank correlation of two noisy
rankings is biased (usually towards 0: with few topics or close systems the rankings agree
less), by more than the bootstrap sees, so no interval built from these replicates covers that
value at its nominal level. `bench/bench_bootstrap.py` measures both coverages on synthetic
collections (see the README, *Scaling and intervals*). The *basic* interval
``(2θ̂ − q_{1−α/2}, 2θ̂ − q_{α/2})`` aims at the population-means value by correcting θ̂ with the
bootstrap's bias estimate; it covers it about four times in five in that simulation and can
exclude θ̂; the percentile interval sits on the replicates' side of θ̂ and BCa's bias correction
runs to the extreme quantiles once θ̂ is outside the replicates (`outside_reason` says why an
interval misses its estimate).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal, cast

import numpy as np

from reljudge.metrics.base import percentile_interval

IntervalMethod = Literal["t", "BCa", "basic", "percentile"]
#: the intervals scipy.stats.bootstrap computes (``"t"`` is computed here from its replicates)
ScipyMethod = Literal["BCa", "basic", "percentile"]
METHODS: tuple[IntervalMethod, ...] = ("t", "BCa", "basic", "percentile")


def counts(draws: np.ndarray, n_topics: int) -> np.ndarray:
    """Topic counts (replicates × topics) of resamples given as topic indices (replicates × m)."""
    draws = np.atleast_2d(draws)
    out = np.zeros((draws.shape[0], n_topics))
    np.add.at(out, (np.repeat(np.arange(draws.shape[0]), draws.shape[1]), draws.ravel()), 1.0)
    return out


def t_interval(
    estimate: float, replicates: np.ndarray, n_topics: int, level: float = 0.95
) -> tuple[float, float]:
    """``estimate ± t_{T−1,(1+level)/2} · s* · √(T/(T−1))`` (the ``"t"`` interval of the module
    docstring; ``s*`` the standard deviation of the finite replicates). NaN, NaN with fewer than
    two finite replicates, two topics or a NaN estimate."""
    from scipy import stats

    reps = np.asarray(replicates, float)
    reps = reps[np.isfinite(reps)]
    if reps.size < 2 or n_topics < 2 or not np.isfinite(estimate):
        return float("nan"), float("nan")
    half = (
        stats.t.ppf((1.0 + level) / 2.0, n_topics - 1) * reps.std(ddof=1) * np.sqrt(n_topics / (n_topics - 1))
    )
    return float(estimate - half), float(estimate + half)


def outside_reason(value: float, low: float, high: float, replicates: np.ndarray, method: str) -> str | None:
    """Why the interval ``[low, high]`` does not contain its estimate ``value`` (None when it does
    or has no ends): the replicates' shift from the estimate, which the method follows."""
    if not (np.isfinite(low) and np.isfinite(high) and np.isfinite(value)) or low <= value <= high:
        return None
    reps = np.asarray(replicates, float)
    reps = reps[np.isfinite(reps)]
    shift = float(reps.mean() - value) if reps.size else float("nan")
    side = "below" if value < low else "above"
    how = {
        "basic": "the basic interval reflects the replicates about the estimate to correct that bias",
        "percentile": "the percentile interval lies where the replicates are",
        "BCa": "BCa's bias correction moves the interval towards the extreme quantiles",
    }.get(method, f"the {method} interval follows the replicates")
    return (
        f"the estimate lies {side} its {method} interval: the bootstrap replicates differ from it by "
        f"{shift:+.3g} on average and {how}"
    )


def bootstrap_interval(
    statistic: Callable[[np.ndarray], np.ndarray],
    n_topics: int,
    *,
    n_boot: int,
    level: float = 0.95,
    seed: int = 0,
    method: str | Sequence[str] = "BCa",
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``scipy.stats.bootstrap`` over ``n_topics`` topics: ``statistic(W)`` maps topic counts
    (replicates × topics) to values (outputs × replicates). ``method``: one for every output, or
    one per output (the resamples are drawn and the statistic computed once; each further method
    reuses them through ``bootstrap_result``; ``"t"`` is computed from the replicates and the
    statistic on the sample itself). Returns the interval's low and high ends per output and the
    bootstrap replicates (outputs × ``n_boot``). Where a method is undefined (all replicates
    equal; NaN replicates, from a resample with too few vectors) the output gets the percentile
    interval of its finite replicates (NaN when none is finite)."""
    import warnings

    from scipy import stats

    def on_indices(draws: np.ndarray, axis: int = -1) -> np.ndarray:
        draws = np.asarray(draws)
        flat = draws.reshape(-1, draws.shape[-1])
        values = statistic(counts(flat, n_topics))
        return values.reshape(values.shape[:1] + draws.shape[:-1])

    methods = [method] if isinstance(method, str) else list(method)
    for m in methods:
        if m not in METHODS:
            raise ValueError(f"unknown bootstrap interval {m!r} (choose one of {', '.join(METHODS)})")
    if n_topics < 2:  # one topic: every resample is the sample itself
        reps = np.atleast_2d(statistic(np.ones((n_boot, max(n_topics, 1)))))
        ends = [percentile_interval(row, level) for row in reps]
        return np.array([e[0] for e in ends]), np.array([e[1] for e in ends]), reps
    found: dict[str, Any] = {}
    # the resamples are drawn once, by the first scipy method (by "percentile" when only "t" is asked)
    drawn_by = [m for m in dict.fromkeys(methods) if m != "t"] or ["percentile"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # degenerate replicates: NaN ends, handled below
        for m in drawn_by:
            found[m] = stats.bootstrap(
                (np.arange(n_topics),),
                on_indices,
                vectorized=True,
                n_resamples=0 if found else n_boot,
                bootstrap_result=next(iter(found.values()), None),
                confidence_level=level,
                method=cast(ScipyMethod, m),  # one of METHODS but t, checked above
                random_state=np.random.default_rng(seed),
            )
    first = next(iter(found.values()))
    reps = np.atleast_2d(np.asarray(first.bootstrap_distribution, dtype=float))
    estimate = np.atleast_1d(statistic(np.ones((1, n_topics)))[:, 0]) if "t" in methods else None
    low, high = np.full(len(reps), np.nan), np.full(len(reps), np.nan)
    for i in range(len(reps)):
        m = methods[i] if len(methods) > 1 else methods[0]
        if m == "t":
            assert estimate is not None
            low[i], high[i] = t_interval(float(estimate[i]), reps[i], n_topics, level)
        else:
            ci = found[m].confidence_interval
            low[i], high[i] = np.atleast_1d(ci.low)[i], np.atleast_1d(ci.high)[i]
        if np.isnan(low[i]) or np.isnan(high[i]):
            low[i], high[i] = percentile_interval(reps[i], level)
    return low, high, reps
