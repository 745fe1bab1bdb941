"""PNG plots of a sweep analysis (matplotlib, Agg backend, imported lazily through
`reljudge.io.figures.pyplot`: a missing matplotlib is a `MissingExtraError`)."""

from __future__ import annotations

import textwrap
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
):
    image = ax.imshow(np.ma.masked_invalid(data), cmap=cmap, vmin=vmin, vmax=vmax, aspect="auto")
    ax.set_xticks(
        range(len(cols)), cols, rotation=90 if max(map(len, cols), default=0) > 8 else 0, fontsize=9
    )
    ax.set_yticks(range(len(rows)), rows, fontsize=9)
    if annotate:
        for i in range(data.shape[0]):
            for j in range(data.shape[1]):
                if np.isfinite(data[i, j]):
                    ax.text(
                        j, i, f"{data[i, j]:.2f}", ha="center", va="center", fontsize=10,
                        color=_ink(image.cmap(image.norm(data[i, j]))),
                    )  # fmt: skip
    return image


def _ink(rgba: tuple[float, ...]) -> str:
    """Black on light cells, white on dark ones (relative luminance of the cell's colour)."""
    r, g, b = rgba[:3]
    return "black" if 0.2126 * r + 0.7152 * g + 0.0722 * b > 0.45 else "white"


def _title(text: str, width_in: float) -> str:
    """The title wrapped to the figure's width (about 11 characters an inch at 10 pt)."""
    return "\n".join(textwrap.wrap(text, max(24, int(width_in * 11))))


def _size(cols: int, rows: int, col_in: float, row_in: float) -> tuple[float, float]:
    """A figure large enough to read: at least 6 × 3.6 inches, growing with the cells."""
    return max(6.0, 2.8 + col_in * cols), max(3.6, 1.8 + row_in * rows)


def write_plots(analysis: SweepAnalysis, out_dir: Path) -> list[tuple[Path, str]]:
    """Metric heatmaps (prompt × model, one per dataset and task) and α matrices, each PNG
    written atomically. Raises `MissingExtraError` (before writing anything) without matplotlib."""
    from reljudge.io.figures import pyplot, save_figure

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
        size = _size(len(models), len(prompts), 1.1, 0.3)
        fig, ax = plt.subplots(figsize=size)
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
        ax.set_title(_title(f"{ds} {task}: {metric} by prompt and model", size[0]), fontsize=10)
        path = out_dir / f"heatmap_{safe_name(ds)}_{task}.png"
        save_figure(fig, path, dpi=120, tight=True)
        plt.close(fig)
        written.append((path, f"{ds} {task}: {metric} by prompt × model"))
    for a in analysis.alphas:
        order = _order(list(a.prompts))
        idx = [a.prompts.index(p) for p in order]
        matrix = a.matrix[np.ix_(idx, idx)]
        size = _size(len(order), len(order), 0.35, 0.35)
        fig, ax = plt.subplots(figsize=size)
        image = _heatmap(ax, matrix, order, order, "magma", -0.2, 1.0, len(order) <= 12)
        fig.colorbar(image, ax=ax, label=f"Krippendorff's α ({a.level})")
        title = f"{a.dataset} {a.task} {a.model}: α between prompts (all: {a.overall:.2f})"
        ax.set_title(_title(title, size[0]), fontsize=10)
        path = out_dir / f"alpha_{safe_name(a.dataset)}_{safe_name(a.model)}_{a.task}.png"
        save_figure(fig, path, dpi=120, tight=True)
        plt.close(fig)
        written.append((path, f"{a.dataset} {a.task} {a.model}: α between prompts"))
    from reljudge.sweep.prompt_plots import write_prompt_plots

    return write_prompt_plots(analysis, out_dir) + written
