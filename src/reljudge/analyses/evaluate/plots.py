"""The figures of ``judge evaluate --plot`` and ``judge plot-summary`` (matplotlib through
`reljudge.io.figures`, imported lazily; extra ``plot``): the alignment bars, compatibility
against the human measure, and alignment against agreement (thesis Fig. 4.5: one labelled point
per judgment set, one colour per label). Titles are wrapped to the width they have
(`reljudge.io.figures.fit_titles`); the scatter's point names are moved apart and kept inside
the axes by adjustText (an arrow joins a name moved away to its point)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from reljudge.io.figures import fit_titles, pyplot, save_figure
from reljudge.metrics.alignment import COMPARISON_NAMES, COMPARISONS

_COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#17becf"]


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
    fit_titles(fig)
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
    fit_titles(fig)
    save_figure(fig, path)
    plt.close(fig)
    return path


def _short(name: str) -> str:
    """A set name without its dataset suffix (``umbrela.dl21`` -> ``umbrela``)."""
    stem, dot, tail = name.rpartition(".")
    return stem if dot and tail.lower().startswith(("dl", "antique", "trec")) else name


def _place_names(ax, names: list, xs: list[float], ys: list[float]) -> None:
    """Move the point names apart and off the points, inside the axes (adjustText, part of the
    ``plot`` extra), with a thin line to a name's point when it moved away from it."""
    from adjustText import adjust_text

    adjust_text(
        names,
        x=xs,
        y=ys,
        ax=ax,
        ensure_inside_axes=True,
        expand=(1.1, 1.4),
        arrowprops={"arrowstyle": "-", "color": "0.55", "lw": 0.5},
    )


def plot_alignment_vs_agreement(rows: Sequence[Mapping[str, Any]], path: str | Path) -> Path:
    """Scatter of macro agree (x) against τ-b (y), a labelled point per set, a colour per label.
    Sets without a τ (no runs) are left out; raises ValueError when none has one."""
    points = [
        r for r in rows if r["kendall_tau_b"] == r["kendall_tau_b"] and r["macro_agree"] == r["macro_agree"]
    ]
    if not points:
        raise ValueError("no judgment set has both a macro agree share and a τ (evaluate with --runs)")
    plt = pyplot()
    labels = list(dict.fromkeys(r["label"] for r in points))
    fig, ax = plt.subplots(figsize=(7.5, 5.5))
    names = []
    for i, label in enumerate(labels):
        mine = [r for r in points if r["label"] == label]
        colour = _COLOURS[i % len(_COLOURS)]
        ax.scatter(
            [r["macro_agree"] for r in mine],
            [r["kendall_tau_b"] for r in mine],
            s=36,
            color=colour,
            label=label,
            zorder=3,
        )
        names += [
            ax.text(r["macro_agree"], r["kendall_tau_b"], _short(r["set"]), fontsize=7, color=colour)
            for r in mine
        ]
    ax.set_xlabel('macro "Agree" (mean of BvU, AvU, BvA agree shares)')
    ax.set_ylabel("Kendall τ-b with the human system ranking")
    ax.set_title("Alignment with human labels against system-ranking agreement", fontsize=10)
    ax.grid(color="0.9")
    ax.set_axisbelow(True)
    ax.margins(0.12)  # room inside the axes for the names of the outermost points
    if len(labels) > 1 or labels[0]:
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))  # outside: no name under it
    fit_titles(fig)
    _place_names(ax, names, [r["macro_agree"] for r in points], [r["kendall_tau_b"] for r in points])
    save_figure(fig, path, dpi=120)
    plt.close(fig)
    return Path(path)
