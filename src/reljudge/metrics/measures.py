"""Standard IR measures from human qrels, computed by ir_measures (pytrec_eval backend).

trec_eval conventions apply to every measure pytrec_eval computes (nDCG, nDCG@k, P@k, AP, RR
without a cutoff, R@k, ...): a run is ordered by score descending, the scores compared as
trec_eval stores them -- in single precision (C ``float``), so two scores that differ only
beyond float32 precision tie -- and ties are broken by docid descending (trec_eval's
``comp_sim_docno``: the greater docid first); gains are the qrels grades, and a topic without
qrels is not scored. `trec_eval_order` gives that order. ir_measures computes ``RR@k`` with its
MS MARCO provider instead (trec_eval has no cutoff for RR), which orders by the double-precision
score, ties by docid ascending. Measure names may be given in ir_measures form (``nDCG@10``) or
trec_eval form (``ndcg_cut_10``).

Relevance level: a binary measure (AP, P@k, RR, R@k, R-prec, ...: one with ir_measures' ``rel``
parameter) counts a document relevant when its grade is at least the level (trec_eval's ``-l``,
1 by default); `at_relevance_level` sets it, `relevance_level` reads it back. Graded measures
(nDCG, ERR) use the grades as gains and have no level.

Topics: a run's values are over the topics that have both qrels and a ranking in the run
(trec_eval's default); with ``complete`` (trec_eval's ``-c``) every topic of the qrels has a
value, 0 for a topic the run does not rank, so a mean is over all the qrels' topics (as
ir_measures' own aggregates are).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from reljudge.errors import InputError

Scores = Mapping[str, Mapping[str, float]]


def parse_measure(name: str):
    """An ir_measures measure object from ``nDCG@10`` or ``ndcg_cut_10`` style names."""
    import ir_measures

    try:
        return ir_measures.parse_measure(name)
    except Exception:  # noqa: BLE001 - try the trec_eval spelling next
        pass
    try:
        parsed = ir_measures.parse_trec_measure(name)
    except Exception as err:  # noqa: BLE001
        raise InputError(f"unknown measure {name!r}: {err}") from None
    if len(parsed) != 1:
        raise InputError(f"measure {name!r} expands to {len(parsed)} measures; name exactly one")
    return parsed[0]


def relevance_level(name: str) -> int | None:
    """The grade a binary measure counts as relevant from (``AP(rel=2)`` → 2, ``AP`` → 1, as
    ir_measures and trec_eval default); None for a graded measure (nDCG, ERR)."""
    m = parse_measure(name)
    if "rel" not in m.SUPPORTED_PARAMS:
        return None
    return int(m.params.get("rel", 1))


def at_relevance_level(name: str, level: int) -> str:
    """``name`` in ir_measures form, a binary measure counting ``grade >= level`` as relevant
    (``map``, 2 → ``AP(rel=2)``; ``P_10``, 2 → ``P(rel=2)@10``). A name that sets ``rel`` itself
    keeps it, and a graded measure is unchanged (``ndcg_cut_10`` → ``nDCG@10``)."""
    m = parse_measure(name)
    if "rel" in m.SUPPORTED_PARAMS and "rel" not in m.params:
        m = m(rel=int(level))
    return str(m)


def measure_cutoff(name: str) -> int | None:
    """The rank cutoff of a measure (``nDCG@10`` → 10), None for a measure over the whole list."""
    m = parse_measure(name)
    cutoff = m.params.get("cutoff")
    return int(cutoff) if cutoff is not None else None


def trec_eval_order(docs: Mapping[str, float]) -> list[str]:
    """The docids of one topic's ranking in trec_eval's order: score descending with the scores
    compared in single precision (as trec_eval stores them), ties by docid descending."""
    single = np.asarray(list(docs.values()), dtype=np.float64).astype(np.float32)
    return [d for _, d in sorted(zip(single.tolist(), docs, strict=True), reverse=True)]


def cut_runs(runs: Mapping[str, Scores], measures: list[str] | tuple[str, ...]) -> Mapping[str, Scores]:
    """The runs cut to what the measures can see, when every measure has a cutoff: per topic, the
    documents scoring at least the ``c``-th highest score (``c`` the largest cutoff), the scores
    compared in single precision as trec_eval compares them, so a tie group at the cut -- also
    one that ties only in float32 -- is kept whole, in the run's own order. Every document that
    trec_eval (float32 scores, ties by docid descending) or a provider ordering by the double
    score (ir_measures' ``RR@k``) can rank within the top ``c`` is kept, so the measures' values
    stay the same as on the whole runs, and evaluating them again and again is faster. The runs
    themselves when a measure looks at the whole list."""
    cutoffs = [measure_cutoff(m) for m in measures]
    if not cutoffs or any(c is None for c in cutoffs):
        return runs
    depth = max(c for c in cutoffs if c is not None)
    out: dict[str, dict[str, dict[str, float]]] = {}
    for name, run in runs.items():
        cut: dict[str, dict[str, float]] = {}
        for q, docs in run.items():
            if len(docs) <= depth:
                cut[q] = {d: float(v) for d, v in docs.items()}
                continue
            with np.errstate(over="ignore"):  # a score beyond float32's range is inf for trec_eval too
                single = np.asarray(list(docs.values()), dtype=np.float64).astype(np.float32)
            floor = np.partition(single, single.size - depth)[single.size - depth]
            cut[q] = {d: float(v) for (d, v), keep in zip(docs.items(), single >= floor, strict=True) if keep}
        out[name] = cut
    return out


def integer_qrels(qrels: Scores) -> dict[str, dict[str, int]]:
    """The qrels with integer grades, as trec_eval needs them: a grade must be a whole number
    (``2`` or ``2.0``; anything else is an `InputError`, never silently rounded or truncated).
    Topics without judged documents are left out."""
    out: dict[str, dict[str, int]] = {}
    for qid, docs in qrels.items():
        ints: dict[str, int] = {}
        for docid, g in docs.items():
            if float(g) != int(g):
                raise InputError(
                    f"qrels grade {g!r} for topic {qid!r} is not an integer; trec measures need integer grades"
                )
            ints[docid] = int(g)
        if ints:
            out[qid] = ints
    return out


def system_measures(
    qrels: Scores, runs: Mapping[str, Scores], measure: str = "nDCG@10", *, complete: bool = False
) -> dict[str, dict[str, float]]:
    """Per-topic values of ``measure`` for every run, ``{run: {qid: value}}``, on the topics
    that have both qrels and a non-empty ranking in the run; with ``complete`` (trec_eval's
    ``-c``) on every topic of the qrels, a topic the run does not rank scoring 0.

    One ir_measures evaluator is built for the qrels and reused for every run. Grades must be
    integers (`integer_qrels`)."""
    import ir_measures

    m = parse_measure(measure)
    int_qrels = integer_qrels(qrels)
    if not int_qrels:
        return {name: {} for name in runs}
    evaluator = ir_measures.evaluator([m], int_qrels)
    out: dict[str, dict[str, float]] = {}
    for name, run in runs.items():
        present = {
            q: {d: float(v) for d, v in docs.items()} for q, docs in run.items() if q in int_qrels and docs
        }
        values: dict[str, float] = {}
        if present:
            for metric in evaluator.iter_calc(present):
                value = float(metric.value)
                if metric.query_id in present and value == value:
                    values[metric.query_id] = value
        if complete:
            values.update({q: 0.0 for q in int_qrels if q not in values})
        out[name] = values
    return out


def per_topic_measure(qrels: Scores, run: Scores, measure: str = "nDCG@10") -> dict[str, float]:
    """Per-topic values of ``measure`` for the topics that have both qrels and a ranking
    (`system_measures` for one run). Grades must be integers (as trec_eval requires)."""
    return system_measures(qrels, {"run": run}, measure)["run"]


def mean_measure(qrels: Scores, run: Scores, measure: str = "nDCG@10") -> float:
    """The mean over the run's topics with qrels (trec_eval's ``all`` without ``-c``)."""
    values = per_topic_measure(qrels, run, measure)
    return sum(values.values()) / len(values) if values else float("nan")


#: measures without a relevance level that do not read the grades either (judged share, counts)
_NO_GRADES = frozenset({"Judged", "NumQ", "Compat"})


def uses_gains(name: str) -> bool:
    """Whether ``measure`` reads the qrels grades as gains (nDCG, ERR, ...), rather than as
    relevant or not at a relevance level (AP, P@k, RR, recall: the measures with a ``rel``
    parameter in ir_measures)."""
    m = parse_measure(name)
    return "rel" not in m.SUPPORTED_PARAMS and m.NAME not in _NO_GRADES
