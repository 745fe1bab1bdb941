"""Plots of the prompt analyses (matplotlib through `reljudge.io.figures.pyplot`):

- ``bars_<task>.png`` (thesis Fig. 4.7): one panel per dataset, a horizontal bar per prompt and
  model (prompts ordered UMBRELA, human, LLM from the top; one colour per model), and a dashed line
  at each model's mean over each prompt group, drawn across that group's rows;
- ``prompt_diversity.png`` (thesis Fig. 4.6): box plots of unique terms per prompt text, by group
  and message (system / user).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from reljudge.io.figures import fit_titles
from reljudge.sweep.analysis import SweepAnalysis

_GROUP_ORDER = {"human": 1, "llm": 2}  # any other group (a reference prompt such as UMBRELA) on top
_GROUP_LABEL = {"human": "human", "llm": "LLM"}
_COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"]
_XLABEL = {
    "kappa": "Cohen's κ with the human labels",
    "agree": "share of pairs agreeing with the human order",
}


def _prompt_order(rows: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """(prompt, group) from the top of the chart: other groups (UMBRELA), human, LLM; by id within a group."""
    seen = {(r["prompt"], r["group"]) for r in rows}
    return sorted(
        seen,
        key=lambda pg: (_GROUP_ORDER.get(pg[1], 0), pg[1], int(pg[0]) if pg[0].isdigit() else 10**9, pg[0]),
    )


def _bars_panel(ax, rows: list[dict[str, Any]], models: list[str], title: str) -> None:
    order = _prompt_order(rows)
    value = {(r["prompt"], r["model"]): r.get("value", np.nan) for r in rows}
    height = 0.8 / len(models)
    for m, model in enumerate(models):
        y = np.arange(len(order)) + (m - (len(models) - 1) / 2) * height
        x = [value.get((p, model), np.nan) for p, _ in order]
        ax.barh(
            y, np.nan_to_num(x), height=height, color=_COLOURS[m % len(_COLOURS)], alpha=0.75, label=model
        )
    groups = list(dict.fromkeys(g for _, g in order))
    for g in groups:
        rows_of_g = [i for i, (_, pg) in enumerate(order) if pg == g]
        lo, hi = min(rows_of_g) - 0.45, max(rows_of_g) + 0.45
        if g != groups[0]:
            ax.axhline(lo - 0.05, color="0.6", linewidth=0.8)
        for m, model in enumerate(models):
            vals = [value.get((order[i][0], model), np.nan) for i in rows_of_g]
            if len(rows_of_g) > 1 and np.isfinite(vals).any():
                mean = float(np.nanmean(vals))
                ax.vlines(
                    mean,
                    lo,
                    hi,
                    colors=_COLOURS[m % len(_COLOURS)],
                    linestyles="dashed",
                    linewidth=2.0,
                    zorder=4,
                )
    ax.set_yticks(
        range(len(order)), [f"{p} ({_GROUP_LABEL.get(g, g.upper())})" for p, g in order], fontsize=8
    )
    ax.set_ylim(len(order) - 0.5, -0.5)  # first prompt on top
    ax.axvline(0, color="black", linewidth=0.8)
    ax.grid(axis="x", color="0.9")
    ax.set_axisbelow(True)
    ax.set_title(title, fontsize=11)


def write_prompt_plots(analysis: SweepAnalysis, out_dir: Path) -> list[tuple[Path, str]]:
    """The per-prompt bar charts (one per task, a panel per dataset) and the diversity box plot."""
    from reljudge.io.figures import pyplot, save_figure

    plt = pyplot()
    out_dir.mkdir(parents=True, exist_ok=True)
    written: list[tuple[Path, str]] = []
    tasks = sorted({r["task"] for r in analysis.rows})
    for task in tasks:
        rows = [r for r in analysis.rows if r["task"] == task and r.get("value") == r.get("value")]
        datasets = sorted({r["dataset"] for r in rows})
        if not rows:
            continue
        models = sorted({r["model"] for r in rows})
        n_prompts = max(len(_prompt_order([r for r in rows if r["dataset"] == d])) for d in datasets)
        fig, axes = plt.subplots(
            1,
            len(datasets),
            figsize=(5.5 * len(datasets) + 1, 1.8 + 0.32 * n_prompts),
            sharex=True,
            squeeze=False,
            layout="constrained",
        )
        for ax, ds in zip(axes[0], datasets, strict=True):
            _bars_panel(ax, [r for r in rows if r["dataset"] == ds], models, ds.upper())
            ax.set_xlabel(_XLABEL.get(rows[0]["metric"], rows[0]["metric"]), fontsize=9)
        handles, labels = axes[0][0].get_legend_handles_labels()
        fig.legend(handles, labels, loc="outside lower center", ncol=len(models), frameon=False, fontsize=10)
        fig.suptitle(
            f"{task}: per-prompt agreement with humans (dashed: the model's mean over a prompt group)",
            fontsize=11,
        )
        fit_titles(fig)  # the title wrapped to the figure's width (one panel is 6.5 inches wide)
        path = out_dir / f"bars_{task}.png"
        save_figure(fig, path, dpi=110, tight=False)
        plt.close(fig)
        written.append((path, f"{task}: per-prompt {rows[0]['metric']} by model, group means dashed"))
    if analysis.diversity:
        written.append(_diversity_plot(plt, save_figure, analysis.diversity, out_dir))
    return written


def _diversity_plot(plt, save_figure, rows: list[dict[str, Any]], out_dir: Path) -> tuple[Path, str]:
    groups = sorted({r["group"] for r in rows}, key=lambda g: (_GROUP_ORDER.get(g, 0), g))
    groups = [g for g in groups if sum(r["group"] == g for r in rows) > 6] or groups  # UMBRELA: one prompt
    fig, ax = plt.subplots(figsize=(2.2 + 1.6 * len(groups), 4.2))
    data, labels, colours = [], [], []
    for message, colour in (("system", "#9ecae1"), ("user", "#fdae6b")):
        for g in groups:
            data.append([r["unique_terms"] for r in rows if r["group"] == g and r["message"] == message])
            labels.append(f"{_GROUP_LABEL.get(g, g.upper())}\n{message}")
            colours.append(colour)
    box = ax.boxplot(data, patch_artist=True, widths=0.6, medianprops={"color": "black"})
    for patch, colour in zip(box["boxes"], colours, strict=True):
        patch.set_facecolor(colour)
    ax.set_xticks(range(1, len(labels) + 1), labels, fontsize=9)
    ax.set_ylabel("unique terms per prompt text (tasks pooled)")
    ax.set_title("Lexical diversity of the prompts by group and message", fontsize=10)
    ax.grid(axis="y", color="0.9")
    fit_titles(fig)
    path = out_dir / "prompt_diversity.png"
    save_figure(fig, path, dpi=110, tight=False)
    plt.close(fig)
    return path, "lexical diversity of the prompts by group and message"
