"""Retrieval runs and answer generators on one scale, and the no-judgment anchors (thesis §5.1,
Fig. 5.4 and 5.5; spec S7 (3)–(4)). Pure: vectors come from an `EmbeddingSource`.

**Common scale** (S7 (3)). The targets T_q of a topic are its judged passages at its highest
grade (that grade ≥ ``min_grade``: 3, else 2 on TREC DL). Over the (q, t ∈ T_q) pairs:

- a generator G scores cos(answer_G(q), t);
- a run R scores cos(t, f_R(q, t)), f_R(q, t) the first passage of R's ranking of q (trec_eval
  order: score descending, ties by docid descending) that is not t; it may itself be relevant.

The score is the mean over the pairs (micro, the default) or over topics of the per-topic mean
(``macro=True``). A pair the system has nothing for (no answer for q, no ranking of q, a
ranking holding only t) counts in ``no_result``; a pair whose two texts do not both have a
vector counts in ``missing_vectors``; neither enters the score. `scale_agreement` is Kendall τ-b
(with its p-value) between the runs' scores and a human measure such as nDCG@10.

**Anchors** (S7 (4)), no judgments: a retrieval run M stands in for the judged passages.
score(G, M) = mean over topics q of cos(answer_G(q), top1_M(q)), over the topics where both
have a vector (`anchor_scores`); `AnchorTable.mean` averages over anchors; `ordering_stability`
compares the generator orderings under every pair of anchors (Kendall τ-b: mean and minimum,
and the share of pairs that order the generators identically).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations

import numpy as np

from reljudge.analyses.answers.similarity import AnswerIds, Scores, top_grade_targets
from reljudge.metrics.ranking import agreement_test
from reljudge.vectors.embedding_source import EmbeddingSource

#: the human measure the runs' common-scale scores are compared with
MEASURE = "nDCG@10"


def trec_ranked(docs: Mapping[str, float]) -> list[str]:
    """Docids in trec_eval order: score descending, ties by docid descending."""
    return sorted(docs, key=lambda d: (docs[d], d), reverse=True)


def first_other(ranked: Sequence[str], target: str) -> str | None:
    """f_R(q, t): the first passage of the ranking that is not the target (None if none)."""
    return next((d for d in ranked if d != target), None)


@dataclass
class ScaleScore:
    """One system on the common scale; ``pairs`` scored over ``topics`` topics."""

    score: float
    pairs: int
    topics: int
    missing_vectors: int  # (q, t) pairs left out: a text without a vector (no text, no row)
    no_result: int  # (q, t) pairs left out: no answer / ranking for q, or a ranking of t alone

    def as_dict(self) -> dict:
        return {
            "score": self.score,
            "pairs": self.pairs,
            "topics": self.topics,
            "missing_vectors": self.missing_vectors,
            "no_result": self.no_result,
        }


def _unit_rows(source: EmbeddingSource, ids: list[str], texts) -> dict[str, np.ndarray]:
    matrix, found, _ = source.lookup(ids, texts)
    matrix = np.asarray(matrix, dtype=np.float64)
    if not found:
        return {}
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    unit = np.divide(matrix, norms, out=np.zeros_like(matrix), where=norms > 0)
    return dict(zip(found, unit, strict=True))


def _average(per_topic: Mapping[str, list[float]], macro: bool) -> float:
    if not per_topic:
        return float("nan")
    if macro:
        return float(np.mean([np.mean(v) for v in per_topic.values()]))
    return float(np.mean(np.concatenate([np.asarray(v) for v in per_topic.values()])))


def _answer_of(by_qid: Mapping[str, str]) -> Callable[[str, str], str | None]:
    """The other side of a generator's pair: its answer to the topic, whatever the target."""
    return lambda qid, _target: by_qid.get(qid)


def _first_other_in(ranked: Mapping[str, Sequence[str]]) -> Callable[[str, str], str | None]:
    """The other side of a run's pair: f_R(q, t), the run's first passage that is not t."""
    return lambda qid, target: first_other(ranked.get(qid, ()), target)


def _scale_score(
    targets: Mapping[str, list[str]],
    other: Callable[[str, str], str | None],
    source: EmbeddingSource,
    texts: Mapping[str, str] | None,
    macro: bool,
) -> ScaleScore:
    per_topic: dict[str, list[float]] = {}
    missing = no_result = 0
    for qid, tq in targets.items():
        asked = [(t, other(qid, t)) for t in tq]
        no_result += sum(o is None for _, o in asked)
        pairs = [(t, o) for t, o in asked if o is not None]
        if not pairs:
            continue
        unit = _unit_rows(source, list(dict.fromkeys(x for pair in pairs for x in pair)), texts)
        for t, o in pairs:
            if t in unit and o in unit:
                per_topic.setdefault(qid, []).append(float(unit[t] @ unit[o]))
            else:
                missing += 1
    n_pairs = sum(len(v) for v in per_topic.values())
    return ScaleScore(_average(per_topic, macro), n_pairs, len(per_topic), missing, no_result)


def generator_scale_scores(qrels: Scores, answers: AnswerIds, source: EmbeddingSource, *, min_grade: float = 2,
                           macro: bool = False, texts: Mapping[str, str] | None = None) -> dict[str, ScaleScore]:  # fmt: skip
    """Each generator's mean cos(answer_q, t) over the (q, t ∈ T_q) pairs."""
    targets = top_grade_targets(qrels, min_grade=min_grade)
    return {
        system: _scale_score(targets, _answer_of(by_qid), source, texts, macro)
        for system, by_qid in answers.items()
    }


def run_scale_scores(qrels: Scores, runs: Mapping[str, Scores], source: EmbeddingSource, *, min_grade: float = 2,
                     macro: bool = False, texts: Mapping[str, str] | None = None) -> dict[str, ScaleScore]:  # fmt: skip
    """Each run's mean cos(t, f_R(q, t)) over the (q, t ∈ T_q) pairs."""
    targets = top_grade_targets(qrels, min_grade=min_grade)
    out: dict[str, ScaleScore] = {}
    for name, run in runs.items():
        ranked = {q: trec_ranked(run[q]) for q in targets if run.get(q)}
        out[name] = _scale_score(targets, _first_other_in(ranked), source, texts, macro)
    return out


def run_top_passages(runs: Mapping[str, Scores], qids, depth: int = 2) -> list[str]:
    """The first ``depth`` passages of every run on the given topics: every f_R(q, t) is among
    the first two, every anchor's top-1 the first (what needs a vector)."""
    wanted = set(qids)
    return list(dict.fromkeys(d for run in runs.values() for q, docs in run.items() if q in wanted
                              for d in trec_ranked(docs)[:depth]))  # fmt: skip


def scale_agreement(scores: Mapping[str, float], measure: Mapping[str, float]) -> dict[str, float | int]:
    """Kendall τ-b (two-sided p) between the scale scores and a measure, over the systems with
    a finite value in both; NaN with fewer than two."""
    names = [s for s in scores if s in measure and np.isfinite(scores[s]) and np.isfinite(measure[s])]
    tau, p = (float("nan"), float("nan"))
    if len(names) >= 2:
        tau, p = agreement_test(np.array([scores[s] for s in names]), np.array([measure[s] for s in names]))
    return {"tau_b": tau, "p": p, "systems": len(names)}


@dataclass
class AnchorTable:
    """``scores[G][M]``: generator G under anchor run M; ``topics[G][M]``: topics it averages;
    ``missing[G][M]``: topics of G's answers left out (M has no ranking of q, or a vector is missing)."""

    scores: dict[str, dict[str, float]] = field(default_factory=dict)
    topics: dict[str, dict[str, int]] = field(default_factory=dict)
    missing: dict[str, dict[str, int]] = field(default_factory=dict)

    def mean(self) -> dict[str, float]:
        """Each generator's mean over the anchors where it has a score."""
        out = {}
        for g, by_m in self.scores.items():
            v = [x for x in by_m.values() if np.isfinite(x)]
            out[g] = float(np.mean(v)) if v else float("nan")
        return out


def anchor_scores(answers: AnswerIds, anchors: Mapping[str, Scores], source: EmbeddingSource,
                  texts: Mapping[str, str] | None = None) -> AnchorTable:  # fmt: skip
    """score(G, M) = mean_q cos(answer_G(q), top1_M(q)) for every generator G and anchor run M."""
    table = AnchorTable()
    for m, run in anchors.items():
        top1 = {q: trec_ranked(docs)[0] for q, docs in run.items() if docs}
        for g, by_qid in answers.items():
            pairs = [(aid, top1[q]) for q, aid in by_qid.items() if q in top1]
            unit = _unit_rows(source, list(dict.fromkeys(x for pair in pairs for x in pair)), texts)
            sims = [float(unit[a] @ unit[d]) for a, d in pairs if a in unit and d in unit]
            table.scores.setdefault(g, {})[m] = float(np.mean(sims)) if sims else float("nan")
            table.topics.setdefault(g, {})[m] = len(sims)
            table.missing.setdefault(g, {})[m] = len(by_qid) - len(sims)
    return table


def _order(values: Mapping[str, float]) -> tuple[str, ...]:
    return tuple(sorted(values, key=lambda g: (-values[g], g)))


def ordering_stability(scores: Mapping[str, Mapping[str, float]]) -> dict[str, float | int]:
    """How much the generator ordering depends on the anchor: Kendall τ-b between the
    orderings under every pair of anchors (``scores[G][M]``) — mean, minimum, and the share of
    pairs with the identical order (ties broken by name). Anchors where some generator has no
    score are left out (``anchors_left_out``); a pair with a constant side has no τ (``undefined``)."""
    generators = sorted(scores)
    anchors = sorted({m for by_m in scores.values() for m in by_m})
    columns = {}
    for m in anchors:
        col = {g: scores[g].get(m, float("nan")) for g in generators}
        if all(np.isfinite(v) for v in col.values()):
            columns[m] = col
    taus, identical, undefined = [], 0, 0
    for a, b in combinations(columns, 2):
        x = np.array([columns[a][g] for g in generators])
        y = np.array([columns[b][g] for g in generators])
        tau = agreement_test(x, y)[0] if len(generators) >= 2 else float("nan")
        if np.isfinite(tau):
            taus.append(tau)
        else:
            undefined += 1
        identical += _order(columns[a]) == _order(columns[b])
    n_pairs = len(columns) * (len(columns) - 1) // 2
    return {
        "generators": len(generators),
        "anchors": len(columns),
        "anchors_left_out": len(anchors) - len(columns),
        "pairs": n_pairs,
        "mean_tau_b": float(np.mean(taus)) if taus else float("nan"),
        "min_tau_b": float(np.min(taus)) if taus else float("nan"),
        "identical_order_share": identical / n_pairs if n_pairs else float("nan"),
        "undefined": undefined,
    }
