"""Agreement between prompts: Krippendorff's α over all prompts of a (dataset, model, task), and
the matrix of α between every two prompts, each on the items both labelled (`inter_prompt_alpha`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from reljudge.metrics.agreement import krippendorff_alpha
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
        k = len(prompts)
        matrix = np.eye(k)
        for i in range(k):
            for j in range(i + 1, k):
                both = present[i] & present[j]
                value = krippendorff_alpha(data[[i, j]][:, both], level=level) if both.any() else math.nan  # type: ignore[arg-type]
                matrix[i, j] = matrix[j, i] = value
        out.append(AlphaResult(ds, model, task, level, prompts, matrix, overall, int(pairable.sum())))
    return out
