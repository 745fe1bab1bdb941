"""Files of ``judge pool-bias``: ``pool_bias.json``, ``taus.csv`` (mean/std/min/max over
repetitions), ``repetitions.csv``, ``relevant_found.csv`` and, with ``plot``, the figures of
`reljudge.analyses.pool_bias.plots` (``relevant_found.png``, ``scatter.png``)."""

from __future__ import annotations

from pathlib import Path

from reljudge.analyses.pool_bias.simulation import PoolBiasReport


def write_pool_bias(report: PoolBiasReport, out_dir: str | Path, *, plot: bool = False) -> list[Path]:
    from reljudge.analyses.pool_bias.plots import found_figure, scatter_figure
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
        figures = [(found_figure(report), "relevant_found.png"), (scatter_figure(report), "scatter.png")]
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
