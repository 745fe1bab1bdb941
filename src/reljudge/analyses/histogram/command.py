"""``judge histogram`` (DO/HSA): the command, and the console tables it prints. Writes JSON + CSV
(+ PNG with --plot) into --out; no LLM."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from reljudge.console import DATASET_HELP, show_written

if TYPE_CHECKING:
    from reljudge.analyses.histogram.do_hsa import HistogramReport


def histogram_cmd(
    qrels: Path | None = typer.Option(None, "--qrels", help="Human qrels (qid iter docid grade)."),
    dataset: str | None = typer.Option(
        None, "--dataset", help=DATASET_HELP + "; its runs/ when --runs is not given."
    ),
    runs: Path | None = typer.Option(
        None, "--runs", help="Directory of TREC runs (.gz allowed); default the --dataset's."
    ),
    scores: Path | None = typer.Option(
        None, "--scores", help="Instead of --runs: model scores of any pairs, lines 'system qid docid score'."
    ),
    values: str = typer.Option(
        "rank", "--values", help="rank (normalised rank, KRS 5.3) or score (min-max normalised)."
    ),
    nonrel: str = typer.Option(
        "judged",
        "--nonrel",
        help="Non-relevant set: judged, unjudged, all, or sample:M (seeded, M per topic).",
    ),
    threshold: float = typer.Option(
        2, "--rel-threshold", help="Grades >= this are relevant (2 for TREC DL passages)."
    ),
    bins: int = typer.Option(20, "--bins", min=1, help="Equal-width bins on [0, 1]."),
    normalise: str = typer.Option(
        "global", "--normalise", help="For --values score: global or query min-max."
    ),
    measure: list[str] = typer.Option(
        [],
        "--measure",
        help="Standard measure(s) to correlate with (default AP, P@10 at the threshold, nDCG@10).",
    ),
    seed: int = typer.Option(0, "--seed", help="Seed of --nonrel sample:M."),
    out: Path = typer.Option(Path("runs/histogram"), "--out", "--output", help="Output directory."),
    plot: bool = typer.Option(
        False, "--plot", help="Also write histograms.png and slopes.png (needs matplotlib)."
    ),
    json_output: bool = typer.Option(False, "--json", help="Print the JSON it writes instead of tables."),
) -> None:
    """Distributional Overlap and Histogram Slope Analysis per run, correlated with standard measures."""
    from reljudge.analyses.histogram.files import write_histogram_report
    from reljudge.analyses.histogram.pipeline import histogram_paths
    from reljudge.analyses.inputs import load_human_labels, qrels_and_runs

    t = f"{threshold:g}"
    measures = measure or [f"AP(rel={t})", f"P(rel={t})@10", "nDCG@10"]
    if scores is None or runs is not None:
        human, found_runs = qrels_and_runs(qrels, dataset, runs)
    else:  # --scores instead of runs
        human, found_runs = load_human_labels(qrels, dataset), None
    report = histogram_paths(
        human.qrels,
        found_runs,
        scores=scores,
        values=values,
        nonrel=nonrel,
        threshold=threshold,
        bins=bins,
        normalise=normalise,
        measures=measures,
        seed=seed,
    )
    written = write_histogram_report(report, out, plot=plot)
    show_written(written, format_histogram_report(report), json_output)


def format_histogram_report(report: HistogramReport, *, top: int | None = None) -> str:
    """The DO/HSA table (by HSA, best first) and the correlation table, with the conventions."""
    from reljudge.analyses.text_table import format_table
    from reljudge.io.tables import rounded

    rows = sorted(
        report.rows(), key=lambda r: (r["HSA"] != r["HSA"], -(r["HSA"] if r["HSA"] == r["HSA"] else 0))
    )
    if top is not None:
        rows = rows[:top]
    s = report.settings
    head = (
        f"DO/HSA ({s['values']} values, normalisation {s['normalise']}, non-relevant: {s['nonrel']}, "
        f"relevant: grade >= {s['threshold']:g}, {s['bins']} bins, natural log; {s['systems']} systems, "
        f"{s['topics_used']} topics"
        + (
            f"; {len(s['topics_without_relevant'])} topic(s) without a relevant judgment skipped"
            if s["topics_without_relevant"]
            else ""
        )
        + ")"
    )
    table = format_table(list(rows[0]) if rows else ["system"], [rounded(r) for r in rows])
    corr_rows = [
        [
            c["metric"],
            c["measure"],
            c["systems"],
            c["pearson"],
            _p(c["pearson_p"]),
            c["spearman"],
            _p(c["spearman_p"]),
        ]
        for c in report.correlations
    ]
    corr = format_table(["metric", "measure", "systems", "Pearson R", "p", "Spearman rho", "p"], corr_rows)
    note = "DO: lower is better (less overlap); HSA: higher is better."
    return f"{head}\n{table}\n\n{corr}\n{note}"


def _p(p: float) -> str:
    return "nan" if p != p else f"{p:.2g}"
