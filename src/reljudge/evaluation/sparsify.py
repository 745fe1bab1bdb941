"""``judge sparsify``: `reljudge.metrics.sparsify.sparsified_agreement` from files, its console
table, ``sparsified.json``, ``sparsified_ndcg.csv`` (one row per N), ``repetitions.csv`` and,
with ``plot``, ``sparsified.png`` (τ per N, every seed and the mean)."""

from __future__ import annotations

from pathlib import Path

from reljudge.metrics.sparsify import SparsifyReport, sparsified_agreement


def sparsify_paths(qrels: str | Path, runs: str | Path, **options) -> SparsifyReport:
    from reljudge.analyses.inputs import load_runs
    from reljudge.io.trec import read_qrels

    return sparsified_agreement(read_qrels(qrels), load_runs(runs), **options)


def format_sparsify(report: SparsifyReport) -> str:
    from reljudge.evaluation.report import format_table

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


def write_sparsify(report: SparsifyReport, out_dir: str | Path, *, plot: bool = False) -> list[Path]:
    from reljudge.io.tables import write_report_files

    data = {
        "settings": report.settings,
        "summary": report.summary,
        "full": report.full,
        "repetitions": report.repetitions,
    }
    fig = _figure(report) if plot else None
    written = write_report_files(
        out_dir,
        "sparsified.json",
        data,
        {"sparsified_ndcg.csv": report.summary, "repetitions.csv": report.repetitions},
    )
    if fig is not None:
        from reljudge.io.figures import pyplot, save_figure

        written.append(save_figure(fig, Path(out_dir) / "sparsified.png"))
        pyplot().close(fig)
    return written


def _figure(report: SparsifyReport):
    from reljudge.io.figures import pyplot

    plt = pyplot()
    fig, ax = plt.subplots(figsize=(5.6, 4.0))
    ns = [r["n"] for r in report.summary]
    for i, n in enumerate(ns):
        taus = [r["tau"] for r in report.repetitions if r["n"] == n]
        ax.scatter(
            [i] * len(taus), taus, s=14, color="#7f8c8d", alpha=0.6, label="one seed" if i == 0 else None
        )
    ax.plot(range(len(ns)), [r["tau_mean"] for r in report.summary], "o-", color="#2c6fbb", label="mean")
    ax.set_xticks(range(len(ns)), [str(n) for n in ns])
    ax.set_xlabel("N (relevant judgments kept per topic)")
    s = report.settings
    ax.set_ylabel(f"Kendall tau-b ({s['measure']}: full vs sparsified)")
    ax.set_title(f"Sparsified qrels (keep={s['keep']}, {s['repeats']} seeds, {s['runs']} runs)", fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig
