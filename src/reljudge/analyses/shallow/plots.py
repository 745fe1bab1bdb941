"""The win-ratio heat map and the leaderboard plot (matplotlib, imported when a plot is asked for)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from reljudge.analyses.shallow.winratio import WinRatios
from reljudge.io.figures import fit_titles, pyplot, save_figure


def win_ratio_heatmap(ratios: WinRatios, path: Path, *, title: str) -> None:
    """Cell (row j, column i) = run i's win ratio against run j; significant cells outlined."""
    plt = pyplot()
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
    fit_titles(fig)  # titles wrapped to their width, then laid out
    save_figure(fig, path, dpi=130, tight=False)
    plt.close(fig)


def leaderboard_plot(rows: list[dict[str, object]], path: Path, *, title: str) -> None:
    """MRR@10 of each run under the preference qrels and under the original qrels, with their
    bootstrap intervals, runs ordered by the preference leaderboard (best at the top)."""
    plt = pyplot()
    n = len(rows)
    fig, ax = plt.subplots(figsize=(8.5, max(4.0, 0.2 * n + 1.5)))
    y = np.arange(n)[::-1]
    for key, low, high, label, colour, shift in (
        ("mrr10_preference", "pref_low", "pref_high", "preference qrels", "#1f4e9c", 0.15),
        ("mrr10_original", "orig_low", "orig_high", "original qrels", "#c0392b", -0.15),
    ):
        value = np.array([float(r[key]) for r in rows])  # type: ignore[arg-type]
        lo = np.array([float(r[low]) for r in rows])  # type: ignore[arg-type]
        hi = np.array([float(r[high]) for r in rows])  # type: ignore[arg-type]
        ax.errorbar(
            value, y + shift, xerr=[value - lo, hi - value], fmt="o", ms=3, lw=0.8, color=colour, label=label
        )
    ax.set_yticks(y, [str(r["run"]) for r in rows], fontsize=7 if n > 30 else 9)
    ax.set_ylim(-1, n)
    ax.set_xlabel("MRR@10 (95% bootstrap interval over queries)")
    ax.grid(axis="x", alpha=0.3)
    ax.legend(loc="lower right", fontsize=8)
    ax.set_title(title, fontsize=10)
    fit_titles(fig)  # titles wrapped to their width, then laid out
    save_figure(fig, path, dpi=130, tight=False)
    plt.close(fig)
