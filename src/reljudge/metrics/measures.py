"""Standard IR measures from human qrels, computed by ir_measures (pytrec_eval backend).

trec_eval conventions apply: a run is ordered by score descending with ties by docid
descending, gains are the qrels grades, and a topic without qrels is not scored. Measure
names may be given in ir_measures form (``nDCG@10``) or trec_eval form (``ndcg_cut_10``).
"""

from __future__ import annotations

from collections.abc import Mapping

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


def per_topic_measure(qrels: Scores, run: Scores, measure: str = "nDCG@10") -> dict[str, float]:
    """Per-topic values of ``measure`` for the topics that have both qrels and a ranking.

    Grades must be integers (as trec_eval requires).
    """
    import ir_measures

    m = parse_measure(measure)
    int_qrels: dict[str, dict[str, int]] = {}
    for qid, docs in qrels.items():
        out = {}
        for docid, g in docs.items():
            if float(g) != int(g):
                raise InputError(
                    f"qrels grade {g!r} for topic {qid!r} is not an integer; trec measures need integer grades"
                )
            out[docid] = int(g)
        int_qrels[qid] = out
    run_dict = {qid: {d: float(s) for d, s in docs.items()} for qid, docs in run.items() if qid in int_qrels}
    values = {qid: float("nan") for qid in run_dict}
    for metric in ir_measures.iter_calc([m], int_qrels, run_dict):
        values[metric.query_id] = float(metric.value)
    return {q: v for q, v in values.items() if v == v}


def mean_measure(qrels: Scores, run: Scores, measure: str = "nDCG@10") -> float:
    """The mean over the run's topics with qrels (trec_eval's ``all`` without ``-c``)."""
    values = per_topic_measure(qrels, run, measure)
    return sum(values.values()) / len(values) if values else float("nan")
