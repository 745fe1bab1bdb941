"""Steps ``pool``, ``tournament`` and ``leaderboard`` of ``judge shallow`` (thesis §3.1.3–3.1.4)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from reljudge.analyses.shallow.btp import reference_passages
from reljudge.analyses.shallow.shallow_pools import (
    REFERENCE,
    build_pools,
    missing_queries,
    pool_stats,
    sample_queries,
    unordered_pairs,
)
from reljudge.analyses.shallow.tournament import pairings_won, preference_qrels
from reljudge.analyses.shallow.winratio import win_ratios
from reljudge.errors import InputError


def _json(value: Any) -> str:
    from reljudge.io.tables import json_ready

    return json.dumps(json_ready(value), indent=2, ensure_ascii=False) + "\n"


def _runs(runs: Path, subset: list[str] | None = None) -> dict[str, Any]:
    from reljudge.io.trec import read_runs_dir

    found = read_runs_dir(runs)
    if REFERENCE in found:
        raise InputError(f"a run is named {REFERENCE!r}, the name of the pseudo-run of q*", runs)
    if subset:
        unknown = [r for r in subset if r not in found]
        if unknown:
            raise InputError(f"--runs-subset names unknown run(s): {', '.join(unknown[:5])}", runs)
        found = {r: found[r] for r in subset}
    return found


def pool_step(
    *,
    runs: Path,
    qrels: Path,
    out: Path,
    relevant: float = 1,
    choice: str = "first",
    runs_subset: list[str] | None = None,
    sample: int | None = None,
    min_pool: int = 2,
    seed: int = 0,
    corpus: Path | None = None,
) -> dict[str, Any]:
    """Write ``out/pool.tsv`` (the sampled pools), ``out/pairs.txt`` (every unordered pair once,
    the ``--pairs`` input of ``judge run --method pairwise``) and ``out/pool.json``."""
    from reljudge.analyses.shallow.files import write_pairs, write_pool
    from reljudge.io.atomic import write_text_atomic
    from reljudge.io.trec import read_qrels

    if choice == "best-ranked":
        raise InputError("--qrel-choice best-ranked needs one run; the pool takes 'first' or 'top-grade'")
    grades = read_qrels(qrels)
    systems = _runs(runs, runs_subset)
    refs = reference_passages(grades, relevant=relevant, choice=choice)  # type: ignore[arg-type]
    top = {name: {q: run.ranked(q)[0] for q in run if run[q]} for name, run in systems.items()}
    pools = build_pools(top, refs)
    chosen = sample_queries(pools, sample, min_pool=min_pool, seed=seed)
    sampled = {q: pools[q] for q in chosen}
    pairs = unordered_pairs(pools, chosen)
    missing = missing_queries(top, refs)
    report: dict[str, Any] = {
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
    write_text_atomic(out / "pool.json", _json(report))
    return report


def _source_name(judged: Path | None, human_qrels: Path | None) -> str:
    return (
        f"human grades of {human_qrels.name}"
        if human_qrels is not None
        else f"pairwise run {Path(str(judged)).name}"
    )


def _preferences(
    pool: Path, judged: Path | None, human_qrels: Path | None
) -> tuple[Any, Any, dict[str, int]]:
    from reljudge.analyses.shallow.files import read_pool
    from reljudge.shallow.sources import load_preferences

    pools = read_pool(pool)
    prefs, info = load_preferences(unordered_pairs(pools, pools), judged=judged, human_qrels=human_qrels)
    return pools, prefs, info


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
    from reljudge.io.atomic import write_text_atomic
    from reljudge.io.tables import csv_text
    from reljudge.io.trec import write_qrels
    from reljudge.shallow.sources import top_of_pool

    pools, prefs, info = _preferences(pool, judged, human_qrels)
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
    write_text_atomic(out / "tournament.json", _json(report))
    return report
