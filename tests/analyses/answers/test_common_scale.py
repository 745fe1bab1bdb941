"""Runs and generators on one scale, and the no-judgment anchors (analyses.answers.common_scale), from the
definitions of spec S7 (3)-(4) on tiny hand-made vectors whose cosines are known exactly."""

from __future__ import annotations

import math

import numpy as np
import pytest

from reljudge.analyses.answers.common_scale import (
    anchor_scores,
    first_other,
    generator_scale_scores,
    ordering_stability,
    run_scale_scores,
    scale_agreement,
    trec_ranked,
)
from reljudge.vectors.embedding_cache import TextEmbeddings
from reljudge.vectors.embedding_source import PrecomputedEmbeddings


def _source(vectors: dict[str, list[float]]) -> PrecomputedEmbeddings:
    return PrecomputedEmbeddings(list(vectors), np.array(list(vectors.values()), dtype=float))


def test_trec_order_is_score_descending_then_docid_descending():
    assert trec_ranked({"a": 1.0, "c": 1.0, "b": 2.0}) == ["b", "c", "a"]
    assert first_other(["t", "x", "y"], "t") == "x"
    assert first_other(["x", "t"], "t") == "x"
    assert first_other(["t"], "t") is None


def test_f_r_is_the_first_passage_that_is_not_the_target():
    # two grade-3 targets; the run ranks t1, t2, x: f_R(t1) = t2 and f_R(t2) = t1 (both relevant)
    qrels = {"q": {"t1": 3, "t2": 3, "x": 0}}
    source = _source({"t1": [1, 0], "t2": [0.6, 0.8], "x": [0, 1]})
    run = {"q": {"t1": 3.0, "t2": 2.0, "x": 1.0}}
    s = run_scale_scores(qrels, {"R": run}, source)["R"]
    assert s.score == pytest.approx(0.6)  # not (1 + 0.6) / 2: the target is never its own f_R
    assert (s.pairs, s.topics, s.missing_vectors, s.no_result) == (2, 1, 0, 0)
    # a tie on the score: docid descending puts "x" before "t1", so f_R(t2) = x
    tied = run_scale_scores(qrels, {"R": {"q": {"t1": 1.0, "x": 1.0}}}, source)["R"]
    assert tied.score == pytest.approx((0.0 + 0.8) / 2)  # f_R(t1) = x: 0; f_R(t2) = x: 0.8


def test_a_ranking_of_the_target_alone_and_a_missing_query_are_no_result():
    qrels = {"q1": {"t": 3, "u": 3}, "q2": {"v": 2, "w": 1}}
    source = _source({"t": [1, 0], "u": [1, 0], "v": [0, 1], "w": [0, 1]})
    run = {"q1": {"t": 1.0}}  # q1 ranks only t; q2 missing
    s = run_scale_scores(qrels, {"R": run}, source)["R"]
    # (q1, t): nothing but t -> no result; (q1, u): f_R = t, cos 1; (q2, v): the run lacks q2
    assert (s.score, s.pairs, s.topics, s.no_result, s.missing_vectors) == (1.0, 1, 1, 2, 0)


def test_micro_over_pairs_and_macro_over_topics_differ_as_defined():
    qrels = {"q1": {"a": 3, "b": 3}, "q2": {"c": 2, "d": 0}}
    source = _source(
        {"a": [1, 0], "b": [1, 0], "c": [1, 0], "d": [0, 1], "A1": [1, 0], "A2": [0.4, math.sqrt(0.84)]}
    )
    answers = {"G": {"q1": "A1", "q2": "A2"}}
    micro = generator_scale_scores(qrels, answers, source)["G"]
    macro = generator_scale_scores(qrels, answers, source, macro=True)["G"]
    assert micro.score == pytest.approx((1 + 1 + 0.4) / 3)
    assert macro.score == pytest.approx((1 + 0.4) / 2)
    assert (micro.pairs, micro.topics) == (3, 2)


def test_top_grade_is_three_else_two_and_below_two_has_no_target():
    qrels = {"q1": {"a": 3, "b": 2}, "q2": {"c": 2, "d": 1}, "q3": {"e": 1}}
    source = _source({"a": [1, 0], "b": [0, 1], "c": [0, 1], "d": [1, 0], "e": [1, 0], "A": [1, 0]})
    s = generator_scale_scores(qrels, {"G": {"q1": "A", "q2": "A", "q3": "A"}}, source)["G"]
    assert s.score == pytest.approx(0.5) and s.pairs == 2  # cos(A, a) = 1, cos(A, c) = 0; q3 none


class _LetterEncoder:
    """A deterministic encoder without torch: counts of the letters a, b, c."""

    name = "letters"

    def encode(self, texts):
        return np.array([[t.count("a"), t.count("b"), t.count("c")] for t in texts], dtype=float)


def test_pairs_without_text_are_counted_not_scored():
    qrels = {"q": {"t1": 3, "t2": 3}}
    texts = {"t1": "aaa", "f": "aab", "ans": "a"}  # t2 has no text
    source = TextEmbeddings(_LetterEncoder())
    run = {"q": {"f": 2.0, "t1": 1.0, "t2": 0.5}}
    s = run_scale_scores(qrels, {"R": run}, source, texts=texts)["R"]
    assert s.missing_vectors == 1 and s.pairs == 1  # (q, t2) has no vector; (q, t1) with f
    assert s.score == pytest.approx(6 / (3 * math.sqrt(5)))  # (3,0,0)·(2,1,0)
    g = generator_scale_scores(qrels, {"G": {"q": "ans", "q9": "ans"}}, source, texts=texts)["G"]
    assert (g.score, g.pairs, g.missing_vectors, g.no_result) == (pytest.approx(1.0), 1, 1, 0)
    nothing = generator_scale_scores(qrels, {"G": {"q": "gone"}}, source, texts=texts)["G"]
    assert math.isnan(nothing.score) and nothing.missing_vectors == 2


def test_scale_agreement_is_kendall_tau_b_with_a_p_value():
    scores = {"r1": 0.9, "r2": 0.8, "r3": 0.7, "r4": 0.6, "r5": 0.5}
    ndcg = {"r1": 0.7, "r2": 0.6, "r3": 0.5, "r4": 0.3, "r5": float("nan")}
    ag = scale_agreement(scores, ndcg)
    assert ag["tau_b"] == pytest.approx(1.0) and ag["systems"] == 4 and 0 < ag["p"] < 0.1
    swapped = scale_agreement(scores, {**ndcg, "r1": 0.55})  # r1 now below r2: 5 of 6 pairs agree
    assert swapped["tau_b"] == pytest.approx(4 / 6)
    assert math.isnan(scale_agreement({"r1": 1.0}, {"r1": 0.5})["tau_b"])


def test_anchor_scores_use_each_anchors_top1():
    source = _source({"A1": [1, 0], "A2": [0, 1], "B1": [0, 1], "B2": [0, 1], "x": [1, 0], "y": [0, 1]})
    answers = {"A": {"q1": "A1", "q2": "A2"}, "B": {"q1": "B1", "q2": "B2"}}
    anchors = {"M": {"q1": {"x": 2.0, "y": 1.0}, "q2": {"y": 5.0}}, "N": {"q1": {"y": 1.0}}}
    table = anchor_scores(answers, anchors, source)
    assert table.scores["A"] == {"M": pytest.approx(1.0), "N": pytest.approx(0.0)}
    assert table.scores["B"] == {"M": pytest.approx(0.5), "N": pytest.approx(1.0)}
    assert table.topics["A"] == {"M": 2, "N": 1} and table.missing["A"]["N"] == 1  # N lacks q2
    assert table.mean() == {"A": pytest.approx(0.5), "B": pytest.approx(0.75)}


def test_ordering_stability_over_anchor_pairs():
    scores = {"a": {"M1": 0.9, "M2": 0.8, "M3": 0.9}, "b": {"M1": 0.5, "M2": 0.6, "M3": 0.1},
              "c": {"M1": 0.1, "M2": 0.2, "M3": 0.5}}  # fmt: skip
    st = ordering_stability(scores)
    # tau(M1, M2) = 1; M3 swaps b and c: tau(M1, M3) = tau(M2, M3) = 1/3
    assert st["pairs"] == 3 and st["anchors"] == 3
    assert st["mean_tau_b"] == pytest.approx((1 + 1 / 3 + 1 / 3) / 3)
    assert st["min_tau_b"] == pytest.approx(1 / 3)
    assert st["identical_order_share"] == pytest.approx(1 / 3)
    # an anchor where a generator has no score is left out, and counted
    scores["c"]["M4"] = 0.3
    scores["a"]["M4"] = scores["b"]["M4"] = float("nan")
    assert ordering_stability(scores)["anchors_left_out"] == 1
