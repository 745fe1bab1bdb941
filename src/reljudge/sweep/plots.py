"""PNG plots of a sweep analysis (matplotlib, Agg backend, imported lazily through
`reljudge.io.figures.pyplot`: a missing matplotlib is a `MissingExtraError`).

Each heat map's colour scale spans its measure's whole range, said in the colour bar's label:
κ and α from −1 to 1 on a diverging scale centred on 0 (chance agreement), the share of agreeing
pairs from 0 to 1; a value beyond the range (α can fall below −1 on few items) shows as the end
colour, and the colour bar then has an arrow on that side. Titles are wrapped to the figure
(`reljudge.io.figures.fit_titles`)."""

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


#: (low, high, colour map, what the colour bar says) of each cell metric
SCALES: dict[str, tuple[float, float, str, str]] = {
    "kappa": (-1.0, 1.0, "RdBu", "Cohen's κ (−1 to 1; 0 = chance)"),
    "agree": (0.0, 1.0, "viridis", "share of agreeing pairs (0 to 1)"),
}
#: the scale of Krippendorff's α between prompts (its label names the level)
ALPHA_SCALE = (-1.0, 1.0, "RdBu")


def scale_of(metric: str) -> tuple[float, float, str, str]:
    """The colour scale of a cell metric: its full range (a metric not listed: −1 to 1)."""
    return SCALES.get(metric, (-1.0, 1.0, "RdBu", f"{metric} (−1 to 1)"))


def _extend(data: np.ndarray, vmin: float, vmax: float) -> str:
    """The colour bar's arrows: on the side(s) where a value lies beyond the scale."""
    finite = data[np.isfinite(data)]
    low = bool(finite.size and finite.min() < vmin)
    high = bool(finite.size and finite.max() > vmax)
    return {(False, False): "neither", (True, False): "min", (False, True): "max"}.get((low, high), "both")


def _size(cols: int, rows: int, col_in: float, row_in: float) -> tuple[float, float]:
    """A figure large enough to read: at least 6 × 3.6 inches, growing with the cells."""
    return max(6.0, 2.8 + col_in * cols), max(3.6, 1.8 + row_in * rows)


def write_plots(analysis: SweepAnalysis, out_dir: Path) -> list[tuple[Path, str]]:
    """Metric heatmaps (prompt × model, one per dataset and task) and α matrices, each PNG
    written atomically. Raises `MissingExtraError` (before writing anything) without matplotlib."""
    from reljudge.io.figures import fit_titles, pyplot, save_figure

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
        vmin, vmax, cmap, label = scale_of(metric)
        image = _heatmap(
            ax,
            data,
            [f"{p} ({group_of[p]})" for p in prompts],
            models,
            cmap,
            vmin,
            vmax,
            len(prompts) <= 60,
        )
        fig.colorbar(image, ax=ax, label=label, extend=_extend(data, vmin, vmax))
        ax.set_title(f"{ds} {task}: {metric} by prompt and model", fontsize=10)
        fit_titles(fig)
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
        vmin, vmax, cmap = ALPHA_SCALE
        image = _heatmap(ax, matrix, order, order, cmap, vmin, vmax, len(order) <= 12)
        fig.colorbar(
            image,
            ax=ax,
            label=f"Krippendorff's α, {a.level} (−1 to 1)",
            extend=_extend(matrix, vmin, vmax),
        )
        title = f"{a.dataset} {a.task} {a.model}: α between prompts (all: {a.overall:.2f})"
        ax.set_title(title, fontsize=10)
        fit_titles(fig)
        path = out_dir / f"alpha_{safe_name(a.dataset)}_{safe_name(a.model)}_{a.task}.png"
        save_figure(fig, path, dpi=120, tight=True)
        plt.close(fig)
        written.append((path, f"{a.dataset} {a.task} {a.model}: α between prompts"))
    from reljudge.sweep.prompt_plots import write_prompt_plots

    return write_prompt_plots(analysis, out_dir) + written
