"""Leaderboard meta-evaluation (pure): how well a judge's leaderboard ranks the runs the way a
truth leaderboard does, for every (truth measure, judge measure) pair.

A leaderboard is a `Leaderboard`: per measure, each run's value on each topic and its
aggregate (the file's ``all`` rows, as TREC AutoJudge reads them; the mean over the run's
topics where a measure has none). For each pair of measures:

- the runs: those of both leaderboards (``missing="drop"``), or also the truth's runs the judge
  lacks, with judge value 0 (``"zero"``, autojudge-evaluate's ``--on-missing default``); a run
  only the judge has has no truth value and is left out. ``"error"`` (the default) refuses
  leaderboards whose runs differ and names the runs. The runs are listed by run id, which is
  the order that breaks τ_GAP's ties in the judge's values, as autojudge-evaluate does;
- the measures `MEASURES` on the aggregates: Kendall τ-b, τ_AP-b (Urbano & Marrero), τ_GAP (Gao
  & Oard; truth gaps, judge order), Spearman ρ and Pearson r, each with fewer than three runs
  NaN (autojudge-evaluate refuses those);
- the same over the truth's top ``k`` runs (by the truth's aggregate, ties at the cut broken
  by run id), as autojudge-evaluate's ``kendall@k``;
- per topic: the same on that topic's values (the runs with a value on it in both; under
  ``"zero"`` a truth run the judge has no value for gets 0), and their mean over the topics
  where the measure is defined, with that topic count (autojudge-evaluate's
  ``evaluate_per_topic``);
- a bootstrap interval over the topics (`reljudge.metrics.ranking.bootstrap_ranking_agreement`,
  the t interval by default) of every measure, on the full list and the top k: the topics are
  those every listed run has in both leaderboards; the interval's estimate compares the runs'
  means over those topics, which equals the aggregate value when the ``all`` rows are those
  means (``ci_estimate`` says what it is centred on).

Where the definitions differ from autojudge-evaluate 1.1.0: τ_AP-b is NaN when a leaderboard
ties every run (autojudge-evaluate scores that direction 0 and averages it in).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from reljudge.errors import InputError
from reljudge.metrics.base import RankingMeasure
from reljudge.metrics.bootstrap import METHODS as INTERVALS
from reljudge.metrics.ranking import KENDALL_TAU_B, PEARSON, SPEARMAN, TAU_AP_B, TAU_GAP

#: the measures reported, in report order
MEASURES: tuple[RankingMeasure, ...] = (KENDALL_TAU_B, TAU_AP_B, TAU_GAP, SPEARMAN, PEARSON)
#: the same measures' names in autojudge-evaluate 1.1.0 (``--correlation``)
AUTOJUDGE_NAMES = {
    "kendall_tau_b": "kendall",
    "tau_ap_b": "tauap_b",
    "tau_gap": "tau_gap",
    "spearman": "spearman",
    "pearson": "pearson",
}
MISSING = ("error", "drop", "zero")
#: the fewest runs a correlation is computed on (autojudge-evaluate's own floor)
MIN_RUNS = 3
#: at most this many run ids are named in a message
NAMED = 10

PerTopic = Mapping[str, Mapping[str, Mapping[str, float]]]  # measure -> run -> topic -> value


@dataclass(frozen=True)
class Leaderboard:
    """One leaderboard: ``per_topic[measure][run][topic]`` and ``aggregate[measure][run]``;
    ``aggregate_from[measure]``: ``"all rows"`` or ``"mean over topics"``."""

    source: str
    layout: str
    per_topic: Mapping[str, Mapping[str, Mapping[str, float]]]
    aggregate: Mapping[str, Mapping[str, float]]
    aggregate_from: Mapping[str, str]
    notes: tuple[str, ...] = ()

    @property
    def runs(self) -> set[str]:
        return {r for values in self.aggregate.values() for r in values}

    @property
    def topics(self) -> set[str]:
        return {t for runs in self.per_topic.values() for topics in runs.values() for t in topics}


def leaderboard(
    source: str,
    layout: str,
    per_topic: PerTopic,
    all_rows: Mapping[str, Mapping[str, float]],
    notes: Sequence[str] = (),
) -> Leaderboard:
    """A `Leaderboard` from its per-topic values and its ``all`` rows: a measure with ``all``
    rows takes them (every run with per-topic values of it must have one); one without gets the
    mean over each run's topics."""
    aggregate: dict[str, dict[str, float]] = {}
    aggregate_from: dict[str, str] = {}
    for measure in sorted(set(per_topic) | set(all_rows)):
        rows = all_rows.get(measure)
        topics = per_topic.get(measure, {})
        if rows:
            lacking = sorted(set(topics) - set(rows))
            if lacking:
                raise InputError(
                    f"measure {measure!r} has 'all' rows, but not for run(s) {_named(lacking)}", source
                )
            aggregate[measure] = dict(rows)
            aggregate_from[measure] = "all rows"
        else:
            aggregate[measure] = {r: float(np.mean(list(v.values()))) for r, v in topics.items() if v}
            aggregate_from[measure] = "mean over topics"
    return Leaderboard(source, layout, per_topic, aggregate, aggregate_from, tuple(notes))


@dataclass
class MetaReport:
    """What `meta_evaluate` found: ``correlations`` (a row per measure pair, measure and run
    list), ``per_topic`` (a row per measure pair, topic and measure), ``pairs`` (a row per measure
    pair: runs, topics, ties) and ``settings``."""

    correlations: list[dict[str, Any]] = field(default_factory=list)
    per_topic: list[dict[str, Any]] = field(default_factory=list)
    pairs: list[dict[str, Any]] = field(default_factory=list)
    settings: dict[str, Any] = field(default_factory=dict)


def _named(runs: Sequence[str]) -> str:
    shown = ", ".join(runs[:NAMED])
    return shown + (f" and {len(runs) - NAMED} more" if len(runs) > NAMED else "")


def _chosen(asked: Sequence[str] | None, board: Leaderboard, option: str) -> list[str]:
    available = sorted(board.aggregate)
    if not asked:
        return available
    unknown = [m for m in asked if m not in board.aggregate]
    if unknown:
        raise InputError(
            f"{option}: no measure {_named(unknown)} in {board.source} (it has {_named(available)})"
        )
    return list(dict.fromkeys(asked))


def aligned_runs(
    truth: Mapping[str, float], judge: Mapping[str, float], missing: str, what: str
) -> list[str]:
    """The runs compared under the ``missing`` policy (module docstring), sorted by run id."""
    if missing not in MISSING:
        raise InputError(f"--missing must be one of {', '.join(MISSING)}, got {missing!r}")
    judge_lacks = sorted(set(truth) - set(judge))
    truth_lacks = sorted(set(judge) - set(truth))
    if missing == "error" and (judge_lacks or truth_lacks):
        parts = []
        if judge_lacks:
            parts.append(f"not in the judge's: {_named(judge_lacks)}")
        if truth_lacks:
            parts.append(f"not in the truth's: {_named(truth_lacks)}")
        raise InputError(
            f"the leaderboards rank different runs ({what}): {'; '.join(parts)}. "
            "--missing drop leaves them out; --missing zero gives the truth's runs the judge lacks "
            "the judge value 0 (and leaves out runs the truth lacks)"
        )
    if missing == "zero":
        return sorted(truth)
    return sorted(set(truth) & set(judge))


def top_runs(truth: Mapping[str, float], runs: Sequence[str], k: int) -> list[str]:
    """The truth's ``k`` best of ``runs`` (ties at the cut broken by run id), sorted by run id."""
    return sorted(sorted(runs, key=lambda r: (-truth[r], r))[:k])


def correlations(
    truth: Mapping[str, float], judge: Mapping[str, float], runs: Sequence[str]
) -> dict[str, float]:
    """Every measure of `MEASURES` between the truth's and the judge's values of ``runs`` (in
    that order; a run the judge lacks counts 0); NaN with fewer than `MIN_RUNS` runs."""
    if len(runs) < MIN_RUNS:
        return {m.name: math.nan for m in MEASURES}
    t = np.array([truth[r] for r in runs], float)
    j = np.array([judge.get(r, 0.0) for r in runs], float)
    return {m.name: _quiet(m, t, j) for m in MEASURES}


def _quiet(measure: RankingMeasure, t: np.ndarray, j: np.ndarray) -> float:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a constant input: NaN, which the report shows
        return float(measure.compute(t, j))


def _tied_pairs(values: Sequence[float]) -> int:
    v = np.asarray(values, float)
    return int((np.count_nonzero(v[:, None] == v[None, :]) - v.size) // 2)


def meta_evaluate(
    judge: Leaderboard,
    truth: Leaderboard,
    *,
    judge_measures: Sequence[str] | None = None,
    truth_measures: Sequence[str] | None = None,
    top_k: int = 10,
    missing: str = "error",
    n_boot: int = 1000,
    level: float = 0.95,
    seed: int = 0,
    interval: str = "t",
) -> MetaReport:
    """The meta-evaluation of ``judge`` against ``truth`` (module docstring)."""
    from reljudge.metrics.ranking import interval_note

    if top_k < 1:
        raise InputError(f"--top-k must be at least 1, got {top_k}")
    if n_boot < 0:
        raise InputError(f"--bootstrap must be 0 or more, got {n_boot}")
    if interval not in INTERVALS:
        raise InputError(f"--interval must be one of {', '.join(INTERVALS)}, got {interval!r}")
    if missing not in MISSING:
        raise InputError(f"--missing must be one of {', '.join(MISSING)}, got {missing!r}")
    report = MetaReport()
    truth_chosen = _chosen(truth_measures, truth, "--truth-measure")
    judge_chosen = _chosen(judge_measures, judge, "--judge-measure")
    for tm in truth_chosen:
        for jm in judge_chosen:
            _one_pair(report, judge, truth, tm, jm, top_k, missing, n_boot, level, seed, interval)
    report.settings = {
        "judge": judge.source,
        "truth": truth.source,
        "judge_layout": judge.layout,
        "truth_layout": truth.layout,
        "judge_aggregate": dict(judge.aggregate_from),
        "truth_aggregate": dict(truth.aggregate_from),
        "judge_measures": judge_chosen,
        "truth_measures": truth_chosen,
        "top_k": top_k,
        "missing": missing,
        "bootstrap": n_boot,
        "level": level,
        "seed": seed,
        "interval": interval,
        "interval_note": interval_note(n_boot, level, interval) if n_boot else "no bootstrap (--bootstrap 0)",
        "measures": {m.name: m.label for m in MEASURES},
        "autojudge_names": AUTOJUDGE_NAMES,
        "ties": (
            "Kendall tau-b: a pair tied in either leaderboard is neither concordant nor discordant; "
            "tau_AP-b: each leaderboard walked by its tie groups (Urbano & Marrero 2017), NaN when one ties every run; "
            "tau_GAP: the judge's ties broken by run id (as autojudge-evaluate 1.1.0), truth ties add no gap; "
            "Spearman: tied values get their mean rank"
        ),
        "top_k_rule": f"the truth's {top_k} best runs by its aggregate, ties at the cut broken by run id",
        "per_topic_rule": "each topic both leaderboards have; its runs with a value in both; mean over the topics "
        f"where the measure is defined (at least {MIN_RUNS} runs, not constant)",
        "notes": [*judge.notes, *truth.notes],
    }
    return report


def _one_pair(
    report: MetaReport,
    judge: Leaderboard,
    truth: Leaderboard,
    tm: str,
    jm: str,
    top_k: int,
    missing: str,
    n_boot: int,
    level: float,
    seed: int,
    interval: str,
) -> None:
    t_agg, j_agg = truth.aggregate[tm], judge.aggregate[jm]
    runs = aligned_runs(t_agg, j_agg, missing, f"truth {tm} vs judge {jm}")
    top = top_runs(t_agg, runs, top_k)
    t_pt, j_pt = truth.per_topic.get(tm, {}), judge.per_topic.get(jm, {})
    topics = sorted({q for r in t_pt.values() for q in r} & {q for r in j_pt.values() for q in r})
    per_topic: dict[str, list[float]] = {key: [] for m in MEASURES for key in (m.name, f"{m.name}@k")}
    for q in topics:
        t_q = {r: t_pt[r][q] for r in runs if q in t_pt.get(r, {})}
        j_q = {r: j_pt[r][q] for r in runs if q in j_pt.get(r, {})}
        if missing == "zero":
            j_q = {r: j_q.get(r, 0.0) for r in t_q}
        q_runs = sorted(set(t_q) & set(j_q))
        scopes = (("all", q_runs), ("top", top_runs(t_q, q_runs, top_k)))
        for scope, which in scopes:
            values = correlations(t_q, j_q, which)
            for name, value in values.items():
                per_topic[name if scope == "all" else f"{name}@k"].append(value)
                report.per_topic.append(
                    {
                        "truth_measure": tm,
                        "judge_measure": jm,
                        "topic": q,
                        "runs": "all" if scope == "all" else f"top {top_k}",
                        "measure": name,
                        "n_runs": len(which),
                        "value": value,
                    }
                )
    report.pairs.append(
        {
            "truth_measure": tm,
            "judge_measure": jm,
            "runs": len(runs),
            "top_runs": len(top),
            "topics": len(topics),
            "judge_only_runs": sorted(set(j_agg) - set(t_agg)),
            "truth_only_runs": sorted(set(t_agg) - set(j_agg)),
            "tied_pairs_truth": _tied_pairs([t_agg[r] for r in runs]),
            "tied_pairs_judge": _tied_pairs([j_agg.get(r, 0.0) for r in runs]),
        }
    )
    for scope, which in (("all", runs), (f"top {top_k}", top)):
        values = correlations(t_agg, j_agg, which)
        for m in MEASURES:
            topic_values = np.array(per_topic[m.name if scope == "all" else f"{m.name}@k"], float)
            defined = topic_values[np.isfinite(topic_values)]
            row: dict[str, Any] = {
                "truth_measure": tm,
                "judge_measure": jm,
                "runs": scope,
                "measure": m.name,
                "n_runs": len(which),
                "value": values[m.name],
            }
            row.update(_interval(m, t_pt, j_pt, which, missing, n_boot, level, seed, interval))
            row.update(
                {
                    "per_topic_mean": float(defined.mean()) if defined.size else math.nan,
                    "per_topic_topics": int(defined.size),
                    "per_topic_of": len(topics),
                }
            )
            report.correlations.append(row)


def _interval(
    measure: RankingMeasure,
    t_pt: Mapping[str, Mapping[str, float]],
    j_pt: Mapping[str, Mapping[str, float]],
    runs: Sequence[str],
    missing: str,
    n_boot: int,
    level: float,
    seed: int,
    interval: str,
) -> dict[str, Any]:
    """The bootstrap interval's columns (NaN without a bootstrap or where it cannot be drawn)."""
    from reljudge.metrics.ranking import bootstrap_ranking_agreement

    empty = {"ci_low": math.nan, "ci_high": math.nan, "ci_estimate": math.nan, "ci_topics": 0}
    if n_boot == 0 or len(runs) < MIN_RUNS:
        return empty
    x = {r: dict(t_pt.get(r, {})) for r in runs}
    y = {r: dict(j_pt.get(r, {})) for r in runs}
    if missing == "zero":
        y = {r: {q: y[r].get(q, 0.0) for q in x[r]} for r in runs}
    shared = set.intersection(*(set(x[r]) & set(y[r]) for r in runs))
    if len(shared) < 2:
        return empty
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        found = bootstrap_ranking_agreement(
            x, y, measure, n_boot=n_boot, level=level, seed=seed, interval=interval
        )
    return {"ci_low": found.low, "ci_high": found.high, "ci_estimate": found.value, "ci_topics": len(shared)}
