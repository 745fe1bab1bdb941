"""``judge pool-bias`` (simulated pooling bias): the command, and the console table it prints.
Writes JSON + CSV (+ PNG with --plot) into --out; no LLM."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from reljudge.console import DATASET_HELP, show_written

if TYPE_CHECKING:
    from reljudge.analyses.pool_bias.simulation import PoolBiasReport


def pool_bias_cmd(
    qrels: Path | None = typer.Option(None, "--qrels", help="Official qrels (qid iter docid grade)."),
    dataset: str | None = typer.Option(
        None, "--dataset", help=DATASET_HELP + "; its runs/ when --runs is not given."
    ),
    runs: Path | None = typer.Option(
        None, "--runs", help="Directory of TREC runs (.gz allowed); default the --dataset's."
    ),
    run_info: Path = typer.Option(
        ..., "--run-info", help="Run types: lines 'run<TAB>group<TAB>type' ('#' comments)."
    ),
    depth: int = typer.Option(10, "--depth", min=1, help="Pool depth."),
    reps: int = typer.Option(10, "--reps", min=1, help="Random half-splits per pool type."),
    measure: list[str] = typer.Option([], "--measure", help="Measures (default RR(rel=2)@10 and nDCG@10)."),
    actual: str = typer.Option(
        "pool",
        "--actual",
        help="Actual values: pool (qrels cut to the all-runs depth pool, YIL) or official.",
    ),
    threshold: float = typer.Option(
        2, "--rel-threshold", help="Grade that counts as relevant for the found-by-depth curve."
    ),
    seed: int = typer.Option(0, "--seed", help="Seed of the splits."),
    out: Path = typer.Option(Path("runs/pool-bias"), "--out", "--output", help="Output directory."),
    plot: bool = typer.Option(
        False, "--plot", help="Also write relevant_found.png and scatter.png (needs matplotlib)."
    ),
    json_output: bool = typer.Option(False, "--json", help="Print the JSON it writes instead of tables."),
) -> None:
    """Simulated pooling bias (Yilmaz et al.): pools from half of one run type, tau per test type and signed errors."""
    from reljudge.analyses.inputs import qrels_and_runs
    from reljudge.analyses.pool_bias.files import write_pool_bias
    from reljudge.analyses.pool_bias.pipeline import pool_bias_paths

    human, found_runs = qrels_and_runs(qrels, dataset, runs)
    report = pool_bias_paths(
        human.qrels,
        found_runs,
        run_info,
        measures=measure or ["RR(rel=2)@10", "nDCG@10"],
        depth=depth,
        reps=reps,
        seed=seed,
        actual=actual,
        threshold=threshold,
    )
    written = write_pool_bias(report, out, plot=plot)
    show_written(written, format_pool_bias(report), json_output)


def format_pool_bias(report: PoolBiasReport) -> str:
    """The τ table (pool type → test subset, per measure) with the signed errors."""
    from reljudge.analyses.text_table import format_table

    s = report.settings
    head = (
        f"simulated pooling: depth-{s['depth']} pools from a random half of one type (group closure), "
        f"{s['reps']} repetitions, seed {s['seed']}; actual = {s['actual']}; types {s['types']}"
    )
    rows = [
        [
            f"{r['pool_type']} pool",
            r["measure"],
            r["test"],
            r["tau_mean"],
            r["tau_std"],
            r["tau_min"],
            r["tau_max"],
            r["signed_error_mean"],
            round(r["n_test_mean"], 1),
            f"{r['reps_with_tau']}/{s['reps']}",
        ]
        for r in report.summary
    ]
    table = format_table(
        [
            "pool",
            "measure",
            "test runs",
            "tau mean",
            "std",
            "min",
            "max",
            "signed err",
            "n test",
            "reps with tau",
        ],
        rows,
    )
    note = (
        "tau: Kendall tau-b(actual, estimated) over the test runs of the subset, NaN with fewer than 3 (such "
        "repetitions are left out of mean/std/min/max: 'reps with tau'); signed err: mean(estimated - actual), "
        "< 0 = under-estimated (an extension, not from YIL)"
    )
    return f"{head}\n{table}\n{note}"
