"""Leaderboard impact of preference qrels (thesis §3.1.4): MRR@10 under the preference qrels
and under the original qrels, Kendall τ-b between the two leaderboards with a bootstrap over
queries, the "perfect ranker", each run's consistency with the preferences, and
leave-one-run-out. MRR@10 is ir_measures' ``RR@10`` (`reljudge.metrics.measures`); a sampled
query a run does not rank scores 0.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from reljudge.analyses.shallow.preference_outcomes import TIE, Preferences
from reljudge.analyses.shallow.shallow_pools import Pools, without_run
from reljudge.analyses.shallow.tournament import TournamentTies, preference_qrels
from reljudge.metrics.measures import system_measures
from reljudge.metrics.ranking import bootstrap_ranking_agreement, ranking_agreement

Rankings = Mapping[str, Mapping[str, Sequence[str]]]  # run -> qid -> docids, best first


def binary_qrels(
    qrels: Mapping[str, Mapping[str, float]], queries: Sequence[str], relevant: float
) -> dict[str, dict[str, int]]:
    """The qrels of ``queries`` as 0/1 (grade ``>= relevant`` is 1)."""
    return {q: {d: int(g >= relevant) for d, g in qrels.get(q, {}).items()} for q in queries if q in qrels}


def as_run(rankings: Mapping[str, Sequence[str]], depth: int = 10) -> dict[str, dict[str, float]]:
    """A ranking as a run with scores that keep its order (top ``depth``)."""
    return {q: {d: float(depth - i) for i, d in enumerate(docs[:depth])} for q, docs in rankings.items()}


def per_query(
    qrels: Mapping[str, Mapping[str, float]],
    rankings: Rankings,
    queries: Sequence[str],
    measure: str = "RR@10",
) -> dict[str, dict[str, float]]:
    """``{run: {qid: value}}`` over every query of ``queries``, 0 where the run has no ranking."""
    runs = {name: as_run(r, depth=1000) for name, r in rankings.items()}
    values = system_measures({q: qrels[q] for q in queries if q in qrels}, runs, measure)
    return {name: {q: v.get(q, 0.0) for q in queries} for name, v in values.items()}


def means(values: Mapping[str, Mapping[str, float]]) -> dict[str, float]:
    return {r: (sum(v.values()) / len(v) if v else float("nan")) for r, v in values.items()}


def perfect_ranker(
    qrels: Mapping[str, Mapping[str, float]], queries: Sequence[str], relevant: float
) -> dict[str, list[str]]:
    """A ranking with the original relevant qrels first (by grade, then qrels order)."""
    out: dict[str, list[str]] = {}
    for q in queries:
        docs = qrels.get(q, {})
        rel = [d for d, g in docs.items() if g >= relevant]
        out[q] = sorted(rel, key=lambda d: -docs[d])
    return out


def consistency(
    rankings: Mapping[str, Sequence[str]], prefs: Preferences, depth: int = 10
) -> dict[str, float | int]:
    """Over the decided pairs with both passages in the run's top ``depth``, the share where the
    run ranks the preferred passage higher."""
    agree = total = 0
    for (q, a, b), w in prefs.outcomes.items():
        if w == TIE:
            continue
        top = {d: i for i, d in enumerate(rankings.get(q, ())[:depth])}
        if a in top and b in top:
            total += 1
            loser = b if w == a else a
            agree += top[w] < top[loser]
    return {"pairs": total, "agree": agree, "share": agree / total if total else float("nan")}


def kendall(x: Mapping[str, float], y: Mapping[str, float]) -> float:
    return float(ranking_agreement(x, y, "kendall"))


def tau_interval(
    x: Mapping[str, Mapping[str, float]], y: Mapping[str, Mapping[str, float]], *, n_boot: int, seed: int
) -> dict[str, float]:
    iv = bootstrap_ranking_agreement(x, y, "kendall", n_boot=n_boot, seed=seed)
    return {"tau": iv.value, "low": iv.low, "high": iv.high, "n_boot": iv.n_boot}


def mean_intervals(
    values: Mapping[str, Mapping[str, float]], *, n_boot: int, seed: int, level: float = 0.95
) -> dict[str, tuple[float, float]]:
    """Percentile bootstrap interval over queries of each run's mean."""
    import numpy as np

    from reljudge.metrics.base import percentile_interval

    out: dict[str, tuple[float, float]] = {}
    rng = np.random.default_rng(seed)
    names = list(values)
    if not names:
        return out
    queries = list(next(iter(values.values())))
    if not queries or n_boot <= 0:
        return {r: (float("nan"), float("nan")) for r in names}
    matrix = np.array([[values[r][q] for q in queries] for r in names], float)
    draws = rng.integers(0, len(queries), size=(n_boot, len(queries)))
    reps = matrix[:, draws].mean(axis=2)  # runs x n_boot
    for i, r in enumerate(names):
        out[r] = percentile_interval(reps[i], level)
    return out


def leave_one_run_out(
    pools: Pools, prefs: Preferences, rankings: Rankings, *, ties: TournamentTies = "ignore"
) -> dict[str, dict[str, float | int]]:
    """For each run: rebuild the preference qrels without the passages only it contributed, and
    its MRR@10 under them (``mrr``), with how many passages were removed."""
    queries = list(pools)
    out: dict[str, dict[str, float | int]] = {}
    for run in rankings:
        reduced = without_run(pools, run)
        removed = sum(len(pools[q]) - len(reduced[q]) for q in queries)
        qrels = preference_qrels(reduced, prefs, ties=ties).qrels()
        values = per_query(qrels, {run: rankings[run]}, queries)[run]
        out[run] = {
            "removed_passages": removed,
            "mrr": sum(values.values()) / len(values) if values else float("nan"),
        }
    return out
