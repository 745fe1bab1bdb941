"""``judge shallow`` from paths to written files (thesis §3.1): each step reads its inputs
(`reljudge.analyses.shallow.files`), computes with the pure modules of this folder, writes its
outputs atomically and returns its report, which the command prints.

- ``btp-pairs`` and ``btp``: better than perfect (§3.1.2), and the best-known update (SH-12)
  from the same judged pairs;
- ``pool`` and ``tournament``: shallow pools, preference qrels by tournament and win ratios
  (§3.1.3–3.1.4);
- ``leaderboard``: MRR@10 under the preference qrels vs the original qrels (§3.1.4), with
  bootstrap intervals, the perfect ranker, consistency and leave-one-run-out.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from reljudge.analyses.inputs import Scores, read_human
from reljudge.analyses.shallow import leaderboard as lb
from reljudge.analyses.shallow.btp import (
    BtpPair,
    best_known,
    btp_pairs,
    category_b_test,
    gold_accuracy,
    reference_passages,
    tally,
)
from reljudge.analyses.shallow.shallow_pools import (
    REFERENCE,
    build_pools,
    missing_queries,
    pool_stats,
    sample_queries,
    top_of_pool,
    unordered_pairs,
)
from reljudge.analyses.shallow.tournament import pairings_won, preference_qrels
from reljudge.analyses.shallow.winratio import win_ratios
from reljudge.errors import InputError


def _blank(corpus: Any, docid: str) -> bool:
    return docid not in corpus or not corpus[docid].strip()


def _qrels_source(qrels: Path | Scores, name: str | None) -> str:
    """How a report names the qrels: ``name``, else the file's path (qrels given as read and not
    named: "qrels given in memory")."""
    if name is not None:
        return name
    return "qrels given in memory" if isinstance(qrels, dict) else str(qrels)


def btp_pairs_step(
    *,
    qrels: Path | Scores,
    run: Path,
    out: Path,
    relevant: float = 1,
    choice: str = "first",
    corpus: Path | None = None,
    gold: int = 0,
    seed: int = 0,
    qrels_name: str | None = None,
) -> dict[str, Any]:
    """Write ``out/pairs.tsv`` (``qid ref A|B|gold reference other``, the ``--pairs`` input of
    ``judge run --method pairwise``) and ``out/btp-pairs.json``; return the report. ``qrels``: a
    qrels file or the qrels as read (a dataset's), named ``qrels_name`` in the report."""
    from reljudge.analyses.shallow.files import write_btp_pairs, write_json
    from reljudge.io.trec import read_run

    grades = read_human(qrels)
    system = read_run(run)
    rankings = {q: system.ranked(q) for q in system}
    refs = reference_passages(grades, relevant=relevant, choice=choice, rankings=rankings)  # type: ignore[arg-type]
    made = btp_pairs(refs, rankings)
    skipped = {reason: len(qs) for reason, qs in made.skipped.items()}
    pairs = made.pairs
    if corpus is not None:
        from reljudge.io.corpus import load_corpus

        text = load_corpus(
            corpus, docids={d for p in pairs for d in (p.reference, p.other)} | set(refs.values())
        )
        no_ref = [p for p in pairs if _blank(text, p.reference)]
        no_other = [p for p in pairs if not _blank(text, p.reference) and _blank(text, p.other)]
        if no_ref:
            skipped["reference passage without text"] = len(no_ref)
        if no_other:
            skipped["compared passage without text"] = len(no_other)
        dropped = set(no_ref) | set(no_other)
        pairs = [p for p in pairs if p not in dropped]
    gold_pairs: list[BtpPair] = []
    if gold:
        rng = random.Random(seed)
        pool = list(pairs)
        if len({p.qid for p in pool}) < 2:
            raise InputError("gold pairs need at least two queries with a pair")
        for p in rng.sample(pool, min(gold, len(pool))):
            candidates = [
                o.reference for o in pool if o.qid != p.qid and o.reference not in grades.get(p.qid, {})
            ]
            if candidates:
                gold_pairs.append(BtpPair(p.qid, "gold", p.reference, rng.choice(candidates)))
    out.mkdir(parents=True, exist_ok=True)
    n = write_btp_pairs([*pairs, *gold_pairs], out / "pairs.tsv")
    counts = {c: sum(1 for p in pairs if p.category == c) for c in ("A", "B")}
    total = counts["A"] + counts["B"]
    report = {
        "qrels": _qrels_source(qrels, qrels_name),
        "run": str(run),
        "reference": {"choice": choice, "relevant": relevant},
        "queries_in_qrels": len(grades),
        "queries_with_reference": len(refs),
        "queries_without_reference": len(grades) - len(refs),
        "skipped": skipped,
        "categories": {
            c: {"queries": k, "share": k / total if total else float("nan")} for c, k in counts.items()
        },
        "gold_pairs": len(gold_pairs),
        "pairs": n,
        "calls_both_orders": 2 * n,
        "pairs_file": str(out / "pairs.tsv"),
    }
    write_json(out / "btp-pairs.json", report)
    return report


def btp_step(
    *,
    pairs: Path,
    judged: Path | None = None,
    human_qrels: Path | None = None,
    out: Path | None = None,
    update_out: Path | None = None,
) -> dict[str, Any]:
    """The tallies of a judged btp pairs file; with ``update_out``, the best-known qrels: q*
    replaced where the run's top passage won (for a pairwise run: in both orders)."""
    from reljudge.analyses.shallow.files import load_preferences, read_btp_pairs

    btp = read_btp_pairs(pairs)
    prefs, info = load_preferences(
        [(p.qid, p.reference, p.other) for p in btp], judged=judged, human_qrels=human_qrels
    )
    real = [p for p in btp if p.category != "gold"]
    gold = [p for p in btp if p.category == "gold"]
    tallies = tally(real, prefs)
    total = sum(t.queries for t in tallies.values())
    report: dict[str, Any] = {
        "pairs_file": str(pairs),
        "source": str(judged or human_qrels),
        "source_counts": info,
        "categories": {
            c: {**t.as_dict(), "share_of_queries": t.queries / total if total else float("nan")}
            for c, t in tallies.items()
        },
        "category_b_binomial": category_b_test(tallies["B"]),
    }
    if gold:
        report["gold"] = gold_accuracy(gold, prefs)
    if update_out is not None:
        from reljudge.analyses.shallow.files import write_best_known

        best, replaced = best_known(real, prefs)
        write_best_known(best, replaced, update_out, str(judged or human_qrels))
        report["update"] = {
            "queries": len(best),
            "replaced": len(replaced),
            "qrels": str(update_out),
            "provenance": f"{update_out}.provenance.tsv",
        }
    if out is not None:
        from reljudge.analyses.shallow.files import write_json

        write_json(out, report)
    return report


def pool_step(
    *,
    runs: Path,
    qrels: Path | Scores,
    out: Path,
    relevant: float = 1,
    choice: str = "first",
    runs_subset: list[str] | None = None,
    sample: int | None = None,
    min_pool: int = 2,
    seed: int = 0,
    corpus: Path | None = None,
    qrels_name: str | None = None,
) -> dict[str, Any]:
    """Write ``out/pool.tsv`` (the sampled pools), ``out/pairs.txt`` (every unordered pair once,
    the ``--pairs`` input of ``judge run --method pairwise``) and ``out/pool.json``. ``qrels``: a
    qrels file or the qrels as read (a dataset's), named ``qrels_name`` in the report."""
    from reljudge.analyses.shallow.files import read_runs, write_json, write_pairs, write_pool

    if choice == "best-ranked":
        raise InputError("--qrel-choice best-ranked needs one run; the pool takes 'first' or 'top-grade'")
    grades = read_human(qrels)
    systems = read_runs(runs, runs_subset)
    refs = reference_passages(grades, relevant=relevant, choice=choice)  # type: ignore[arg-type]
    top = {name: {q: run.ranked(q)[0] for q in run if run[q]} for name, run in systems.items()}
    pools = build_pools(top, refs)
    chosen = sample_queries(pools, sample, min_pool=min_pool, seed=seed)
    sampled = {q: pools[q] for q in chosen}
    pairs = unordered_pairs(pools, chosen)
    missing = missing_queries(top, refs)
    report: dict[str, Any] = {
        "qrels": _qrels_source(qrels, qrels_name),
        "runs": len(systems),
        "reference": {"choice": choice, "relevant": relevant},
        "queries_in_qrels": len(grades),
        "queries_without_reference": len(grades) - len(refs),
        "runs_missing_queries": {r: len(qs) for r, qs in missing.items()},
        "pool": pool_stats(pools),
        "sample": {"requested": sample, "min_pool": min_pool, "seed": seed, **pool_stats(sampled)},
        "pairs": len(pairs),
        "calls_both_orders": 2 * len(pairs),
    }
    if corpus is not None:
        from reljudge.io.corpus import load_corpus

        docs = {d for pool in sampled.values() for d in pool}
        text = load_corpus(corpus, docids=docs)
        blank = sorted(d for d in docs if d not in text or not text[d].strip())
        report["passages_without_text"] = {
            "passages": len(docs),
            "without_text": len(blank),
            "docids": blank[:20],
        }
        lacking = sum(1 for _, a, b in pairs if a in blank or b in blank)
        report["pairs_with_a_passage_without_text"] = lacking
        report["calls_both_orders_with_text"] = 2 * (len(pairs) - lacking)
    out.mkdir(parents=True, exist_ok=True)
    write_pool(sampled, out / "pool.tsv")
    write_pairs(pairs, out / "pairs.txt")
    report["files"] = {"pool": str(out / "pool.tsv"), "pairs": str(out / "pairs.txt")}
    write_json(out / "pool.json", report)
    return report


def _source_name(judged: Path | None, human_qrels: Path | None) -> str:
    return (
        f"human grades of {human_qrels.name}"
        if human_qrels is not None
        else f"pairwise run {Path(str(judged)).name}"
    )


def tournament_step(
    *,
    pool: Path,
    out: Path,
    judged: Path | None = None,
    human_qrels: Path | None = None,
    ties: str = "ignore",
    alpha: float = 0.05,
    plot: bool = False,
) -> dict[str, Any]:
    """Write ``out/preference.qrels`` (TREC qrels), ``out/win-ratios.csv``, ``out/tournament.json``
    and, with ``plot``, ``out/win-ratios.png``."""
    from reljudge.analyses.shallow.files import read_pool_preferences, write_json
    from reljudge.io.atomic import write_text_atomic
    from reljudge.io.tables import csv_text
    from reljudge.io.trec import write_qrels

    pools, prefs, info = read_pool_preferences(pool, judged, human_qrels)
    result = preference_qrels(pools, prefs, ties=ties)  # type: ignore[arg-type]
    originals = {q: [d for d, c in p.items() if REFERENCE in c] for q, p in pools.items()}
    top = top_of_pool(pools)
    order = [REFERENCE, *sorted(r for r in top if r != REFERENCE)]
    ratios = win_ratios({r: top[r] for r in order if r in top}, prefs, list(pools), alpha=alpha)
    significant = [
        (ratios.runs[i], ratios.runs[j])
        for i in range(len(ratios.runs))
        for j in range(len(ratios.runs))
        if i != j and ratios.significant(i, j)
    ]
    ref_index = ratios.runs.index(REFERENCE) if REFERENCE in ratios.runs else None
    report: dict[str, Any] = {
        "pool": str(pool),
        "source": str(judged or human_qrels),
        "source_counts": info,
        "preferences": prefs.counts(),
        "ties": ties,
        "tournament": {**result.counts(), "cycle_sizes": result.cycle_sizes()},
        "pairings_won": {
            "preference_qrels": pairings_won(result.winners, prefs),
            "original_qrels": pairings_won(originals, prefs),
        },
        "win_ratios": {
            "runs": len(ratios.runs),
            "comparisons": ratios.comparisons,
            "alpha": alpha,
            "bonferroni_level": ratios.threshold,
            "significant_wins": len(significant),
            "runs_significantly_beating_qrels": [a for a, b in significant if b == REFERENCE],
            "qrels_significantly_beats": [b for a, b in significant if a == REFERENCE],
            "runs_beating_every_other": [
                ratios.runs[i] for i in range(len(ratios.runs)) if ratios.beaten(i)[1] == len(ratios.runs) - 1
            ],
        },
    }
    if ref_index is None:
        report["win_ratios"]["note"] = "no q* in the pool file"
    out.mkdir(parents=True, exist_ok=True)
    write_qrels(result.qrels(), out / "preference.qrels")
    write_text_atomic(out / "win-ratios.csv", csv_text(ratios.matrix_rows()))
    files = {"preference_qrels": str(out / "preference.qrels"), "win_ratios": str(out / "win-ratios.csv")}
    if plot:
        from reljudge.analyses.shallow.plots import win_ratio_heatmap

        win_ratio_heatmap(
            ratios,
            out / "win-ratios.png",
            title=f"Win ratios (column beats row); judge: {_source_name(judged, human_qrels)}",
        )
        files["heatmap"] = str(out / "win-ratios.png")
    report["files"] = files
    write_json(out / "tournament.json", report)
    return report


def _ranks(values: dict[str, float]) -> dict[str, int]:
    order = sorted(values, key=lambda r: -values[r])
    return {r: i + 1 for i, r in enumerate(order)}


def leaderboard_step(
    *,
    pool: Path,
    runs: Path,
    qrels: Path | Scores,
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
    qrels_name: str | None = None,
) -> dict[str, Any]:
    """Write ``out/leaderboard.csv``, ``out/leaderboard.json`` and, with ``plot``,
    ``out/leaderboard.png``; return the report. ``qrels``: a qrels file or the qrels as read (a
    dataset's), named ``qrels_name`` in the report."""
    from reljudge.analyses.shallow.files import read_pool_preferences, read_runs, write_json
    from reljudge.io.atomic import write_text_atomic
    from reljudge.io.tables import csv_text

    pools, prefs, info = read_pool_preferences(pool, judged, human_qrels)
    queries = list(pools)
    result = preference_qrels(pools, prefs, ties=ties)  # type: ignore[arg-type]
    pref_qrels = result.qrels()
    grades = read_human(qrels)
    systems = read_runs(runs)
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
        "qrels": _qrels_source(qrels, qrels_name),
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
        from reljudge.analyses.shallow.plots import leaderboard_plot

        name = (
            f"human grades of {human_qrels.name}"
            if judged is None and human_qrels
            else f"pairwise run {judged}"
        )
        leaderboard_plot(
            rows, out / "leaderboard.png", title=f"MRR@10 on {len(queries)} queries; preferences: {name}"
        )
        report["plot"] = str(out / "leaderboard.png")
    write_json(out / "leaderboard.json", report)
    return report
