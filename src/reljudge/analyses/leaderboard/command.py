"""``judge leaderboard``: the command and the console tables it prints. Writes JSON + CSV into
--out; no LLM."""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from reljudge.console import show_written
from reljudge.errors import InputError

if TYPE_CHECKING:
    from reljudge.analyses.leaderboard.meta import MetaReport


def leaderboard_cmd(
    judge: Path | None = typer.Option(None, "--judge", help="The judge's leaderboard (file or directory)."),
    truth: Path | None = typer.Option(None, "--truth", help="The truth leaderboard (file or directory)."),
    judge_format: str = typer.Option(
        "auto",
        "--judge-format",
        help="auto, ir_measures (AutoJudge .eval.txt), tot, rag4reports, trec_eval, jsonl.",
    ),
    truth_format: str = typer.Option("auto", "--truth-format", help="As --judge-format, for --truth."),
    judge_measure: list[str] = typer.Option(
        [], "--judge-measure", help="A measure of the judge's leaderboard (repeatable; default: every one)."
    ),
    truth_measure: list[str] = typer.Option(
        [],
        "--truth-measure",
        "--measure",
        help="A measure of the truth leaderboard (repeatable; default: every one).",
    ),
    top_k: int = typer.Option(10, "--top-k", help="Also correlate over the truth's top k runs."),
    bootstrap: int = typer.Option(
        1000, "--bootstrap", help="Bootstrap resamples of the topics (0: no intervals)."
    ),
    interval: str = typer.Option("t", "--interval", help="Bootstrap interval: t, BCa, basic or percentile."),
    seed: int = typer.Option(0, "--seed", help="Seed of the bootstrap."),
    missing: str = typer.Option(
        "error",
        "--missing",
        help="Runs in one leaderboard only: error (name them), drop (leave them out), "
        "zero (the truth's runs the judge lacks get 0).",
    ),
    judge_qrels: Path | None = typer.Option(
        None, "--judge-qrels", help="The judge's qrels (qid iter docid grade)."
    ),
    truth_qrels: Path | None = typer.Option(None, "--truth-qrels", help="The truth qrels."),
    relevance: float = typer.Option(1, "--relevance", help="Lowest relevant grade of --judge-qrels."),
    truth_relevance: float | None = typer.Option(
        None, "--truth-relevance", help="Lowest relevant grade of --truth-qrels (default: --relevance)."
    ),
    out: Path = typer.Option(Path("runs/leaderboard"), "--out", "--output", help="Output directory."),
    json_output: bool = typer.Option(False, "--json", help="Print the JSON it writes instead of tables."),
) -> None:
    """Leaderboard meta-evaluation (Kendall tau-b, tau_AP-b, tau_GAP, Spearman, Pearson; top k; per topic;
    bootstrap intervals over topics) and qrels agreement (P/R/F1, Jaccard, ARI)."""
    from reljudge.analyses.leaderboard.files import write_leaderboard_report
    from reljudge.analyses.leaderboard.pipeline import leaderboard_paths, qrels_paths

    if (judge is None) != (truth is None):
        raise InputError("--judge and --truth go together: give both leaderboards")
    if (judge_qrels is None) != (truth_qrels is None):
        raise InputError("--judge-qrels and --truth-qrels go together: give both")
    if judge is None and judge_qrels is None:
        raise InputError(
            "nothing to compare: give --judge and --truth (leaderboards) or --judge-qrels and --truth-qrels"
        )
    report = None
    if judge is not None and truth is not None:
        report = leaderboard_paths(
            judge,
            truth,
            judge_format=judge_format,
            truth_format=truth_format,
            judge_measures=judge_measure,
            truth_measures=truth_measure,
            top_k=top_k,
            missing=missing,
            n_boot=bootstrap,
            seed=seed,
            interval=interval,
        )
    qrels = None
    if judge_qrels is not None and truth_qrels is not None:
        level = relevance if truth_relevance is None else truth_relevance
        qrels = qrels_paths(judge_qrels, truth_qrels, judge_level=relevance, truth_level=level)
    written = write_leaderboard_report(report, qrels, out)
    parts = []
    if report is not None:
        parts.append(format_meta(report))
    if qrels is not None:
        parts.append(format_qrels(*qrels))
    show_written(written, "\n\n".join(parts), json_output)


def _ci(row: dict[str, Any]) -> str:
    if not (math.isfinite(row["ci_low"]) and math.isfinite(row["ci_high"])):
        return "-"
    return f"[{row['ci_low']:.3f}, {row['ci_high']:.3f}]"


def format_meta(report: MetaReport) -> str:
    """The headline table: one row per (truth measure, judge measure)."""
    import textwrap

    from reljudge.analyses.text_table import format_table

    s = report.settings
    k = s["top_k"]
    by_key = {
        (r["truth_measure"], r["judge_measure"], r["runs"], r["measure"]): r for r in report.correlations
    }
    rows = []
    for pair in report.pairs:
        tm, jm = pair["truth_measure"], pair["judge_measure"]

        def value(measure: str, scope: str = "all", tm: str = tm, jm: str = jm) -> float:
            return by_key[(tm, jm, scope, measure)]["value"]

        tau = by_key[(tm, jm, "all", "kendall_tau_b")]
        rows.append(
            [
                tm,
                jm,
                pair["runs"],
                tau["value"],
                _ci(tau),
                value("tau_ap_b"),
                value("tau_gap"),
                value("spearman"),
                value("pearson"),
                value("kendall_tau_b", f"top {k}"),
                value("tau_ap_b", f"top {k}"),
                f"{tau['per_topic_mean']:.3f} ({tau['per_topic_topics']}/{tau['per_topic_of']})"
                if math.isfinite(tau["per_topic_mean"])
                else f"- (0/{tau['per_topic_of']})",
            ]
        )
    headers = [
        "truth",
        "judge",
        "runs",
        "tau-b",
        f"{100 * s['level']:g}% CI" if s["bootstrap"] else "CI",
        "tau_ap_b",
        "tau_gap",
        "spearman",
        "pearson",
        f"tau-b@{k}",
        f"tau_ap_b@{k}",
        "topic tau-b (n)",
    ]
    aggregates = ", ".join(
        f"{side} {m}: {how}"
        for side, key in (("judge", "judge_aggregate"), ("truth", "truth_aggregate"))
        for m, how in s[key].items()
        if m in s[f"{side}_measures"]
    )
    head = [
        f"leaderboard meta-evaluation: judge {s['judge']} ({s['judge_layout']}) vs truth {s['truth']} "
        f"({s['truth_layout']})",
        f"aggregates: {aggregates}",
        f"runs: --missing {s['missing']}; top {k}: {s['top_k_rule']}",
    ]
    for pair in report.pairs:
        extra = []
        if pair["judge_only_runs"]:
            extra.append(f"{len(pair['judge_only_runs'])} run(s) only the judge has, left out")
        if pair["truth_only_runs"]:
            how = "judge value 0" if s["missing"] == "zero" else "left out"
            extra.append(f"{len(pair['truth_only_runs'])} run(s) only the truth has, {how}")
        if pair["top_runs"] < k:
            extra.append(f"only {pair['top_runs']} runs: top {k} is every run")
        ties = f"tied run pairs: truth {pair['tied_pairs_truth']}, judge {pair['tied_pairs_judge']}"
        head.append(
            f"{pair['truth_measure']} vs {pair['judge_measure']}: {pair['runs']} runs, {pair['topics']} shared topics, "
            + "; ".join([ties, *extra])
        )
    off_centre = sorted(
        {
            f"{r['truth_measure']} vs {r['judge_measure']}"
            for r in report.correlations
            if math.isfinite(r["ci_estimate"]) and abs(r["ci_estimate"] - r["value"]) > 1e-9
        }
    )
    notes = [f"ties: {s['ties']}", f"per topic: {s['per_topic_rule']}", s["interval_note"], *s["notes"]]
    if off_centre:
        notes.append(
            f"the intervals of {', '.join(off_centre)} are centred on the runs' means over the shared topics "
            "(ci_estimate in correlations.csv), not on the value from the 'all' rows, which are not those means"
        )
    wrapped = "\n".join(textwrap.fill(n, 100) for n in notes)
    return "\n".join(head) + "\n" + format_table(headers, rows) + "\n" + wrapped


def format_qrels(rows: list[dict[str, Any]], summary: dict[str, Any]) -> str:
    from reljudge.analyses.text_table import format_table

    table = format_table(
        ["", "precision", "recall", "F1", "Jaccard", "ARI", "topics"],
        [
            [
                "mean over topics",
                summary["mean_precision"],
                summary["mean_recall"],
                summary["mean_f1"],
                summary["mean_jaccard"],
                summary["mean_ari"],
                summary["topics"],
            ],
            [
                "pooled (micro)",
                summary["micro_precision"],
                summary["micro_recall"],
                summary["micro_f1"],
                summary["micro_jaccard"],
                "",
                summary["topics"],
            ],
        ],
    )
    lines = [f"qrels agreement: {summary['rule']}", table]
    if summary["judge_only_topics"] or summary["truth_only_topics"]:
        lines.append(
            f"topics only the judge has: {len(summary['judge_only_topics'])}; "
            f"only the truth has: {len(summary['truth_only_topics'])} (empty relevant set on the other side)"
        )
    if summary["jaccard_topics"] < summary["topics"]:
        lines.append(
            f"precision, recall, F1 and Jaccard undefined (no relevant document on either side) on "
            f"{summary['topics'] - summary['jaccard_topics']} topic(s): left out of their means"
        )
    return "\n".join(lines)
