"""One row of metrics per sweep cell: κ, accuracy and rates of a pointwise cell against the
human grades of its dataset; the agree/tie/disagree shares of a pairwise cell (`cell_rows`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from reljudge.metrics.agreement import binarize, cohen_kappa
from reljudge.metrics.alignment import COMPARISONS, classify_preferences, outcome_alignment
from reljudge.metrics.kappa import binary_kappa
from reljudge.sweep.analysis.conventions import INVALID_CATEGORY, METRIC, Conventions, Qrels
from reljudge.sweep.labels import OUTCOMES, CellLabels


class _Units:
    """The human-judged items of one dataset, indexed for fast alignment of cells."""

    def __init__(self, qrels: Qrels):
        self.index: dict[tuple[str, str], int] = {}
        grades: list[float] = []
        for qid, docs in qrels.items():
            for docid, grade in docs.items():
                self.index[(qid, docid)] = len(grades)
                grades.append(float(grade))
        self.human = np.asarray(grades, dtype=float)

    def align(self, cell: CellLabels, invalid: str = "drop") -> tuple[np.ndarray, np.ndarray]:
        """(unit indices, values) of the cell's labels on human-judged items; with ``invalid``
        ``category``, the items with an invalid label follow, valued `INVALID_CATEGORY`."""
        idx = item_indices(cell.qids, cell.docids, self.index, grow=False)
        keep = idx >= 0
        idx, values = idx[keep], np.asarray(cell.values, dtype=float)[keep]
        if invalid == "category" and cell.invalid_qids:
            bad = item_indices(cell.invalid_qids, cell.invalid_docids, self.index, grow=False)
            bad = bad[bad >= 0]
            idx = np.concatenate([idx, bad])
            values = np.concatenate([values, np.full(bad.size, INVALID_CATEGORY)])
        return idx, values


def _binarized(judge: np.ndarray, threshold: float) -> np.ndarray:
    """The judge's labels binarised at ``threshold``, an invalid label staying its own category."""
    out = binarize(judge, threshold).astype(float)
    out[judge == INVALID_CATEGORY] = INVALID_CATEGORY
    return out


def _binary_kappa(human: np.ndarray, judge: np.ndarray, human_t: float, judge_t: float) -> float:
    if not (judge == INVALID_CATEGORY).any():
        return binary_kappa(human, judge, human_t, judge_t)
    labels = [0.0, 1.0, INVALID_CATEGORY]
    return cohen_kappa(binarize(human, human_t).astype(float), _binarized(judge, judge_t), labels=labels)


_INDEX_MEMO: list[tuple[list[str], list[str], dict[Any, int], int, np.ndarray]] = []


def item_indices(qids: list[str], docids: list[str], index: dict[Any, int], *, grow: bool) -> np.ndarray:
    """Positions of the (qid, docid) items in ``index`` (-1 when absent, or added with ``grow``).

    Cells of one model usually list the same items in the same order; the last few lookups are
    remembered and reused when the item lists are equal (a fast C-level comparison)."""
    for mq, md, mindex, _size, result in _INDEX_MEMO:
        if mindex is index and mq == qids and md == docids:
            return result
    if grow:
        setdefault = index.setdefault
        result = np.fromiter(
            (setdefault(k, len(index)) for k in zip(qids, docids, strict=True)),
            dtype=np.int64,
            count=len(qids),
        )
    else:
        get = index.get
        result = np.fromiter(
            (get(k, -1) for k in zip(qids, docids, strict=True)), dtype=np.int64, count=len(qids)
        )
    _INDEX_MEMO.insert(0, (qids, docids, index, len(index), result))
    del _INDEX_MEMO[8:]
    return result


def _pointwise_row(cell: CellLabels, units: _Units, conv: Conventions) -> dict[str, Any]:
    idx, judge = units.align(cell, conv.invalid)
    human = units.human[idx]
    row: dict[str, Any] = {"paired": int(idx.size), "unjudged": cell.labelled - int(idx.size)}
    if conv.invalid == "category":
        row["unjudged"] = cell.labelled + len(cell.invalid_qids) - int(idx.size)
    if cell.task == "binary":
        human_bin = binarize(human, conv.threshold)
        row["kappa"] = _binary_kappa(human, judge, conv.threshold, 1) if idx.size else math.nan
        row["accuracy"] = float((human_bin == judge).mean()) if idx.size else math.nan
        row["positive_rate"] = float((judge == 1).mean()) if idx.size else math.nan
    else:
        labels = [0, 1, 2, 3]
        extra = sorted(set(np.unique(human).tolist()) | set(np.unique(judge).tolist()) - set(labels))
        row["kappa"] = (
            cohen_kappa(human, judge, weights=conv.kappa_weights, labels=labels + extra)
            if idx.size
            else math.nan
        )
        row["kappa_binary"] = (
            _binary_kappa(human, judge, conv.threshold, conv.threshold) if idx.size else math.nan
        )
        row["exact"] = float((human == judge).mean()) if idx.size else math.nan
        valid = judge[judge != INVALID_CATEGORY]
        row["mean_label"] = float(valid.mean()) if valid.size else math.nan
    return row


def pairwise_outcomes(
    cell: CellLabels, qrels: Qrels, preferences: Sequence[tuple[str, str, str, int]], unacceptable: float = 0
) -> None:
    """Fill ``cell.outcomes``/``comparisons`` from preference labels (1 = first document,
    2 = second, 0 = tie) against the human categories
    (`reljudge.metrics.alignment.classify_preferences`). Same-category pairs and pairs with a
    document the humans did not judge are left out."""
    from reljudge.sweep.labels import pair_key

    found = classify_preferences(qrels, preferences, unacceptable=unacceptable)
    for qid, a, b, comparison, outcome in found:
        if comparison is None or outcome is None:
            continue
        key = pair_key(qid, a, b)
        cell.outcomes[key] = outcome
        cell.comparisons[key] = comparison


def _pairwise_row(cell: CellLabels, invalid: str = "drop") -> dict[str, Any]:
    """Shares of agree/tie/disagree over all pairs, and the agree share and pairs per comparison.
    With ``invalid`` ``category`` the pairs without a usable outcome count in the denominator."""
    result = outcome_alignment((cell.comparisons[k], o) for k, o in cell.outcomes.items())
    pooled = result.pooled
    row: dict[str, Any] = {"pairs": pooled.total}
    row.update(zip(OUTCOMES, pooled.fractions(), strict=True))
    if invalid == "category" and cell.invalid:
        total = pooled.total + cell.invalid
        row["pairs"] = total
        for name in OUTCOMES:
            row[name] = row[name] * pooled.total / total if pooled.total else 0.0
        row["invalid_share"] = cell.invalid / total
    for comp in COMPARISONS:
        counts = result.counts[comp]
        row[f"{comp}_agree"] = counts.fractions()[0]
        row[f"{comp}_pairs"] = counts.total
    return row


def cell_rows(
    cells: Sequence[CellLabels], qrels: Mapping[str, Qrels], conv: Conventions
) -> list[dict[str, Any]]:
    """One row of metrics per cell (see the module docstring)."""
    units = {ds: _Units(q) for ds, q in qrels.items()}
    rows = []
    for cell in cells:
        row: dict[str, Any] = {
            "dataset": cell.dataset,
            "model": cell.model,
            "task": cell.task,
            "prompt": cell.prompt,
            "group": cell.group,
            "items": cell.items,
            "labelled": cell.labelled,
            "invalid": cell.invalid,
            "invalid_rate": cell.invalid_rate,
        }
        if cell.task == "pairwise":
            row.update(_pairwise_row(cell, conv.invalid))
        elif cell.dataset in units:
            row.update(_pointwise_row(cell, units[cell.dataset], conv))
        row["metric"] = METRIC[cell.task]
        row["value"] = row.get(METRIC[cell.task], math.nan)
        row.update(
            {
                "prompt_tokens": cell.usage.prompt_tokens,
                "completion_tokens": cell.usage.completion_tokens,
                "calls": cell.usage.calls,
                "cost_usd": round(cell.usage.cost_usd, 6),
            }
        )
        rows.append(row)
    return rows
