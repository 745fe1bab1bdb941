"""Step ``leaderboard`` of ``judge shallow``: MRR@10 under the preference qrels vs the original
qrels (thesis §3.1.4), with bootstrap intervals, the perfect ranker, consistency and
leave-one-run-out."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from reljudge.metrics.shallow import leaderboard as lb
from reljudge.metrics.shallow import preference_qrels
from reljudge.shallow.pooling import _json, _preferences, _runs


def _ranks(values: dict[str, float]) -> dict[str, int]:
    order = sorted(values, key=lambda r: -values[r])
    return {r: i + 1 for i, r in enumerate(order)}


def leaderboard_step(
    *,
    pool: Path,
    runs: Path,
    qrels: Path,
    out: Path,
    judged: Path | None = None,
    human_qrels: Path | None = None,
    relevant: float = 1,
    ties: str = "ignore",
    compare: str | None = None,
    n_boot: int = 1000,
    seed: int = 0,
    loro: bool = True,
    plot: bool = False,
) -> dict[str, Any]:
    """Write ``out/leaderboard.csv``, ``out/leaderboard.json`` and, with ``plot``,
    ``out/leaderboard.png``; return the report."""
    from reljudge.io.atomic import write_text_atomic
    from reljudge.io.tables import csv_text
    from reljudge.io.trec import read_qrels

    pools, prefs, info = _preferences(pool, judged, human_qrels)
    queries = list(pools)
    result = preference_qrels(pools, prefs, ties=ties)  # type: ignore[arg-type]
    pref_qrels = result.qrels()
    grades = read_qrels(qrels)
    systems = _runs(runs)
    rankings = {name: {q: run.ranked(q) for q in queries if q in run} for name, run in systems.items()}
    original = lb.binary_qrels(grades, queries, relevant)
    pref_values = lb.per_query(pref_qrels, rankings, queries)
    orig_values = lb.per_query(original, rankings, queries)
    pref_mrr, orig_mrr = lb.means(pref_values), lb.means(orig_values)
    pref_ci = lb.mean_intervals(pref_values, n_boot=n_boot, seed=seed)
    orig_ci = lb.mean_intervals(orig_values, n_boot=n_boot, seed=seed)
    perfect = lb.per_query(pref_qrels, {"perfect": lb.perfect_ranker(grades, queries, relevant)}, queries)
    report: dict[str, Any] = {
        "pool": str(pool),
        "source": str(judged or human_qrels),
        "source_counts": info,
        "queries": len(queries),
        "runs": len(systems),
        "tournament": result.counts(),
        "original_relevant": {
            "threshold": relevant,
            "qrels": sum(sum(d.values()) for d in original.values()),
        },
        "tau_preference_vs_original_mrr10": lb.tau_interval(
            pref_values, orig_values, n_boot=n_boot, seed=seed
        ),
        "perfect_ranker_mrr10_under_preference_qrels": lb.means(perfect)["perfect"],
    }
    compare_values: dict[str, dict[str, float]] | None = None
    if compare:
        graded = {q: dict(grades[q]) for q in queries if q in grades}
        compare_values = lb.per_query(graded, rankings, queries, measure=compare)
        report[f"tau_preference_mrr10_vs_{compare}"] = lb.tau_interval(
            pref_values, compare_values, n_boot=n_boot, seed=seed
        )
        report[f"tau_original_mrr10_vs_{compare}"] = lb.tau_interval(
            orig_values, compare_values, n_boot=n_boot, seed=seed
        )
    pref_rank, orig_rank = _ranks(pref_mrr), _ranks(orig_mrr)
    loro_values = lb.leave_one_run_out(pools, prefs, rankings, ties=ties) if loro else {}  # type: ignore[arg-type]
    rows = []
    for name in sorted(systems, key=lambda r: (pref_rank[r], r)):
        row: dict[str, Any] = {
            "run": name,
            "mrr10_preference": round(pref_mrr[name], 4),
            "pref_low": round(pref_ci[name][0], 4),
            "pref_high": round(pref_ci[name][1], 4),
            "rank_preference": pref_rank[name],
            "mrr10_original": round(orig_mrr[name], 4),
            "orig_low": round(orig_ci[name][0], 4),
            "orig_high": round(orig_ci[name][1], 4),
            "rank_original": orig_rank[name],
        }
        if compare and compare_values is not None:
            row[compare] = round(lb.means(compare_values)[name], 4)
        c = lb.consistency(rankings[name], prefs)
        row["consistency_pairs"] = c["pairs"]
        row["consistency"] = round(c["share"], 4) if c["pairs"] else ""
        if loro:
            v = loro_values[name]
            others = {r: m for r, m in pref_mrr.items() if r != name}
            row["loro_removed"] = v["removed_passages"]
            row["loro_mrr10"] = round(v["mrr"], 4)
            row["loro_rank"] = 1 + sum(1 for m in others.values() if m > v["mrr"])
        rows.append(row)
    report["leaderboard"] = rows
    out.mkdir(parents=True, exist_ok=True)
    write_text_atomic(out / "leaderboard.csv", csv_text(rows))
    if plot:
        from reljudge.shallow.plots import leaderboard_plot

        name = (
            f"human grades of {human_qrels.name}"
            if judged is None and human_qrels
            else f"pairwise run {judged}"
        )
        leaderboard_plot(
            rows, out / "leaderboard.png", title=f"MRR@10 on {len(queries)} queries; preferences: {name}"
        )
        report["plot"] = str(out / "leaderboard.png")
    write_text_atomic(out / "leaderboard.json", _json(report))
    return report
