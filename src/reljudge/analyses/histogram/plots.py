"""The figures of ``judge histogram`` (matplotlib, loaded when a plot is asked for):
``histograms.png`` (per system: the log histograms of the relevant and non-relevant values) and
``slopes.png`` (per system: ln(h_r/h_nr) per supported bin and the fitted HSA line)."""

from __future__ import annotations

import math
from collections.abc import Sequence

from reljudge.analyses.histogram.do_hsa import HistogramReport


def _order(report: HistogramReport, names: Sequence[str]) -> list[str]:
    measure = report.settings["measures"][-1] if report.settings.get("measures") else None
    if measure is None:
        return list(names)
    values = report.measures[measure]
    return sorted(names, key=lambda n: -(values.get(n, 0.0) if values.get(n) == values.get(n) else -1.0))


def histogram_figure(report: HistogramReport, *, log_ratio: bool):
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
