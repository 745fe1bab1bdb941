"""Agreement between prompts: Krippendorff's α over all prompts of a (dataset, model, task), and
the matrix of α between every two prompts, each on the items both labelled (`inter_prompt_alpha`);
per prompt group (spec S9b) α over the group's prompts alone, and the mean of the pairwise α
within each group and across every two groups (`AlphaResult.by_group`, `AlphaResult.pairwise_mean`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from reljudge.metrics.agreement import alpha_from_coincidences, krippendorff_alpha
from reljudge.sweep.analysis.cells import item_indices
from reljudge.sweep.analysis.conventions import Conventions
from reljudge.sweep.labels import CellLabels

_OUTCOME_CODE = {"disagree": 0.0, "tie": 1.0, "agree": 2.0}


@dataclass
class AlphaResult:
    dataset: str
    model: str
    task: str
    level: str
    prompts: list[str]
    matrix: np.ndarray  # prompts × prompts, α between two prompts (1 on the diagonal)
    overall: float  # α over all prompts at once
    units: int  # items labelled by at least two prompts
    groups: list[str] = field(default_factory=list)  # the group of each prompt (parallel to prompts)
    by_group: dict[str, float] = field(default_factory=dict)  # α over the prompts of one group
    #: mean of the pairwise α within a group ("human") and across two groups ("human|llm")
    pairwise_mean: dict[str, float] = field(default_factory=dict)


def _cell_vectors(cells: Sequence[CellLabels]) -> tuple[list[str], np.ndarray]:
    """Prompts × units matrix (NaN = not labelled) of one (dataset, model, task)."""
    index: dict[Any, int] = {}
    rows = []
    for cell in cells:
        if cell.task == "pairwise":
            keys = list(cell.outcomes)
            vals = np.fromiter(
                (_OUTCOME_CODE[o] for o in cell.outcomes.values()), dtype=float, count=len(keys)
            )
            setdefault = index.setdefault
            idx = np.fromiter((setdefault(k, len(index)) for k in keys), dtype=np.int64, count=len(keys))
        else:
            idx = item_indices(cell.qids, cell.docids, index, grow=True)
            vals = np.asarray(cell.values, dtype=float)
        rows.append((idx, vals))
    data = np.full((len(cells), len(index)), np.nan)
    for r, (idx, vals) in enumerate(rows):
        data[r, idx] = vals
    return [c.prompt for c in cells], data


def inter_prompt_alpha(cells: Sequence[CellLabels], conv: Conventions) -> list[AlphaResult]:
    """Krippendorff's α between the prompts of each (dataset, model, task)."""
    by: dict[tuple[str, str, str], list[CellLabels]] = {}
    for cell in cells:
        by.setdefault((cell.dataset, cell.model, cell.task), []).append(cell)
    out = []
    for (ds, model, task), members in sorted(by.items()):
        if len(members) < 2:
            continue
        level = conv.alpha_level.get(task, "nominal")
        prompts, data = _cell_vectors(members)
        present = ~np.isnan(data)
        pairable = present.sum(axis=0) >= 2
        overall = krippendorff_alpha(data[:, pairable], level=level)  # type: ignore[arg-type]
        matrix = _pairwise_matrix(data, present, level)
        groups = [c.group for c in members]
        by_group, pairwise_mean = _group_alphas(data, matrix, groups, level)
        out.append(
            AlphaResult(
                ds,
                model,
                task,
                level,
                prompts,
                matrix,
                overall,
                int(pairable.sum()),
                groups,
                by_group,
                pairwise_mean,
            )
        )
    return out


def _pairwise_matrix(data: np.ndarray, present: np.ndarray, level: str) -> np.ndarray:
    """α between every two prompts on the items both labelled (1 on the diagonal): for two raters
    the coincidence matrix is the contingency table plus its transpose, counted with one bincount."""
    k = data.shape[0]
    matrix = np.eye(k)
    values = np.unique(data[present])
    codes = np.searchsorted(values, np.where(present, data, values[0] if values.size else 0.0))
    size = values.size
    for i in range(k):
        for j in range(i + 1, k):
            both = present[i] & present[j]
            if not both.any() or size < 2:
                matrix[i, j] = matrix[j, i] = math.nan
                continue
            table = np.bincount(codes[i, both] * size + codes[j, both], minlength=size * size)
            table = table.reshape(size, size).astype(float)
            value = alpha_from_coincidences(table + table.T, values, level=level)  # type: ignore[arg-type]
            matrix[i, j] = matrix[j, i] = value
    return matrix


def _group_alphas(
    data: np.ndarray, matrix: np.ndarray, groups: list[str], level: str
) -> tuple[dict[str, float], dict[str, float]]:
    """α over each group's prompts (groups of two or more prompts), and the mean pairwise α within
    each group and across every two groups."""
    names = sorted(set(groups))
    rows = {g: [i for i, x in enumerate(groups) if x == g] for g in names}
    by_group: dict[str, float] = {}
    means: dict[str, float] = {}
    for g in names:
        idx = rows[g]
        if len(idx) < 2:
            continue
        sub = data[idx]
        pairable = (~np.isnan(sub)).sum(axis=0) >= 2
        by_group[g] = krippendorff_alpha(sub[:, pairable], level=level) if pairable.any() else math.nan  # type: ignore[arg-type]
        values = [matrix[i, j] for a, i in enumerate(idx) for j in idx[a + 1 :]]
        means[g] = float(np.nanmean(values)) if np.isfinite(values).any() else math.nan
    for a, g in enumerate(names):
        for h in names[a + 1 :]:
            values = [matrix[i, j] for i in rows[g] for j in rows[h]]
            means[f"{g}|{h}"] = float(np.nanmean(values)) if np.isfinite(values).any() else math.nan
    return by_group, means
