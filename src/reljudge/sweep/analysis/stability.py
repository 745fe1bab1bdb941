"""Ranking stability: systems scored under each prompt's labels and under the human qrels, and the
agreement of the rankings (Kendall τ-b by default) to the human one and between prompts
(`ranking_stability`).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from reljudge.metrics.registry import ranking_measure
from reljudge.sweep.analysis.conventions import Conventions, Qrels
from reljudge.sweep.analysis.summary import nan_stats
from reljudge.sweep.labels import CellLabels


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
        stats = nan_stats(list(self.tau_to_human.values()))
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
            "tau_human_on_items": nan_stats(list(self.human_on_items.values()))["mean"],
            "judged": float(np.mean(cover)) if cover else math.nan,
        }


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
