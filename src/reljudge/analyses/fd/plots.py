"""``judge fd --plot``'s figure, ``fd_bootstrap.png``: one panel for the human measure and one
per FD variant, each run with its interval over topics where there is one; runs in the order of
the official measure. The title names only the intervals the panels draw (none with
``--bootstrap 0``), each with how it was made.
"""

from __future__ import annotations

from reljudge.analyses.fd.variants import FDVariantsReport


def bootstrap_figure(report: FDVariantsReport):
    """Panel 1: the measure per run with its interval; one panel per FD variant with FD's."""
    import numpy as np

    from reljudge.io.figures import fit_titles, pyplot

    plt = pyplot()
    rows = report.rows()  # best first by the official measure
    runs = [r["run"] for r in rows]
    panels = [("measure_fd_topics", f"{report.measure} (mean over FD topics)")] + [
        (label, f"{label} (lower is better)") for label in report.reports
    ]
    fig, axes = plt.subplots(
        1,
        len(panels),
        figsize=(4.2 * len(panels), max(4.0, 0.16 * len(runs) + 1.5)),
        sharey=True,
        squeeze=False,
    )
    y = np.arange(len(runs))
    drawn: set[str] = set()  # which intervals the panels draw: "measure", "fd"
    for ax, (key, title) in zip(axes[0], panels, strict=True):
        low_key, high_key = (
            ("measure_ci_low", "measure_ci_high")
            if key == "measure_fd_topics"
            else (f"{key}_ci_low", f"{key}_ci_high")
        )
        v = np.array([r[key] for r in rows], float)
        lo = np.array([r[low_key] for r in rows], float)
        hi = np.array([r[high_key] for r in rows], float)
        has = ~np.isnan(lo) & ~np.isnan(hi)
        # the interval as a line, not an error bar (FD's jackknife interval is centred on it)
        ax.hlines(y[has], lo[has], hi[has], color="#7f8c8d", lw=1)
        if has.any():
            drawn.add("measure" if key == "measure_fd_topics" else "fd")
        ax.plot(v, y, "o", ms=3, color="#2c6fbb")
        ax.set_title(title, fontsize=10)
        ax.grid(axis="x", alpha=0.3)
    axes[0][0].set_yticks(y, runs, fontsize=7 if len(runs) > 30 else 9)
    axes[0][0].invert_yaxis()
    fig.suptitle(
        f"Runs by the official {report.measure} (best on top); {interval_caption(report, drawn)}", fontsize=10
    )
    fit_titles(fig)
    return fig


def interval_caption(report: FDVariantsReport, drawn: set[str]) -> str:
    """What the grey lines of the figure are: only the intervals it draws ("measure", "fd")."""
    level = f"{100 * report.settings['level']:g}%"
    how = []
    if "measure" in drawn:
        how.append(f"{report.measure}: percentile bootstrap, {report.settings['n_boot']} resamples")
    if "fd" in drawn:
        how.append("FD: delete-one-topic jackknife")
    if not how:
        return "no intervals (--bootstrap 0, or too few topics)"
    return f"lines: {level} intervals over topics ({'; '.join(how)})"
