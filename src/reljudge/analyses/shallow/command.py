"""``judge shallow``: shallow pools and preference judgments (thesis §3.1).

Build pairs (``btp-pairs``, ``pool``), judge them with ``judge run --method pairwise --pairs
FILE`` (both orders; ``--dry-run`` states the calls and the cost), then analyse the run
directory (``btp``, ``tournament``, ``leaderboard``). ``--human-qrels`` instead of ``--judged``
takes the human grades as the judge (the higher grade wins, equal grades tie). ``--dataset``
instead of ``--qrels`` takes a known dataset's qrels, and its runs and passages where the command
reads runs or passages and none are given; ``--relevant`` stays as given (1 by default), not the
dataset's threshold.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from reljudge.console import DATASET_HELP
from reljudge.errors import InputError

if TYPE_CHECKING:
    from reljudge.analyses.inputs import HumanLabels

app = typer.Typer(
    help="Shallow pools and preference judgments: better than perfect, pools, tournaments, leaderboards.",
    no_args_is_help=True,
)

JUDGED = typer.Option(
    None,
    "--judged",
    help="Pairwise run directory (or judgments.jsonl) of `judge run --method pairwise --pairs`.",
)
HUMAN = typer.Option(
    None,
    "--human-qrels",
    help="Use the human grades of these qrels as the judge (higher grade wins, equal grades tie).",
)
RELEVANT = typer.Option(
    1.0, "--relevant", help="Lowest grade that counts as relevant (q* and the original qrels)."
)
CHOICE = typer.Option(
    "first", "--qrel-choice", help="q*: 'first' relevant in qrels order, 'top-grade', 'best-ranked'."
)
CORPUS = typer.Option(
    None, "--corpus", help="Passages (TSV or JSONL): count (btp-pairs: skip) passages without text."
)
JSON_OUT = typer.Option(False, "--json", help="Print the report as JSON.")
DATASET = typer.Option(
    None, "--dataset", help=DATASET_HELP + "; also its runs and passages when none are given."
)


def _qrels_name(qrels: Path | None, human: HumanLabels) -> str:
    """How a report names the qrels: the ``--qrels`` file, or the ``--dataset``."""
    return str(qrels) if qrels is not None else f"dataset {human.dataset}"


def _print(report: dict[str, Any], as_json: bool, lines: list[str]) -> None:
    if as_json:
        from reljudge.console import echo_json

        echo_json(report)
    else:
        typer.echo("\n".join(lines))


def _source_lines(r: dict[str, Any]) -> list[str]:
    counts = {k: v for k, v in r["source_counts"].items() if not isinstance(v, dict)}
    lines = [f"source: {r['source']}  ({', '.join(f'{k} {v}' for k, v in counts.items())})"]
    a = r["source_counts"].get("agreement_with_human_grades")
    if a:
        lines.append(
            f"agreement with the human grades on {a['pairs']} pairs: {_pct(a['agreement'])} "
            f"(same winner {a['same']}, opposite {a['opposite']}, both tie {a['both_tie']}, "
            f"judge tie only {a['judge_tie']}, grades tie only {a['reference_tie']}; "
            f"on pairs both decided {_pct(a['agreement_decided'])})"
        )
    return lines


def _pct(x: float) -> str:
    return "n/a" if x != x else f"{100 * x:.2f} %"


def _judge_hint(pairs: str, n: int) -> str:
    return (
        f"{n} pairs -> {2 * n} LLM calls (each pair in both orders). Exact calls and cost before paying:\n"
        f"  judge run --method pairwise --pairs {pairs} --model MODEL --topics T --corpus C --dry-run"
    )


@app.command("btp-pairs")
def btp_pairs_cmd(
    qrels: Path | None = typer.Option(None, "--qrels", help="Qrels (qid iter docid grade)."),
    dataset: str | None = DATASET,
    run: Path = typer.Option(..., "--run", help="The run whose top passages are compared with q*."),
    out: Path = typer.Option(
        ..., "--out", "--output", help="Output directory: pairs.tsv and btp-pairs.json."
    ),
    relevant: float = RELEVANT,
    qrel_choice: str = CHOICE,
    corpus: Path | None = CORPUS,
    gold: int = typer.Option(0, "--gold", min=0, help="Add N gold pairs (q* vs another topic's q*)."),
    seed: int = typer.Option(0, "--seed", help="Seed of the gold pairs."),
    as_json: bool = JSON_OUT,
) -> None:
    """Better than perfect, step 1: q* per query, categories A/B and their pairs."""
    from reljudge.analyses.inputs import load_human_labels
    from reljudge.analyses.shallow.btp import QREL_CHOICES
    from reljudge.analyses.shallow.pipeline import btp_pairs_step

    if qrel_choice not in QREL_CHOICES:
        raise InputError(f"--qrel-choice must be one of {', '.join(QREL_CHOICES)}, not {qrel_choice!r}")
    human = load_human_labels(qrels, dataset)
    r = btp_pairs_step(
        qrels=human.qrels,
        qrels_name=_qrels_name(qrels, human),
        run=run,
        out=out,
        relevant=relevant,
        choice=qrel_choice,
        corpus=corpus if corpus is not None else human.corpus_path,
        gold=gold,
        seed=seed,
    )
    cats = r["categories"]
    lines = [
        f"queries with q*: {r['queries_with_reference']} (without: {r['queries_without_reference']})",
        f"category A (top = q*): {cats['A']['queries']} ({_pct(cats['A']['share'])}); "
        f"category B: {cats['B']['queries']} ({_pct(cats['B']['share'])})",
        *(f"skipped: {n} queries ({why})" for why, n in r["skipped"].items()),
        f"gold pairs: {r['gold_pairs']}",
        f"wrote {r['pairs_file']}",
        _judge_hint(r["pairs_file"], r["pairs"]),
    ]
    _print(r, as_json, lines)


@app.command("btp")
def btp_cmd(
    pairs: Path = typer.Option(..., "--pairs", help="The pairs.tsv of `judge shallow btp-pairs`."),
    judged: Path | None = JUDGED,
    human_qrels: Path | None = HUMAN,
    out: Path | None = typer.Option(None, "--out", "--output", help="Write the report as JSON here."),
    update_out: Path | None = typer.Option(
        None,
        "--update-out",
        help="Write best-known qrels (q* replaced where the run's passage won) and a provenance TSV.",
    ),
    as_json: bool = JSON_OUT,
) -> None:
    """Better than perfect, step 2: per category, who was preferred; the binomial test for B."""
    from reljudge.analyses.shallow.pipeline import btp_step

    r = btp_step(
        pairs=pairs,
        judged=judged,
        human_qrels=human_qrels,
        out=out,
        update_out=update_out,
    )
    lines = _source_lines(r)
    lines.append(
        "| category | queries | q* preferred | other preferred | tie | failed | other share (no ties) | other share (ties in) |"
    )
    lines.append("|---|---|---|---|---|---|---|---|")
    for c, t in r["categories"].items():
        lines.append(
            f"| {c} | {t['queries']} ({_pct(t['share_of_queries'])}) | {t['reference_preferred']} | {t['other_preferred']} "
            f"| {t['tie']} | {t['failed']} | {_pct(t['other_share_excluding_ties'])} | {_pct(t['other_share_including_ties'])} |"
        )
    b = r["category_b_binomial"]
    lines.append(
        f"category B, exact two-sided binomial P(other) = 0.5: {b['other']}/{b['trials']}, p = {b['p_value']:.3g}"
    )
    if "gold" in r:
        g = r["gold"]
        lines.append(
            f"gold: {g['right']} right, {g['wrong']} wrong, {g['tie']} tie, {g['failed']} failed; accuracy {_pct(g['accuracy'])}"
        )
    if "update" in r:
        u = r["update"]
        lines.append(f"best-known qrels: {u['replaced']} of {u['queries']} q* replaced -> {u['qrels']}")
    _print(r, as_json, lines)


@app.command("pool")
def pool_cmd(
    runs: Path | None = typer.Option(
        None, "--runs", help="Directory of TREC runs (.gz allowed); default the --dataset's."
    ),
    qrels: Path | None = typer.Option(None, "--qrels", help="Qrels (qid iter docid grade): q* per query."),
    dataset: str | None = DATASET,
    out: Path = typer.Option(
        ..., "--out", "--output", help="Output directory: pool.tsv, pairs.txt, pool.json."
    ),
    relevant: float = RELEVANT,
    qrel_choice: str = typer.Option(
        "first", "--qrel-choice", help="q*: 'first' relevant in qrels order or 'top-grade'."
    ),
    runs_subset: str | None = typer.Option(
        None, "--runs-subset", help="Comma-separated run names to pool (default all)."
    ),
    sample: int | None = typer.Option(
        None, "--sample", min=1, help="Sample this many queries (default all)."
    ),
    min_pool: int = typer.Option(
        2, "--min-pool", min=1, help="Sample only queries whose pool has this many passages."
    ),
    seed: int = typer.Option(0, "--seed", help="Seed of the query sample."),
    corpus: Path | None = CORPUS,
    as_json: bool = JSON_OUT,
) -> None:
    """Shallow pool: every run's top passage plus q*; statistics, a query sample, all pairs once."""
    from reljudge.analyses.inputs import qrels_and_runs
    from reljudge.analyses.shallow.pipeline import pool_step

    subset = [s.strip() for s in runs_subset.split(",") if s.strip()] if runs_subset else None
    human, runs_dir = qrels_and_runs(qrels, dataset, runs)
    r = pool_step(
        runs=runs_dir,
        qrels=human.qrels,
        qrels_name=_qrels_name(qrels, human),
        out=out,
        relevant=relevant,
        choice=qrel_choice,
        runs_subset=subset,
        sample=sample,
        min_pool=min_pool,
        seed=seed,
        corpus=corpus if corpus is not None else human.corpus_path,
    )
    p, s = r["pool"], r["sample"]
    lines = [
        f"{r['runs']} runs; {p['queries']} queries with q* ({r['queries_without_reference']} without)",
        f"pool size: {p['size_1']} of size 1, mean {p['mean']:.2f}, median {p['median']}, range {p['min']}-{p['max']}; all pairs {p['pairs']}",
        f"sample: {s['queries']} queries (pool >= {s['min_pool']}), mean {s.get('mean', 0):.2f}, median {s.get('median')}",
    ]
    if r["runs_missing_queries"]:
        lines.append(f"runs missing some queries (they add nothing there): {r['runs_missing_queries']}")
    if "passages_without_text" in r:
        t = r["passages_without_text"]
        lines.append(
            f"passages without text: {t['without_text']} of {t['passages']} "
            f"({r['pairs_with_a_passage_without_text']} pairs; `judge run --skip-missing` records them as skipped "
            f"and calls {r['calls_both_orders_with_text']} times)"
        )
    lines.append(f"wrote {r['files']['pool']} and {r['files']['pairs']}")
    lines.append(_judge_hint(r["files"]["pairs"], r["pairs"]))
    _print(r, as_json, lines)


@app.command("tournament")
def tournament_cmd(
    pool: Path = typer.Option(..., "--pool", help="The pool.tsv of `judge shallow pool`."),
    out: Path = typer.Option(
        ..., "--out", "--output", help="Output directory: preference.qrels, win-ratios.csv, tournament.json."
    ),
    judged: Path | None = JUDGED,
    human_qrels: Path | None = HUMAN,
    ties: str = typer.Option(
        "ignore", "--ties", help="A tie in the tournament: 'ignore' or 'half' a win each."
    ),
    alpha: float = typer.Option(0.05, "--alpha", help="Significance level before the Bonferroni correction."),
    plot: bool = typer.Option(False, "--plot", help="Also write win-ratios.png (needs matplotlib)."),
    as_json: bool = JSON_OUT,
) -> None:
    """Preference qrels by tournament, and win ratios between runs (and q*)."""
    from reljudge.analyses.shallow.pipeline import tournament_step
    from reljudge.analyses.shallow.tournament import TOURNAMENT_TIES

    if ties not in TOURNAMENT_TIES:
        raise InputError(f"--ties must be one of {', '.join(TOURNAMENT_TIES)}, not {ties!r}")
    if not 0 < alpha < 1:
        raise InputError(f"--alpha must be between 0 and 1, got {alpha}")
    r = tournament_step(
        pool=pool, out=out, judged=judged, human_qrels=human_qrels, ties=ties, alpha=alpha, plot=plot
    )
    t, w, pw = r["tournament"], r["win_ratios"], r["pairings_won"]
    pq, oq = pw["preference_qrels"], pw["original_qrels"]
    lines = [
        *_source_lines(r),
        f"queries {t['queries']}: {t['single']} single winners, {t['cycle']} cycles {t['cycle_sizes']}, {t['tie']} full ties; "
        f"{t['preference_qrels']} preference qrels",
        f"pairings won: preference qrels {pq['won']} of {pq['pairings']} ({_pct(pq['share'])}); "
        f"original qrels {oq['won']} of {oq['pairings']} ({_pct(oq['share'])}), {oq['passages']} original qrels",
        f"win ratios: {w['runs']} runs, {w['comparisons']} pairs, Bonferroni level {w['bonferroni_level']:.2g}; "
        f"{w['significant_wins']} significant wins",
        f"runs significantly beating q*: {w['runs_significantly_beating_qrels'] or 'none'}; "
        f"q* significantly beats {len(w['qrels_significantly_beats'])} runs",
        f"wrote {', '.join(r['files'].values())}",
    ]
    _print(r, as_json, lines)


@app.command("leaderboard")
def leaderboard_cmd(
    pool: Path = typer.Option(..., "--pool", help="The pool.tsv of `judge shallow pool`."),
    runs: Path | None = typer.Option(
        None, "--runs", help="Directory of TREC runs to evaluate; default the --dataset's."
    ),
    qrels: Path | None = typer.Option(None, "--qrels", help="The original qrels."),
    dataset: str | None = DATASET,
    out: Path = typer.Option(
        ..., "--out", "--output", help="Output directory: leaderboard.csv and leaderboard.json."
    ),
    judged: Path | None = JUDGED,
    human_qrels: Path | None = HUMAN,
    relevant: float = RELEVANT,
    ties: str = typer.Option("ignore", "--ties", help="A tie in the tournament: 'ignore' or 'half'."),
    compare: str | None = typer.Option(
        None, "--compare", help="Also rank by this measure on the graded qrels (e.g. nDCG@10)."
    ),
    bootstrap: int = typer.Option(1000, "--bootstrap", min=0, help="Bootstrap replicates over queries."),
    seed: int = typer.Option(0, "--seed", help="Seed of the bootstrap."),
    loro: bool = typer.Option(True, "--loro/--no-loro", help="Leave-one-run-out re-evaluation."),
    plot: bool = typer.Option(False, "--plot", help="Also write leaderboard.png (needs matplotlib)."),
    as_json: bool = JSON_OUT,
) -> None:
    """MRR@10 under preference qrels vs the original qrels: Kendall tau, intervals, perfect ranker, LORO."""
    from reljudge.analyses.inputs import qrels_and_runs
    from reljudge.analyses.shallow.pipeline import leaderboard_step

    human, runs_dir = qrels_and_runs(qrels, dataset, runs)
    r = leaderboard_step(
        pool=pool,
        runs=runs_dir,
        qrels=human.qrels,
        qrels_name=_qrels_name(qrels, human),
        out=out,
        judged=judged,
        human_qrels=human_qrels,
        relevant=relevant,
        ties=ties,
        compare=compare,
        n_boot=bootstrap,
        seed=seed,
        loro=loro,
        plot=plot,
    )
    tau = r["tau_preference_vs_original_mrr10"]
    lines = [
        f"{r['runs']} runs on {r['queries']} queries; {r['tournament']['preference_qrels']} preference qrels",
        f"Kendall tau-b, MRR@10 preference vs original qrels: {tau['tau']:.3f} [{tau['low']:.3f}, {tau['high']:.3f}]",
        f"perfect ranker (original qrels first) under preference qrels: MRR@10 {r['perfect_ranker_mrr10_under_preference_qrels']:.4f}",
    ]
    for key, v in r.items():
        if key.startswith("tau_") and key != "tau_preference_vs_original_mrr10":
            lines.append(f"{key}: {v['tau']:.3f} [{v['low']:.3f}, {v['high']:.3f}]")
    lines.append(
        "top 5 under preference qrels: "
        + ", ".join(
            f"{row['run']} {row['mrr10_preference']} (orig #{row['rank_original']})"
            for row in r["leaderboard"][:5]
        )
    )
    lines.append(f"wrote {out / 'leaderboard.csv'} and {out / 'leaderboard.json'}")
    _print(r, as_json, lines)
