"""The win-ratio heat map (matplotlib, imported when a plot is asked for)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from reljudge.metrics.shallow import WinRatios


def win_ratio_heatmap(ratios: WinRatios, path: Path, *, title: str) -> None:
    """Cell (row j, column i) = run i's win ratio against run j; significant cells outlined."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as err:  # pragma: no cover - depends on the environment
        from reljudge.errors import MissingExtraError

        raise MissingExtraError("the heat map needs matplotlib: pip install 'reljudge[plot]'") from err
    m = len(ratios.runs)
    grid = np.full((m, m), np.nan)
    for j in range(m):
        for i in range(m):
            if i != j:
                grid[j, i] = ratios.ratio(i, j)
    side = max(6.0, 0.22 * m + 3.0)
    font = 9 if m <= 20 else 6
    fig, ax = plt.subplots(figsize=(side + 1.5, side))
    image = ax.imshow(grid, cmap="RdBu", vmin=0.0, vmax=1.0)
    ax.set_xticks(range(m), ratios.runs, rotation=90, fontsize=font)
    ax.set_yticks(range(m), ratios.runs, fontsize=font)
    ax.set_xlabel("column run (its win ratio against the row run)")
    ax.set_ylabel("row run")
    for j in range(m):
        for i in range(m):
            if i != j and ratios.significant(i, j):
                ax.add_patch(
                    plt.Rectangle((i - 0.5, j - 0.5), 1, 1, fill=False, edgecolor="black", linewidth=1.2)
                )
    bar = fig.colorbar(image, ax=ax, fraction=0.04, pad=0.02)
    bar.set_label("win ratio W / (W + L); outlined: significant (Bonferroni)")
    ax.set_title(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=130)
    plt.close(fig)
