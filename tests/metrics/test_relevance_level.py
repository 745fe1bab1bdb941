"""Relevance levels of binary measures and trec_eval's ``-c`` averaging
(`reljudge.metrics.measures`), against a hand computation and ir_measures / pytrec_eval."""

from __future__ import annotations

import pytest

from reljudge.metrics.measures import at_relevance_level, relevance_level, system_measures

# q1: a 2, b 1, c 0; q2: d 1, e 3, g 0; q3: f 2, h 0
QRELS = {"q1": {"a": 2, "b": 1, "c": 0}, "q2": {"d": 1, "e": 3, "g": 0}, "q3": {"f": 2, "h": 0}}
FULL = {
    "q1": {"a": 3.0, "b": 2.0, "c": 1.0},
    "q2": {"x": 3.0, "e": 2.0, "d": 1.0},  # x is unjudged
    "q3": {"h": 2.0, "f": 1.0},
}
PARTIAL = {q: docs for q, docs in FULL.items() if q != "q3"}  # skips the topic it does worst on

# AP by hand. Grade >= 1: q1 a@1 b@2 -> 1; q2 e@2 d@3 -> (1/2 + 2/3)/2 = 7/12; q3 f@2 -> 1/2.
# Grade >= 2: q1 a@1 -> 1; q2 e@2 -> 1/2; q3 f@2 -> 1/2.
AP_1 = {"q1": 1.0, "q2": 7 / 12, "q3": 0.5}
AP_2 = {"q1": 1.0, "q2": 0.5, "q3": 0.5}


def test_binary_measures_take_the_level_and_graded_ones_ignore_it():
    assert at_relevance_level("map", 2) == "AP(rel=2)"
    assert at_relevance_level("P_10", 2) == "P(rel=2)@10"
    assert at_relevance_level("RR@10", 3) == "RR(rel=3)@10"
    assert at_relevance_level("Rprec", 2) == "Rprec(rel=2)"
    assert at_relevance_level("ndcg_cut_10", 2) == "nDCG@10"  # graded: gains, no level
    assert at_relevance_level("AP(rel=3)", 2) == "AP(rel=3)"  # a name that sets rel keeps it
    assert relevance_level("map") == 1  # trec_eval's and ir_measures' default
    assert relevance_level(at_relevance_level("map", 2)) == 2
    assert relevance_level("nDCG@10") is None


def test_level_matches_a_hand_computation_and_pytrec_eval():
    import pytrec_eval

    for level, expected in ((1, AP_1), (2, AP_2)):
        values = system_measures(QRELS, {"full": FULL}, at_relevance_level("map", level))["full"]
        assert values == pytest.approx(expected, abs=1e-12)
        reference = pytrec_eval.RelevanceEvaluator(QRELS, {"map"}, relevance_level=level).evaluate(FULL)
        assert values == pytest.approx({q: v["map"] for q, v in reference.items()}, abs=1e-12)


def test_complete_scores_a_missing_topic_zero_and_averages_over_the_qrels_topics():
    import ir_measures

    by_default = system_measures(QRELS, {"partial": PARTIAL}, "map")["partial"]
    complete = system_measures(QRELS, {"partial": PARTIAL}, "map", complete=True)["partial"]
    assert set(by_default) == {"q1", "q2"}
    assert complete == pytest.approx({"q1": 1.0, "q2": 7 / 12, "q3": 0.0}, abs=1e-12)
    # the run that skips its worst topic outranks the full run only without -c
    mean = lambda v: sum(v.values()) / len(v)  # noqa: E731
    assert mean(by_default) == pytest.approx(19 / 24) and mean(AP_1) == pytest.approx(25 / 36)
    assert mean(complete) == pytest.approx(19 / 36)
    assert mean(complete) < mean(AP_1) < mean(by_default)
    # ir_measures (independent) yields its default 0 for a qrels topic the run lacks and averages
    # over every qrels topic: trec_eval -c
    per_topic = {m.query_id: m.value for m in ir_measures.iter_calc([ir_measures.AP], QRELS, PARTIAL)}
    assert complete == pytest.approx(per_topic, abs=1e-12)
    aggregate = ir_measures.calc_aggregate([ir_measures.AP(rel=2)], QRELS, PARTIAL)
    assert aggregate[ir_measures.AP(rel=2)] == pytest.approx(1.5 / 3)
    level_2 = system_measures(QRELS, {"partial": PARTIAL}, "AP(rel=2)", complete=True)["partial"]
    assert level_2 == pytest.approx({"q1": 1.0, "q2": 0.5, "q3": 0.0})
