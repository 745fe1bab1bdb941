"""Files of ``judge histogram``: the ``system qid docid score`` file of ``--scores``, and the
report's ``do_hsa.json`` / ``do_hsa.csv`` / ``correlations.csv`` with, with ``plot``, the
figures of `reljudge.analyses.histogram.plots` (``histograms.png``, ``slopes.png``)."""

from __future__ import annotations

import math
from pathlib import Path

from reljudge.analyses.histogram.do_hsa import HistogramReport


def read_system_scores(path: str | Path) -> dict[str, dict[str, dict[str, float]]]:
    """``system qid docid score`` lines → ``{system: {qid: {docid: score}}}`` (errors name FILE:LINE)."""
    from reljudge.errors import InputError
    from reljudge.io.lines import read_lines

    path = Path(path)
    out: dict[str, dict[str, dict[str, float]]] = {}
    for number, line in read_lines(path):
        parts = line.split()
        if not parts:
            continue
        if len(parts) != 4:
            raise InputError(f"expected 4 columns 'system qid docid score', found {len(parts)}", path, number)
        system, qid, docid, text = parts
        try:
            value = float(text)
        except ValueError:
            raise InputError(f"score {text!r} is not a number", path, number) from None
        if not math.isfinite(value):
            raise InputError(f"score {text!r} is not a finite number", path, number)
        docs = out.setdefault(system, {}).setdefault(qid, {})
        if docid in docs:
            raise InputError(
                f"system {system!r} scores document {docid!r} twice for topic {qid!r}", path, number
            )
        docs[docid] = value
    if not out:
        raise InputError("no scores in file", path)
    return out


def write_histogram_report(report: HistogramReport, out_dir: str | Path, *, plot: bool = False) -> list[Path]:
    """``do_hsa.json``, ``do_hsa.csv``, ``correlations.csv`` (+ ``histograms.png``, ``slopes.png``)."""
    from reljudge.analyses.histogram.plots import histogram_figure
    from reljudge.io.tables import write_report_files

    data = {
        "settings": report.settings,
        "systems": {
            name: {
                "DO": r.do,
                "HSA": r.hsa,
                "intercept": r.intercept,
                "supported_bins": r.n_supported,
                "n_rel": r.n_rel,
                "n_nonrel": r.n_nonrel,
                "bin_centres": r.histograms.centres,
                "relevant_counts": r.histograms.relevant,
                "nonrelevant_counts": r.histograms.nonrelevant,
            }
            for name, r in report.systems.items()
        },
        "measures": report.measures,
        "correlations": report.correlations,
    }
    figures = []
    if plot:  # drawn before anything is written, so a missing matplotlib leaves no half report
        figures = [histogram_figure(report, log_ratio=False), histogram_figure(report, log_ratio=True)]
    written = write_report_files(
        out_dir, "do_hsa.json", data, {"do_hsa.csv": report.rows(), "correlations.csv": report.correlations}
    )
    if plot:
        from reljudge.io.figures import pyplot, save_figure

        plt = pyplot()
        for fig, name in zip(figures, ("histograms.png", "slopes.png"), strict=True):
            written.append(save_figure(fig, Path(out_dir) / name, dpi=100, tight=False))
            plt.close(fig)
    return written
