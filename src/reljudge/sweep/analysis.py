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

The measures come from `reljudge.metrics`: the pairwise shares are the ``alignment`` measure's
counts, binary κ is the ``kappa`` measure's, and the ranking agreement is the registry's
ranking measure named by ``Conventions.ranking_agreement`` (default ``kendall_tau_b``).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from reljudge.metrics.agreement import binarize, cohen_kappa, krippendorff_alpha
from reljudge.metrics.alignment import COMPARISONS, classify_preferences, outcome_alignment
from reljudge.metrics.kappa import binary_kappa
from reljudge.metrics.registry import ranking_measure
from reljudge.sweep.labels import OUTCOMES, CellLabels

Qrels = Mapping[str, Mapping[str, float]]
METRIC: dict[str, str] = {"binary": "kappa", "graded": "kappa", "pairwise": "agree"}
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
    ranking_agreement: str = "kendall_tau_b"  # a ranking measure of `reljudge.metrics.registry`

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
            "ranking": f"{ranking_measure(self.ranking_agreement).label} of system rankings by {self.ranking_measure}",
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
    judged: dict[str, float] = field(
        default_factory=dict
    )  # prompt -> mean judged share of the runs' top docs
    #: prompt -> τ of the human labels of just the items the prompt labelled (binarised for
    #: binary): the ceiling of a perfect judge on those items, unlabelled still non-relevant
    human_on_items: dict[str, float] = field(default_factory=dict)

    def summary(self) -> dict[str, Any]:
        """Mean, sample std (ddof=1), min and max of τ to human over the prompts; the mean τ
        between two prompts (off-diagonal); the mean judged share of the runs' top documents."""
        stats = _nan_stats(list(self.tau_to_human.values()))
        k = len(self.prompts)
        off = self.matrix[~np.eye(k, dtype=bool)] if k > 1 else np.zeros(0)
        off = off[~np.isnan(off)]
        cover = [v for v in self.judged.values() if v == v]
        return {
            "dataset": self.dataset,
            "task": self.task,
            "model": self.model,
            "measure": self.measure,
            "systems": self.systems,
            "prompts": k,
            "tau_mean": stats["mean"],
            "tau_std": stats["std"],
            "tau_min": stats["min"],
            "tau_max": stats["max"],
            "tau_between_prompts": float(off.mean()) if off.size else math.nan,
            "tau_human_on_items": _nan_stats(list(self.human_on_items.values()))["mean"],
            "judged": float(np.mean(cover)) if cover else math.nan,
        }


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
    if cell.task == "binary":
        human_bin = binarize(human, conv.threshold)
        row["kappa"] = binary_kappa(human, judge, conv.threshold, 1) if idx.size else math.nan
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
            binary_kappa(human, judge, conv.threshold, conv.threshold) if idx.size else math.nan
        )
        row["exact"] = float((human == judge).mean()) if idx.size else math.nan
        row["mean_label"] = float(judge.mean()) if idx.size else math.nan
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


def _pairwise_row(cell: CellLabels) -> dict[str, Any]:
    """Shares of agree/tie/disagree over all pairs, and the agree share and pairs per comparison."""
    result = outcome_alignment((cell.comparisons[k], o) for k, o in cell.outcomes.items())
    pooled = result.pooled
    row: dict[str, Any] = {"pairs": pooled.total}
    row.update(zip(OUTCOMES, pooled.fractions(), strict=True))
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


#: measures whose value depends only on the top ``cutoff`` documents of a ranking (and the
#: qrels) when pytrec_eval computes them (trec_eval order: score descending, ties by docid
#: descending): runs can be cut to that depth before evaluation without changing any value.
#: Other providers order ties differently (e.g. ir_measures' RR@k, Judged@k), so they get whole runs.
_TOP_K_MEASURES = frozenset({"nDCG", "P", "R", "AP", "Success"})


def evaluation_depth(measure: str) -> int | None:
    """How deep runs must be for ``measure``: its cutoff for top-k measures, else None (all)."""
    import ir_measures

    from reljudge.metrics.measures import parse_measure

    m = parse_measure(measure)
    params = dict(m.params)
    cutoff = params.get("cutoff")
    if (
        m.NAME in _TOP_K_MEASURES
        and cutoff
        and not params.get("judged_only")
        and ir_measures.pytrec_eval.is_available()
        and ir_measures.pytrec_eval.supports(m)
    ):
        return int(cutoff)
    return None


def prepare_runs(
    runs: Mapping[str, Mapping[str, Mapping[str, float]]], topics: Collection[str], depth: int | None
) -> dict[str, dict[str, dict[str, float]]]:
    """The runs restricted to ``topics`` and cut to ``depth`` documents per topic, ordered as
    trec_eval orders them (score descending, ties by docid descending), as plain float dicts.

    Done once per dataset, so every qrels of a ranking analysis reads small runs."""
    import heapq

    out: dict[str, dict[str, dict[str, float]]] = {}
    for name, run in runs.items():
        kept: dict[str, dict[str, float]] = {}
        for qid in topics:
            docs = run.get(qid)
            if not docs:
                continue
            items = [(float(s), d) for d, s in docs.items()]
            if depth is not None and len(items) > depth:
                items = heapq.nlargest(depth, items)
            kept[qid] = {d: s for s, d in items}
        out[name] = kept
    return out


def system_scores(
    qrels: Qrels, runs: Mapping[str, Mapping[str, Mapping[str, float]]], measure: str
) -> dict[str, float]:
    """Mean ``measure`` of every run under ``qrels`` (`reljudge.metrics.measures.system_measures`:
    one evaluator reused for every run, integer grades); a run's mean is over the topics it ranks
    that have qrels (trec_eval's ``all`` without ``-c``), NaN when there is none. Means are
    rounded to 12 decimals so that runs with equal per-topic values tie exactly."""
    from reljudge.metrics.measures import system_measures

    out: dict[str, float] = {}
    for name, values in system_measures(qrels, runs, measure).items():
        out[name] = round(sum(values.values()) / len(values), 12) if values else math.nan
    return out


def judged_share(labels: Qrels, runs: Mapping[str, Mapping[str, Mapping[str, float]]]) -> float:
    """Mean over runs and topics (of ``labels``) of the share of a run's documents that are
    labelled — for runs cut by `prepare_runs`, the share of their top documents."""
    shares = [
        sum(d in judged for d in docs) / len(docs)
        for run in runs.values()
        for q, docs in run.items()
        if docs and (judged := labels.get(q)) is not None
    ]
    return float(np.mean(shares)) if shares else math.nan


def ranking_stability(
    cells: Sequence[CellLabels],
    qrels: Mapping[str, Qrels],
    runs: Mapping[str, Mapping[str, Any]],
    conv: Conventions,
) -> list[RankingResult]:
    """Kendall τ-b (``conv.ranking_agreement``) of each pointwise prompt's system ranking to the
    human one, and between prompts.

    Each cell's valid labels become a qrels (on the topics of the human qrels; documents the
    prompt did not label count as non-relevant); every run is scored by ``conv.ranking_measure``
    under it and under the human qrels. ``judged`` is the mean share of the runs' top documents
    (to the measure's cutoff) that the prompt labelled, when the measure has one."""
    by: dict[tuple[str, str, str], list[CellLabels]] = {}
    for cell in cells:
        if cell.task != "pairwise" and cell.dataset in runs and runs[cell.dataset] and cell.dataset in qrels:
            by.setdefault((cell.dataset, cell.model, cell.task), []).append(cell)
    agree = ranking_measure(conv.ranking_agreement).paired  # over the systems with a value in both
    depth = evaluation_depth(conv.ranking_measure)
    prepared: dict[str, dict[str, dict[str, dict[str, float]]]] = {}
    human_scores: dict[str, dict[str, float]] = {}
    for ds in sorted({k[0] for k in by}):
        prepared[ds] = prepare_runs(runs[ds], set(qrels[ds]), depth)
        human_scores[ds] = system_scores(qrels[ds], prepared[ds], conv.ranking_measure)
    out = []
    for (ds, model, task), members in sorted(by.items()):
        human = human_scores[ds]
        systems = [s for s in human if human[s] == human[s]]
        topics = set(qrels[ds])
        prompts = [c.prompt for c in members]
        columns = []
        coverage: dict[str, float] = {}
        for cell in members:
            labels = {q: d for q, d in cell.scores.items() if q in topics}
            values = system_scores(labels, prepared[ds], conv.ranking_measure)
            columns.append([values.get(s, math.nan) for s in systems])
            if depth is not None:
                coverage[cell.prompt] = judged_share(labels, prepared[ds])
        table = np.asarray(columns, dtype=float).T if columns else np.zeros((len(systems), 0))
        ref = np.asarray([human[s] for s in systems], dtype=float)
        ceiling_memo: dict[frozenset[tuple[str, str]], float] = {}
        # the ceiling of each prompt's items: the human labels of exactly the items it labelled
        ceiling: dict[str, float] = {}
        for cell in members:
            items = frozenset(zip(cell.qids, cell.docids, strict=True))
            if items not in ceiling_memo:
                on_items: dict[str, dict[str, float]] = {}
                for q, d in items:
                    grade = qrels[ds].get(q, {}).get(d)
                    if grade is not None:
                        on_items.setdefault(q, {})[d] = float(grade)
                if task == "binary":
                    on_items = {
                        q: {d: float(g >= conv.threshold) for d, g in docs.items()}
                        for q, docs in on_items.items()
                    }
                sample = system_scores(on_items, prepared[ds], conv.ranking_measure)
                ceiling_memo[items] = agree(
                    ref, np.asarray([sample.get(s, math.nan) for s in systems], dtype=float)
                )
            ceiling[cell.prompt] = ceiling_memo[items]
        tau = {p: agree(ref, table[:, i]) for i, p in enumerate(prompts)}
        k = len(prompts)
        matrix = np.eye(k)
        for i in range(k):
            for j in range(i + 1, k):
                matrix[i, j] = matrix[j, i] = agree(table[:, i], table[:, j])
        out.append(
            RankingResult(
                ds,
                model,
                task,
                conv.ranking_measure,
                len(systems),
                prompts,
                tau,
                matrix,
                judged=coverage,
                human_on_items=ceiling,
            )
        )
    return out


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
