"""PNG plots of a sweep analysis (matplotlib, Agg backend, imported lazily through
`reljudge.evaluation.plots.pyplot`: a missing matplotlib is a `MissingExtraError`)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from reljudge.sweep.analysis import SweepAnalysis
from reljudge.sweep.grid import safe_name


def _order(prompts: list[str]) -> list[str]:
    return sorted(prompts, key=lambda p: (0, int(p), "") if p.isdigit() else (1, 0, p))


def _heatmap(
    ax,
    data: np.ndarray,
    rows: list[str],
    cols: list[str],
    cmap: str,
    vmin: float,
    vmax: float,
    annotate: bool,
):  # type: ignore[no-untyped-def]
    image = ax.imshow(np.ma.masked_invalid(data), cmap=cmap, vmin=vmin, vmax=vmax, aspect="auto")
    ax.set_xticks(range(len(cols)), cols, rotation=90, fontsize=7)
    ax.set_yticks(range(len(rows)), rows, fontsize=7)
    if annotate:
        for i in range(data.shape[0]):
            for j in range(data.shape[1]):
                if np.isfinite(data[i, j]):
                    ax.text(j, i, f"{data[i, j]:.2f}", ha="center", va="center", fontsize=6)
    return image


def write_plots(analysis: SweepAnalysis, out_dir: Path) -> list[tuple[Path, str]]:
    """Metric heatmaps (prompt × model, one per dataset and task) and α matrices, each PNG
    written atomically. Raises `MissingExtraError` (before writing anything) without matplotlib."""
    from reljudge.evaluation.plots import pyplot, save_figure

    plt = pyplot()

    out_dir.mkdir(parents=True, exist_ok=True)
    written: list[tuple[Path, str]] = []
    groups: dict[tuple[str, str], list[dict]] = {}
    for row in analysis.rows:
        groups.setdefault((row["dataset"], row["task"]), []).append(row)
    for (ds, task), rows in sorted(groups.items()):
        models = sorted({r["model"] for r in rows})
        prompts = _order(sorted({r["prompt"] for r in rows}))
        group_of = {r["prompt"]: r["group"] for r in rows}
        data = np.full((len(prompts), len(models)), np.nan)
        for r in rows:
            v = r.get("value")
            data[prompts.index(r["prompt"]), models.index(r["model"])] = v if v is not None else np.nan
        metric = rows[0]["metric"]
        fig, ax = plt.subplots(figsize=(1.6 + 1.1 * len(models), 1.2 + 0.22 * len(prompts)))
        vmin, vmax = (0.0, 1.0) if metric == "agree" else (-0.2, 1.0)
        image = _heatmap(
            ax,
            data,
            [f"{p} ({group_of[p]})" for p in prompts],
            models,
            "viridis",
            vmin,
            vmax,
            len(prompts) <= 60,
        )
        fig.colorbar(image, ax=ax, label=metric)
        ax.set_title(f"{ds} {task}: {metric} by prompt and model", fontsize=9)
        fig.tight_layout()
        path = out_dir / f"heatmap_{safe_name(ds)}_{task}.png"
        save_figure(fig, path, dpi=110, tight=False)
        plt.close(fig)
        written.append((path, f"{ds} {task}: {metric} by prompt × model"))
    for a in analysis.alphas:
        order = _order(list(a.prompts))
        idx = [a.prompts.index(p) for p in order]
        matrix = a.matrix[np.ix_(idx, idx)]
        fig, ax = plt.subplots(figsize=(1.5 + 0.25 * len(order), 1.2 + 0.25 * len(order)))
        image = _heatmap(ax, matrix, order, order, "magma", -0.2, 1.0, len(order) <= 12)
        fig.colorbar(image, ax=ax, label=f"Krippendorff's α ({a.level})")
        ax.set_title(f"{a.dataset} {a.task} {a.model}: α between prompts (all: {a.overall:.2f})", fontsize=9)
        fig.tight_layout()
        path = out_dir / f"alpha_{safe_name(a.dataset)}_{safe_name(a.model)}_{a.task}.png"
        save_figure(fig, path, dpi=100, tight=False)
        plt.close(fig)
        written.append((path, f"{a.dataset} {a.task} {a.model}: α between prompts"))
    from reljudge.sweep.prompt_plots import write_prompt_plots

    return write_prompt_plots(analysis, out_dir) + written
