"""Qrels agreement as relevant sets (`reljudge.analyses.leaderboard.qrels_agreement`): the
numbers of TREC AutoJudge's ``qrel-evaluate``."""

from __future__ import annotations

import math

import pytest

from reljudge.analyses.leaderboard.qrels_agreement import qrels_agreement

TRUTH = {"q1": {"d1": 2, "d2": 1, "d3": 0, "d4": 3}, "q2": {"d1": 0, "d5": 2, "d6": 1}, "q3": {"d7": 0}}
JUDGE = {"q1": {"d1": 3, "d2": 0, "d3": 1, "d9": 2}, "q2": {"d1": 1, "d5": 2, "d6": 0}, "q4": {"d8": 2}}

# autojudge-evaluate 1.1.0 on these qrels (written as 'qid 0 docid grade' files):
#   auto-judge-evaluate qrel-evaluate --truth-qrels q_truth.txt --predict-qrels q_judge.txt \
#     --truth-max-grade 3 --predict-max-grade 3 --truth-relevance-threshold 2 --predict-relevance-threshold 2
# prints (4 digits): q1 P 0.5 R 0.5 F1 0.5 Jaccard 0.3333 ARI -0.25; q2 1.0 1.0 1.0 1.0 1.0;
# q3 NaN (no relevant document on either side) ARI 1.0; q4 0.0 0.0 0.0 0.0 ARI 1.0;
# MEAN P 0.5 R 0.5 F1 0.5 Jaccard 0.4444 ARI 0.6875
#: scikit-learn's first import (the adjusted Rand index) takes 1.5-7 s on a loaded machine
pytestmark = pytest.mark.slow

EXPECTED = {
    "q1": (0.5, 0.5, 0.5, 1 / 3, -0.25),
    "q2": (1.0, 1.0, 1.0, 1.0, 1.0),
    "q3": (math.nan, math.nan, math.nan, math.nan, 1.0),
    "q4": (0.0, 0.0, 0.0, 0.0, 1.0),
}


def test_per_topic_and_mean_values_equal_autojudge_evaluates_qrel_evaluate():
    rows, summary = qrels_agreement(JUDGE, TRUTH, judge_level=2, truth_level=2)
    assert [r["topic"] for r in rows] == ["q1", "q2", "q3", "q4"]
    for row in rows:
        got = (row["precision"], row["recall"], row["f1"], row["jaccard"], row["ari"])
        assert got == pytest.approx(EXPECTED[row["topic"]], nan_ok=True), row
    assert (rows[0]["tp"], rows[0]["fp"], rows[0]["fn"]) == (1, 1, 1)
    assert summary["mean_precision"] == pytest.approx(0.5) and summary["precision_topics"] == 3
    assert summary["mean_f1"] == pytest.approx(0.5)
    assert summary["mean_jaccard"] == pytest.approx(4 / 9, abs=1e-4)
    assert summary["mean_ari"] == pytest.approx(0.6875) and summary["ari_topics"] == 4
    # pooled: TP 2, FP 2 (q1 d9, q4 d8), FN 1 (q1 d4)
    assert (summary["tp"], summary["fp"], summary["fn"]) == (2, 2, 1)
    assert summary["micro_precision"] == pytest.approx(0.5) and summary["micro_recall"] == pytest.approx(
        2 / 3
    )
    assert summary["judge_only_topics"] == ["q4"] and summary["truth_only_topics"] == ["q3"]


def test_each_side_has_its_own_relevance_level():
    rows, summary = qrels_agreement(JUDGE, TRUTH, judge_level=1, truth_level=2)
    q1 = rows[0]  # judge relevant d1 d3 d9, truth relevant d1 d4
    assert (q1["tp"], q1["fp"], q1["fn"]) == (1, 2, 1)
    assert "judge grade >= 1, truth grade >= 2" in summary["rule"]
