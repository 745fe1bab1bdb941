"""``judge pool-bias``: the simulated pooling bias of `reljudge.metrics.pooling` from files, its
console tables, ``pool_bias.json``, ``taus.csv`` (mean/std/min/max over repetitions),
``repetitions.csv``, ``relevant_found.csv`` and, with ``plot``, ``relevant_found.png`` and
``scatter.png`` (actual vs estimated, first repetition, per pool type and measure)."""

from __future__ import annotations

import math
from pathlib import Path

from reljudge.metrics.pooling import PoolBiasReport, simulate


def pool_bias_paths(qrels: str | Path, runs: str | Path, run_info: str | Path, **options) -> PoolBiasReport:
    """`simulate` on a qrels file, a directory of runs and a run-type file. Runs listed in the
    run-type file but absent from the directory are noted in the settings (``listed_not_found``)."""
    from reljudge.analyses.inputs import load_runs
    from reljudge.io.runinfo import read_run_info
    from reljudge.io.trec import read_qrels

    human = read_qrels(qrels)
    run_map = load_runs(runs)
    info = read_run_info(run_info)
    report = simulate(human, run_map, info, **options)
    report.settings["listed_not_found"] = sorted(r for r in info if r not in run_map)
    report.settings["run_info"] = str(run_info)
    return report


def format_pool_bias(report: PoolBiasReport) -> str:
    """The τ table (pool type → test subset, per measure) with the signed errors."""
    from reljudge.evaluation.report import format_table

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


def write_pool_bias(report: PoolBiasReport, out_dir: str | Path, *, plot: bool = False) -> list[Path]:
    from reljudge.io.tables import write_report_files

    found_rows = [
        {"depth": k + 1, **{t: report.relevant_found[t][k] for t in report.relevant_found}}
        for k in range(max((len(v) for v in report.relevant_found.values()), default=0))
    ]
    data = {
        "settings": report.settings,
        "summary": report.summary,
        "actual": report.actual,
        "relevant_found": report.relevant_found,
        "scatter_first_repetition": [
            {"pool_type": p, "measure": m, "points": pts} for (p, m), pts in report.scatter.items()
        ],
    }
    figures = []
    if plot:
        figures = [(_found_figure(report), "relevant_found.png"), (_scatter_figure(report), "scatter.png")]
    written = write_report_files(
        out_dir,
        "pool_bias.json",
        data,
        {"taus.csv": report.summary, "repetitions.csv": report.repetitions, "relevant_found.csv": found_rows},
    )
    if figures:
        from reljudge.io.figures import pyplot, save_figure

        plt = pyplot()
        for fig, name in figures:
            written.append(save_figure(fig, Path(out_dir) / name))
            plt.close(fig)
    return written


_COLORS = ("#2c6fbb", "#d35400", "#4c9a2a", "#8e44ad", "#7f8c8d")
_MARKERS = ("o", "^", "s", "D", "v")


def _found_figure(report: PoolBiasReport):
    from reljudge.io.figures import pyplot

    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    n_runs = report.settings["types"]
    for i, (t, counts) in enumerate(report.relevant_found.items()):
        ax.plot(
            range(1, len(counts) + 1), counts, color=_COLORS[i % 5], label=f"{t} ({n_runs.get(t, '?')} runs)"
        )
    ax.set_xlabel("depth k")
    ax.set_ylabel(f"relevant (grade >= {report.settings['threshold_relevant_found']:g}) pairs found")
    ax.set_title("Relevant documents found by the depth-k pool of each run type")
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    return fig


def _scatter_figure(report: PoolBiasReport):
    from reljudge.io.figures import pyplot

    plt = pyplot()
    keys = list(report.scatter)
    pools = list(dict.fromkeys(p for p, _ in keys))
    measures = list(dict.fromkeys(m for _, m in keys))
    fig, axes = plt.subplots(
        len(pools), len(measures), figsize=(4.6 * len(measures), 4.3 * len(pools)), squeeze=False
    )
    first = {(r["pool_type"], r["measure"], r["test"]): r["tau"] for r in report.repetitions if r["rep"] == 0}
    for i, p in enumerate(pools):
        for j, m in enumerate(measures):
            ax = axes[i][j]
            pts = report.scatter[(p, m)]
            for k, t in enumerate(report.types):
                xs = [q["actual"] for q in pts if q["type"] == t]
                ys = [q["estimated"] for q in pts if q["type"] == t]
                ax.scatter(
                    xs, ys, s=18, marker=_MARKERS[k % 5], color=_COLORS[k % 5], label=f"{t} (test)", alpha=0.8
                )
            vals = [v for q in pts for v in (q["actual"], q["estimated"]) if not math.isnan(v)]
            lo, hi = (min(vals), max(vals)) if vals else (0.0, 1.0)
            ax.plot([lo, hi], [lo, hi], color="#999999", lw=0.8)
            taus = ", ".join(f"{t} {first.get((p, m, t), math.nan):.2f}" for t in [*report.types, "all"])
            ax.set_title(f"{p} pool, {m}\ntau: {taus}", fontsize=9)
            ax.set_xlabel("actual")
            ax.set_ylabel("estimated")
            ax.legend(fontsize=8, loc="upper left")
    fig.suptitle(
        "Actual vs estimated values of the test runs (first repetition); grey line y = x", fontsize=10
    )
    fig.tight_layout()
    return fig
