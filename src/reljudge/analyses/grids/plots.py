"""``judge grids --plot``'s figures: ``grids_systems.png`` (each measure's mean per system, one
panel per measure) and ``grids_agreement.png`` (each measure's agreement with the human
preferences per prompt set, with its bootstrap interval)."""

from __future__ import annotations

from pathlib import Path

from reljudge.analyses.grids.evaluate import MEASURES, GridReport


def plot_systems(report: GridReport, path: str | Path, title: str = "") -> Path:
    """One panel per measure (the six of Table 5.5, relevance, diversity, FID): a bar per system."""
    from reljudge.io.figures import fit_titles, pyplot, save_figure

    plt = pyplot()
    measures = [*MEASURES, "FID"]
    systems = [r["system"] for r in report.per_system]
    colors = plt.get_cmap("tab10").colors
    fig, axes = plt.subplots(3, 3, figsize=(10, 8))
    for ax, measure in zip(axes.ravel(), measures, strict=True):
        values = [r[measure] for r in report.per_system]
        ax.bar(systems, values, color=[colors[i % len(colors)] for i in range(len(systems))])
        better = "lower is better" if measure == "FID" else "higher is better"
        ax.set_title(f"{measure} ({better})", fontsize=9)
        ax.tick_params(labelsize=8)
        ax.grid(axis="y", alpha=0.3)
    s = report.settings
    fig.suptitle(
        title
        or f"grid measures per system ({s['prompts']} prompts, k = {s['k']}, trajectories: {s['trajectory']})",
        fontsize=10,
    )
    fig.tight_layout()
    fit_titles(fig)
    return save_figure(fig, path)


def plot_agreement(report: GridReport, path: str | Path, title: str = "") -> Path:
    """Horizontal bars: the agreement of each measure, one panel per prompt set, the interval as
    an error bar."""
    from reljudge.io.figures import fit_titles, pyplot, save_figure

    plt = pyplot()
    sets = sorted({r["prompt_set"] for r in report.agreement})
    fig, axes = plt.subplots(1, len(sets), figsize=(4.5 * len(sets), 4), squeeze=False, sharey=True)
    for ax, prompt_set in zip(axes[0], sets, strict=True):
        rows = [r for r in report.agreement if r["prompt_set"] == prompt_set]
        names = [r["measure"] for r in rows]
        share = [r["agreement"] for r in rows]
        low = [max(r["agreement"] - r["ci_low"], 0.0) if r["ci_low"] == r["ci_low"] else 0.0 for r in rows]
        high = [
            max(r["ci_high"] - r["agreement"], 0.0) if r["ci_high"] == r["ci_high"] else 0.0 for r in rows
        ]
        ax.barh(names, share, xerr=[low, high], color="#1f4e79", capsize=3)
        ax.set_xlim(0, 1)
        n = rows[0]["preferences"] if rows else 0
        ax.set_title(
            f"{prompt_set}: {rows[0]['prompts'] if rows else 0} prompts, {n} non-tie preferences", fontsize=9
        )
        ax.set_xlabel("agreement with the human preferences")
        ax.grid(axis="x", alpha=0.3)
    axes[0][0].invert_yaxis()  # the axes share y: inverted once, the first measure on top
    fig.suptitle(
        title or "agreement of each measure with the human grid preferences (95 % bootstrap interval)",
        fontsize=10,
    )
    fig.tight_layout()
    fit_titles(fig)
    return save_figure(fig, path)


__all__ = ["plot_agreement", "plot_systems"]
