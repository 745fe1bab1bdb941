"""Dispatch from judgment records to document scores, and failure exclusion."""

from __future__ import annotations

import pytest

from reljudge.judges.exam.scores import QuestionBank
from reljudge.judges.nuggets.scores import Nugget
from reljudge.judges.scoring import judgments_to_scores
from reljudge.judges.shape_scoring import label_scores
from reljudge.records import Judgment


def J(docid: str, label, status: str = "ok", method: str = "umbrela", qid: str = "1") -> Judgment:
    return Judgment(qid=qid, docid=docid, method=method, label=label, status=status)


def test_pointwise_labels_and_exclusions():
    js = [J("a", 3), J("b", 0), J("c", None, "unparsed"), J("d", None, "refused"), J("e", 1, qid="2")]
    res = judgments_to_scores(js, "umbrela")
    assert res.scores == {"1": {"a": 3, "b": 0}, "2": {"e": 1}}
    assert res.exclusions.failed == {"unparsed": 1, "refused": 1}
    assert res.exclusions.failed_keys == [("1", "c"), ("1", "d")]
    zero = label_scores(js, on_failure="zero")
    assert zero.scores["1"] == {"a": 3, "b": 0, "c": 0, "d": 0} and zero.exclusions.zeroed == 2
    with pytest.raises(ValueError, match="on_failure"):
        label_scores(js, on_failure="ignore")  # type: ignore[arg-type]


def test_mixed_methods_and_wrong_shape_raise():
    with pytest.raises(ValueError, match="mixed"):
        judgments_to_scores([J("a", 1, method="binary"), J("b", 1)], "binary")
    pair = Judgment(qid="1", docid="a", docid_b="b", method="pairwise", label=1)
    with pytest.raises(ValueError, match="not a pointwise record"):
        judgments_to_scores([pair], "binary")


def test_exam_dispatch():
    bank = QuestionBank.from_rows([("1", "q1"), ("1", "q2")])
    ids = [q.id for q in bank["1"]]
    js = [
        Judgment(qid="1", docid="a", item_id=i, method="exam", label=r)
        for i, r in zip(ids, (4, 1), strict=True)
    ]
    assert judgments_to_scores(js, "exam-graded-max").scores == {"1": {"a": 4.0}}
    assert judgments_to_scores(js, "exam", score="graded-mean").scores == {"1": {"a": 2.5}}
    res = judgments_to_scores(js, "exam", min_rating=4, questions=bank)
    assert res.method == "exam-binary" and res.scores == {"1": {"a": 0.5}}
    with pytest.raises(ValueError, match="contradicts"):
        judgments_to_scores(js, "exam-graded-max", score="binary")
    with pytest.raises(ValueError, match="unknown exam score"):
        judgments_to_scores(js, "exam-cover")


def test_nuggets_dispatch():
    nugs = [Nugget.create("1", "v", "vital"), Nugget.create("1", "o", "okay")]
    js = [
        Judgment(qid="1", docid="a", item_id=n.id, method="nuggets", label=x)
        for n, x in zip(nugs, (0.5, 1.0), strict=True)
    ]
    assert judgments_to_scores(js, "nuggets", nuggets=nugs).scores == {"1": {"a": 0.75}}
    assert judgments_to_scores(js, "nuggets-vital-strict", nuggets=nugs).scores == {"1": {"a": 0.0}}
    w = judgments_to_scores(js, "nuggets-weighted", nuggets=nugs).scores["1"]["a"]
    assert w == pytest.approx((0.5 + 0.5) / 1.5)
    with pytest.raises(ValueError, match="needs the nuggets"):
        judgments_to_scores(js, "nuggets")


def test_pairwise_dispatch():
    js = [
        Judgment(qid="1", docid="a", docid_b="b", method="pairwise", label=2),
        Judgment(qid="1", docid="a", docid_b="c", method="pairwise", label=0),
    ]
    res = judgments_to_scores(js, "pairwise")
    assert res.scores == {"1": {"a": 0.0, "b": 1.0, "c": 0.0}}
    assert res.details["never_won"] == {"1": ["a", "c"]}
    assert judgments_to_scores(js, "preferences", ties="half").scores["1"]["c"] == 0.5


def test_custom_pairwise_method_and_zero_policy_go_through_score_sets():
    js = [
        Judgment(qid="1", docid="a", docid_b="b", method="mypref", label=2),
        Judgment(qid="1", docid="a", docid_b="c", method="mypref", status="unparsed"),
    ]
    res = judgments_to_scores(js, "mypref")  # a custom pairwise judge's own method name
    assert res.method == "mypref" and res.scores == {"1": {"a": 0.0, "b": 1.0}}
    assert res.exclusions.failed == {"unparsed": 1}
    with pytest.raises(ValueError, match="on_failure must be 'exclude'"):
        judgments_to_scores(js, "mypref", on_failure="zero")
    points = [J("a", 2), J("b", None, "api_error")]
    zero = judgments_to_scores(points, "umbrela", on_failure="zero")
    assert zero.scores == {"1": {"a": 2, "b": 0}} and zero.exclusions.zeroed == 1
    assert judgments_to_scores([], "umbrela").scores == {}
    assert judgments_to_scores([], "pairwise").details == {"never_won": {}, "ties": "none"}
