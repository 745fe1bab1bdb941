"""The figure of ``judge sparsify`` (matplotlib, loaded when a plot is asked for):
``sparsified.png`` (τ per N, every seed and the mean)."""

from __future__ import annotations

from reljudge.analyses.sparsify.sparse_qrels import SparsifyReport


def sparsified_figure(report: SparsifyReport):
    from reljudge.io.figures import fit_titles, pyplot

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
    fit_titles(fig)  # titles wrapped to their width, then laid out
    return fig
