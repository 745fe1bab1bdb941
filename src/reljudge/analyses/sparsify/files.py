"""Files of ``judge sparsify``: ``sparsified.json``, ``sparsified_ndcg.csv`` (one row per N),
``repetitions.csv`` and, with ``plot``, the figure of `reljudge.analyses.sparsify.plots`
(``sparsified.png``)."""

from __future__ import annotations

from pathlib import Path

from reljudge.analyses.sparsify.sparse_qrels import SparsifyReport


def write_sparsify(report: SparsifyReport, out_dir: str | Path, *, plot: bool = False) -> list[Path]:
    from reljudge.analyses.sparsify.plots import sparsified_figure
    from reljudge.io.tables import write_report_files

    data = {
        "settings": report.settings,
        "summary": report.summary,
        "full": report.full,
        "repetitions": report.repetitions,
    }
    fig = sparsified_figure(report) if plot else None
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
