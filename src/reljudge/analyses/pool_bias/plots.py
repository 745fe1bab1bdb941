"""The figures of ``judge pool-bias`` (matplotlib, loaded when a plot is asked for):
``relevant_found.png`` (relevant pairs found by the depth-k pool of each run type) and
``scatter.png`` (actual vs estimated, first repetition, per pool type and measure)."""

from __future__ import annotations

import math

from reljudge.analyses.pool_bias.simulation import PoolBiasReport

_COLORS = ("#2c6fbb", "#d35400", "#4c9a2a", "#8e44ad", "#7f8c8d")
_MARKERS = ("o", "^", "s", "D", "v")


def found_figure(report: PoolBiasReport):
    from reljudge.io.figures import fit_titles, pyplot

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
    fit_titles(fig)  # titles wrapped to their width, then laid out
    return fig


def scatter_figure(report: PoolBiasReport):
    from reljudge.io.figures import fit_titles, pyplot

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
    fit_titles(fig)  # titles wrapped to their width, then laid out
    return fig
