"""``judge histogram``: DO and HSA of every run (`reljudge.metrics.histogram`) from files, the
console tables, ``do_hsa.json`` / ``do_hsa.csv`` / ``correlations.csv`` and, with ``plot``,
``histograms.png`` (per system: the log histograms of the relevant and non-relevant values) and
``slopes.png`` (per system: ln(h_r/h_nr) per supported bin and the fitted HSA line)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path

from reljudge.metrics.histogram import HistogramReport, do_hsa_runs


def histogram_paths(
    qrels: str | Path,
    runs: str | Path | None = None,
    *,
    scores: str | Path | None = None,
    **options,
) -> HistogramReport:
    """`do_hsa_runs` on a qrels file and a directory of TREC runs (or a ``system qid docid score``
    file with ``scores``: each system's scored pairs are its "run")."""
    from reljudge.errors import InputError
    from reljudge.io.trec import read_qrels

    if (runs is None) == (scores is None):
        raise InputError("give exactly one of --runs DIR or --scores FILE")
    human = read_qrels(qrels)
    run_map: Mapping[str, Mapping[str, Mapping[str, float]]]
    if runs is not None:
        from reljudge.analyses.inputs import load_runs

        run_map = load_runs(runs)
    else:
        assert scores is not None  # exactly one of the two, checked above
        run_map = read_system_scores(scores)
    return do_hsa_runs(human, run_map, **options)


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


def format_histogram_report(report: HistogramReport, *, top: int | None = None) -> str:
    """The DO/HSA table (by HSA, best first) and the correlation table, with the conventions."""
    from reljudge.evaluation.report import format_table
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


def write_histogram_report(report: HistogramReport, out_dir: str | Path, *, plot: bool = False) -> list[Path]:
    """``do_hsa.json``, ``do_hsa.csv``, ``correlations.csv`` (+ ``histograms.png``, ``slopes.png``)."""
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
        figures = [_histogram_figure(report, log_ratio=False), _histogram_figure(report, log_ratio=True)]
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


def _order(report: HistogramReport, names: Sequence[str]) -> list[str]:
    measure = report.settings["measures"][-1] if report.settings.get("measures") else None
    if measure is None:
        return list(names)
    values = report.measures[measure]
    return sorted(names, key=lambda n: -(values.get(n, 0.0) if values.get(n) == values.get(n) else -1.0))


def _histogram_figure(report: HistogramReport, *, log_ratio: bool):
    """One panel per system (sorted by the last measure, best first): the two log histograms, or
    ln(h_r/h_nr) with the fitted line."""
    import numpy as np

    from reljudge.io.figures import pyplot

    plt = pyplot()
    names = _order(report, list(report.systems))
    cols = min(7, max(1, len(names)))
    rows = math.ceil(len(names) / cols)
    # one y scale for all panels; log10 counts drawn on a linear axis with 1/10/100 ticks (a log
    # axis per panel makes matplotlib's tick search cost seconds per figure)
    fig, axes = plt.subplots(
        rows, cols, figsize=(2.6 * cols, 2.1 * rows + 1.5), squeeze=False, sharex=True, sharey=True
    )
    top_count = max(
        (
            int(max(r.histograms.relevant.max(initial=0), r.histograms.nonrelevant.max(initial=0)))
            for r in report.systems.values()
        ),
        default=1,
    )
    decades = list(range(0, max(1, math.ceil(math.log10(max(top_count, 1)))) + 1))
    measure = report.settings["measures"][-1] if report.settings.get("measures") else None
    for ax, name in zip(axes.ravel(), names, strict=False):
        r = report.systems[name]
        h = r.histograms
        if log_ratio:
            s = h.supported
            o = np.log(h.relevant[s] / h.nonrelevant[s])
            ax.plot(h.centres[s], o, "o", ms=3, color="#2c6fbb")
            if r.hsa == r.hsa:
                xs = np.array([0.0, 1.0])
                ax.plot(xs, r.intercept + r.hsa * xs, "-", color="#c0392b", lw=1.2)
            ax.axhline(0, color="#999999", lw=0.6)
            title = f"{name}\nHSA={r.hsa:.2f}"
        else:
            for counts, color in ((h.relevant, "#2c6fbb"), (h.nonrelevant, "#c0392b")):
                logs = np.log10(np.where(counts > 0, counts, np.nan))
                ax.step(h.centres, logs, where="mid", color=color, lw=1.2)
            ax.set_yticks(decades, [f"{10**d:g}" for d in decades])
            title = f"{name}\nDO={r.do:.1f}"
        if measure is not None:
            title += f"  {measure}={report.measures[measure].get(name, math.nan):.3f}"
        ax.set_title(title, fontsize=7.5)
        ax.tick_params(labelsize=6.5)
    for ax in axes.ravel()[len(names) :]:
        ax.axis("off")
    settings = report.settings
    what = (
        "ln(h_R / h_NR) per supported bin and the fitted HSA line"
        if log_ratio
        else "counts (log scale): relevant (blue) and non-relevant (red)"
    )
    fig.suptitle(
        f"{what}\nx = {settings['values']} value in [0, 1] ({settings['bins']} bins; non-relevant: {settings['nonrel']}); panels by {measure}, best first",
        fontsize=10,
    )
    # fixed margins: tight_layout over dozens of panels costs many seconds
    fig.subplots_adjust(
        left=0.04, right=0.99, bottom=0.03, top=1 - 1.5 / fig.get_figheight(), wspace=0.32, hspace=0.55
    )
    return fig
