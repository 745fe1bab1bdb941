"""Figures for `judge evaluate --plot` (matplotlib through `reljudge.io.figures`, imported
lazily; extra ``plot``)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from reljudge.io.figures import pyplot, save_figure
from reljudge.metrics.alignment import COMPARISON_NAMES, COMPARISONS


def plot_alignment(report, path: str | Path) -> Path:
    """Stacked agree/tie/disagree bars: one panel per comparison, one bar per judgment set."""
    plt = pyplot()
    path = Path(path)
    names = [s.name for s in report.sets]
    fig, axes = plt.subplots(1, 3, figsize=(max(8, 1.2 + 0.55 * len(names)) * 1.6, 4.2), sharey=True)
    colors = {"agree": "#4c9a2a", "tie": "#c8c8c8", "disagree": "#c0392b"}
    x = np.arange(len(names))
    for ax, comp in zip(axes, COMPARISONS, strict=True):
        fr = np.array([s.alignment.fractions(comp) for s in report.sets], dtype=float) * 100
        fr = np.nan_to_num(fr)
        bottom = np.zeros(len(names))
        for k, label in enumerate(("agree", "tie", "disagree")):
            ax.bar(x, fr[:, k], bottom=bottom, color=colors[label], label=label, width=0.75)
            bottom += fr[:, k]
        ax.set_title(COMPARISON_NAMES[comp])
        ax.set_xticks(x, names, rotation=60, ha="right", fontsize=8)
        ax.set_ylim(0, 100)
    axes[0].set_ylabel("% of pairs")
    axes[-1].legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    save_figure(fig, path)
    plt.close(fig)
    return path


def plot_compatibility(report, path: str | Path) -> Path:
    """Scatter of mean compatibility against the human measure per run, one panel per set, τ in the title."""
    plt = pyplot()
    path = Path(path)
    sets = [s for s in report.sets if s.compatibility]
    if not sets:
        raise ValueError("the report has no compatibility values (evaluate with runs)")
    human = report.mean_measure()
    cols = min(4, len(sets))
    rows = math.ceil(len(sets) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(3.4 * cols, 3.1 * rows), squeeze=False)
    for ax, s in zip(axes.ravel(), sets, strict=False):
        runs = [r for r, v in s.compatibility.items() if v and r in human and not math.isnan(human[r])]
        xs = [human[r] for r in runs]
        ys = [float(np.mean(list(s.compatibility[r].values()))) for r in runs]
        ax.scatter(xs, ys, s=12, color="#2c6fbb")
        tau = s.ranking.get("kendall_tau_b", float("nan")) if s.ranking else float("nan")
        ax.set_title(f"{s.name}\nτ-b = {tau:.3f}", fontsize=9)
        ax.set_xlabel(report.measure, fontsize=8)
        ax.set_ylabel(f"compatibility (p={report.p:g})", fontsize=8)
        ax.tick_params(labelsize=7)
    for ax in axes.ravel()[len(sets) :]:
        ax.axis("off")
    fig.tight_layout()
    save_figure(fig, path)
    plt.close(fig)
    return path
