"""Prompt-sensitivity analysis of sweep cells: agreement with humans, spread across prompts,
agreement between prompts, and stability of the system ranking.

Conventions (all recorded in `SweepAnalysis.conventions` and the report):

- **binary** cells: Cohen's κ (unweighted) between the judge's 0/1 labels and the human grades
  binarised at ``threshold`` (grade >= threshold is relevant; TREC DL: 2, so grades 2-3);
- **graded** cells: Cohen's κ over the four grades 0-3 (unweighted unless ``kappa_weights``),
  and ``kappa_binary`` with both sides binarised at ``threshold``;
- **pairwise** cells: the shares of pairs where the judge agrees with the human categories
  (Best / Acceptable / Unacceptable per topic), ties, or disagrees, pooled over all pairs of
  the cell, and per comparison (BvA, BvU, AvU);
- labels outside the task's scale and failed calls are *invalid* (``invalid_rate``), never labels;
- per group (e.g. human- vs LLM-written prompts): mean, sample variance (ddof=1), standard
  deviation, min and max of the cell metric over the prompts of a model;
- inter-prompt agreement: Krippendorff's α over all prompts of a (dataset, model, task), and
  the matrix of α between every two prompts (levels per task: binary nominal, graded ordinal,
  pairwise nominal over agree/tie/disagree), each on the items both prompts labelled;
- ranking stability (when runs are given): systems scored by ``ranking_measure`` under each
  prompt's labels (unlabelled documents count as non-relevant) and under the human qrels;
  Kendall τ-b of each prompt's ranking to the human one, and between prompts.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from reljudge.metrics.agreement import binarize, cohen_kappa, krippendorff_alpha
from reljudge.metrics.alignment import categories
from reljudge.sweep.labels import OUTCOMES, CellLabels

Qrels = Mapping[str, Mapping[str, float]]
METRIC: dict[str, str] = {"binary": "kappa", "graded": "kappa", "pairwise": "agree"}
COMPARISONS = ("BvU", "AvU", "BvA")
_OUTCOME_CODE = {"disagree": 0.0, "tie": 1.0, "agree": 2.0}


@dataclass(frozen=True)
class Conventions:
    threshold: float = 2
    kappa_weights: str | None = None
    alpha_level: Mapping[str, str] = field(
        default_factory=lambda: {"binary": "nominal", "graded": "ordinal", "pairwise": "nominal"}
    )
    unacceptable: float = 0
    ranking_measure: str = "nDCG@10"

    def as_dict(self) -> dict[str, Any]:
        return {
            "binary_threshold": f"human grade >= {self.threshold:g} is relevant",
            "kappa": "Cohen's kappa, "
            + (f"{self.kappa_weights} weights" if self.kappa_weights else "unweighted"),
            "graded_kappa": "over grades 0-3; kappa_binary: both sides binarised at the threshold",
            "pairwise": "agree/tie/disagree against Best/Acceptable/Unacceptable human categories per topic "
            f"(Unacceptable: grade <= {self.unacceptable:g}), pooled over pairs",
            "alpha_level": dict(self.alpha_level),
            "variance": "sample variance over prompts (ddof=1)",
            "ranking": f"Kendall tau-b of system rankings by {self.ranking_measure}",
        }


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


@dataclass
class RankingResult:
    dataset: str
    model: str
    task: str
    measure: str
    systems: int
    prompts: list[str]
    tau_to_human: dict[str, float]
    matrix: np.ndarray  # τ between the prompts' rankings


@dataclass
class SweepAnalysis:
    rows: list[dict[str, Any]]
    summary: list[dict[str, Any]]
    alphas: list[AlphaResult]
    rankings: list[RankingResult]
    conventions: Conventions
    notes: list[str] = field(default_factory=list)


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

    def align(self, cell: CellLabels) -> tuple[np.ndarray, np.ndarray]:
        """(unit indices, values) of the cell's labels on human-judged items."""
        idx = _indices(cell.qids, cell.docids, self.index, grow=False)
        keep = idx >= 0
        return idx[keep], np.asarray(cell.values, dtype=float)[keep]


_INDEX_MEMO: list[tuple[list[str], list[str], dict[Any, int], int, np.ndarray]] = []


def _indices(qids: list[str], docids: list[str], index: dict[Any, int], *, grow: bool) -> np.ndarray:
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


def _nan_stats(values: Sequence[float]) -> dict[str, float]:
    arr = np.asarray([v for v in values if v == v], dtype=float)
    if arr.size == 0:
        return {"mean": math.nan, "var": math.nan, "std": math.nan, "min": math.nan, "max": math.nan}
    var = float(arr.var(ddof=1)) if arr.size > 1 else math.nan
    return {
        "mean": float(arr.mean()),
        "var": var,
        "std": math.sqrt(var) if var == var else math.nan,
        "min": float(arr.min()),
        "max": float(arr.max()),
    }


def _pointwise_row(cell: CellLabels, units: _Units, conv: Conventions) -> dict[str, Any]:
    idx, judge = units.align(cell)
    human = units.human[idx]
    row: dict[str, Any] = {"paired": int(idx.size), "unjudged": cell.labelled - int(idx.size)}
    human_bin = binarize(human, conv.threshold)
    if cell.task == "binary":
        row["kappa"] = cohen_kappa(human_bin, judge, labels=[0, 1]) if idx.size else math.nan
        row["accuracy"] = float((human_bin == judge).mean()) if idx.size else math.nan
        row["positive_rate"] = float(judge.mean()) if idx.size else math.nan
    else:
        labels = [0, 1, 2, 3]
        extra = sorted(set(np.unique(human).tolist()) | set(np.unique(judge).tolist()) - set(labels))
        row["kappa"] = (
            cohen_kappa(human, judge, weights=conv.kappa_weights, labels=labels + extra)
            if idx.size
            else math.nan  # type: ignore[arg-type]
        )
        row["kappa_binary"] = (
            cohen_kappa(human_bin, binarize(judge, conv.threshold), labels=[0, 1]) if idx.size else math.nan
        )
        row["exact"] = float((human == judge).mean()) if idx.size else math.nan
        row["mean_label"] = float(judge.mean()) if idx.size else math.nan
    return row


def pairwise_outcomes(
    cell: CellLabels, qrels: Qrels, preferences: Sequence[tuple[str, str, str, int]], unacceptable: float = 0
) -> None:
    """Fill ``cell.outcomes``/``comparisons`` from preference labels (1 = first document,
    2 = second, 0 = tie) against the human categories. Same-category pairs and pairs with a
    document the humans did not judge are left out."""
    from reljudge.sweep.labels import pair_key

    cats_cache: dict[str, dict[str, str]] = {}
    rank = {"B": 2, "A": 1, "U": 0}
    names = {frozenset("BU"): "BvU", frozenset("AU"): "AvU", frozenset("BA"): "BvA"}
    for qid, a, b, label in preferences:
        cats = cats_cache.get(qid)
        if cats is None:
            cats = cats_cache[qid] = categories(qrels.get(qid, {}), unacceptable)
        ca, cb = cats.get(a), cats.get(b)
        if ca is None or cb is None or ca == cb:
            continue
        if label == 0:
            outcome = "tie"
        else:
            preferred_better = (label == 1) == (rank[ca] > rank[cb])
            outcome = "agree" if preferred_better else "disagree"
        key = pair_key(qid, a, b)
        cell.outcomes[key] = outcome
        cell.comparisons[key] = names[frozenset(ca + cb)]


def _pairwise_row(cell: CellLabels) -> dict[str, Any]:
    row: dict[str, Any] = {"pairs": len(cell.outcomes)}
    values = list(cell.outcomes.values())
    n = len(values)
    for outcome in OUTCOMES:
        row[outcome] = values.count(outcome) / n if n else math.nan
    for comp in COMPARISONS:
        sub = [o for k, o in cell.outcomes.items() if cell.comparisons.get(k) == comp]
        row[f"{comp}_agree"] = sub.count("agree") / len(sub) if sub else math.nan
        row[f"{comp}_pairs"] = len(sub)
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
            row.update(_pairwise_row(cell))
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


def summarize(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per (dataset, task, model, group) and per (dataset, task, model) over all groups."""
    buckets: dict[tuple[str, str, str, str], list[dict[str, Any]]] = {}
    for row in rows:
        for group in (row["group"], "all"):
            buckets.setdefault((row["dataset"], row["task"], row["model"], group), []).append(row)
    out = []
    groups_order = sorted({r["group"] for r in rows})
    for (ds, task, model, group), members in sorted(
        buckets.items(), key=lambda kv: (kv[0][0], kv[0][1], kv[0][2], kv[0][3] == "all", kv[0][3])
    ):
        if group == "all" and len({m["group"] for m in members}) == 1 and len(groups_order) == 1:
            continue  # a single group: the "all" row would repeat it
        stats = _nan_stats([m["value"] for m in members])
        entry: dict[str, Any] = {
            "dataset": ds,
            "task": task,
            "model": model,
            "group": group,
            "prompts": len(members),
            "metric": METRIC[task],
            **stats,
            "invalid_rate": _nan_stats([m["invalid_rate"] for m in members])["mean"],
        }
        if task == "pairwise":
            entry["tie"] = _nan_stats([m["tie"] for m in members])["mean"]
            entry["disagree"] = _nan_stats([m["disagree"] for m in members])["mean"]
        elif task == "graded":
            entry["kappa_binary_mean"] = _nan_stats([m.get("kappa_binary", math.nan) for m in members])[
                "mean"
            ]
        out.append(entry)
    return out


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
            idx = _indices(cell.qids, cell.docids, index, grow=True)
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


def system_scores(
    qrels: Qrels, runs: Mapping[str, Mapping[str, Mapping[str, float]]], measure: str
) -> dict[str, float]:
    """Mean ``measure`` of every run under ``qrels`` (one ir_measures pass over all runs)."""
    from reljudge.metrics.measures import per_topic_measure

    sep = "\x1f"
    int_qrels = {
        f"{name}{sep}{q}": {d: int(round(g)) for d, g in docs.items()}
        for name in runs
        for q, docs in qrels.items()
    }
    combined = {
        f"{name}{sep}{q}": dict(docs) for name, run in runs.items() for q, docs in run.items() if q in qrels
    }
    per_topic = per_topic_measure(int_qrels, combined, measure)
    sums: dict[str, list[float]] = {name: [] for name in runs}
    for key, value in per_topic.items():
        sums[key.split(sep, 1)[0]].append(value)
    return {name: float(np.mean(v)) if v else math.nan for name, v in sums.items()}


def ranking_stability(
    cells: Sequence[CellLabels],
    qrels: Mapping[str, Qrels],
    runs: Mapping[str, Mapping[str, Any]],
    conv: Conventions,
) -> list[RankingResult]:
    """Kendall τ-b of each pointwise prompt's system ranking to the human one, and between prompts."""
    from reljudge.metrics.ranking import ranking_agreement

    out = []
    by: dict[tuple[str, str, str], list[CellLabels]] = {}
    for cell in cells:
        if cell.task != "pairwise" and cell.dataset in runs and runs[cell.dataset]:
            by.setdefault((cell.dataset, cell.model, cell.task), []).append(cell)
    human_scores = {ds: system_scores(qrels[ds], runs[ds], conv.ranking_measure) for ds in {k[0] for k in by}}
    for (ds, model, task), members in sorted(by.items()):
        human = human_scores[ds]
        topics = set(qrels[ds])
        scores = {}
        for cell in members:
            labels = {q: d for q, d in cell.scores.items() if q in topics}
            scores[cell.prompt] = system_scores(labels, runs[ds], conv.ranking_measure)
        prompts = [c.prompt for c in members]
        tau = {p: _tau(ranking_agreement, human, scores[p]) for p in prompts}
        k = len(prompts)
        matrix = np.eye(k)
        for i in range(k):
            for j in range(i + 1, k):
                matrix[i, j] = matrix[j, i] = _tau(ranking_agreement, scores[prompts[i]], scores[prompts[j]])
        out.append(RankingResult(ds, model, task, conv.ranking_measure, len(human), prompts, tau, matrix))
    return out


def _tau(fn: Any, x: Mapping[str, float], y: Mapping[str, float]) -> float:
    xs = {k: v for k, v in x.items() if v == v}
    ys = {k: v for k, v in y.items() if v == v}
    try:
        return float(fn(xs, ys, "kendall"))
    except ValueError:
        return math.nan


def analyze(
    cells: Sequence[CellLabels],
    qrels: Mapping[str, Qrels],
    conv: Conventions | None = None,
    *,
    runs: Mapping[str, Mapping[str, Any]] | None = None,
    alpha: bool = True,
    notes: Sequence[str] = (),
) -> SweepAnalysis:
    """Everything the report shows, from cells and the human qrels of their datasets."""
    conv = conv or Conventions()
    missing = sorted({c.dataset for c in cells} - set(qrels))
    notes = list(notes)
    if missing:
        notes.append(
            f"no human qrels for dataset(s) {', '.join(missing)}: their pointwise cells have no kappa"
        )
    rows = cell_rows(cells, qrels, conv)
    alphas = inter_prompt_alpha(cells, conv) if alpha else []
    rankings = ranking_stability(cells, qrels, runs, conv) if runs else []
    return SweepAnalysis(rows, summarize(rows), alphas, rankings, conv, notes)
