"""``judge sparsify`` (sparsified qrels): the command, and the console table it prints. Writes
JSON + CSV (+ PNG with --plot) into --out; no LLM."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from reljudge.console import DATASET_HELP, int_list, show_written

if TYPE_CHECKING:
    from reljudge.analyses.sparsify.sparse_qrels import SparsifyReport


def sparsify_cmd(
    qrels: Path | None = typer.Option(None, "--qrels", help="Human qrels (qid iter docid grade)."),
    dataset: str | None = typer.Option(
        None, "--dataset", help=DATASET_HELP + "; its runs/ when --runs is not given."
    ),
    runs: Path | None = typer.Option(
        None, "--runs", help="Directory of TREC runs (.gz allowed); default the --dataset's."
    ),
    n: str = typer.Option("1,5,10", "--n", help="At most N relevant judgments per topic (comma-separated)."),
    keep: str = typer.Option(
        "none",
        "--keep",
        help="Other judgments: none (dropped, MS MARCO-style) or nonrelevant (grade < min kept).",
    ),
    measure: str = typer.Option("nDCG@10", "--measure", help="Measure to rank the runs by."),
    min_grade: float = typer.Option(2, "--min-grade", help="Lowest relevant grade."),
    repeats: int = typer.Option(
        1, "--repeats", min=1, help="Seeded repetitions (seeds seed..seed+repeats-1)."
    ),
    seed: int = typer.Option(0, "--seed", help="First seed."),
    out: Path = typer.Option(Path("runs/sparsify"), "--out", "--output", help="Output directory."),
    plot: bool = typer.Option(False, "--plot", help="Also write sparsified.png (needs matplotlib)."),
    json_output: bool = typer.Option(False, "--json", help="Print the JSON it writes instead of tables."),
) -> None:
    """Kendall tau between run rankings under the full qrels and under at most N relevant judgments per topic."""
    from reljudge.analyses.inputs import qrels_and_runs
    from reljudge.analyses.sparsify.files import write_sparsify
    from reljudge.analyses.sparsify.pipeline import sparsify_paths

    human, found_runs = qrels_and_runs(qrels, dataset, runs)
    report = sparsify_paths(
        human.qrels,
        found_runs,
        ns=int_list(n, "--n"),
        keep=keep,
        measure=measure,
        min_grade=min_grade,
        repeats=repeats,
        seed=seed,
    )
    written = write_sparsify(report, out, plot=plot)
    show_written(written, format_sparsify(report), json_output)


def format_sparsify(report: SparsifyReport) -> str:
    from reljudge.analyses.text_table import format_table

    s = report.settings
    head = (
        f"sparsified qrels: at most N relevant (grade >= {s['min_grade']:g}) per topic, keep={s['keep']}, "
        f"{s['measure']}, {s['runs']} runs, {s['repeats']} seed(s) from {s['seed']}"
    )
    rows = [
        [r["n"], r["tau_mean"], r["tau_std"], r["tau_min"], r["tau_max"], r["repeats"]]
        for r in report.summary
    ]
    table = format_table(["N", "tau mean", "std", "min", "max", "seeds"], rows)
    skipped = s["topics_without_relevant"]
    if skipped:
        head += f"\n{len(skipped)} topic(s) without a relevant judgment: not scored under keep=none"
    return f"{head}\n{table}\ntau: Kendall tau-b between the run rankings under the full and the sparsified qrels"
