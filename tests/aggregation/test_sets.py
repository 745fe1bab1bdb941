"""`score_sets`: every document-level score set of a run's records, any mix of methods."""

from __future__ import annotations

import pytest

from _mixed_run import LABEL_METHODS, N3, Q1, Q2, J, mixed
from reljudge.io.judgments import BareRecord
from reljudge.judges.exam.scores import question_id
from reljudge.judges.scoring import score_sets
from reljudge.records import Judgment

NUGGET_SETS = [
    "nuggets-all",
    "nuggets-all-strict",
    "nuggets-vital",
    "nuggets-vital-strict",
    "nuggets-weighted",
    "nuggets-weighted-strict",
]


def test_every_set_of_a_mixed_run_with_values_and_exclusions():
    sets = score_sets(mixed())
    assert list(sets) == ["binary", "umbrela", "trec-assessor-v2", "pairwise", "exam-binary", *NUGGET_SETS]

    assert sets["binary"].scores == {"q1": {"a": 1, "b": 0}}
    assert dict(sets["binary"].exclusions.failed) == {"unparsed": 1}  # a failure is never a label
    assert sets["umbrela"].scores == {"q1": {"a": 3}}
    assert dict(sets["umbrela"].exclusions.failed) == {"refused": 1}
    assert sets["trec-assessor-v2"].scores == {"q1": {"a": 2}}

    pairwise = sets["pairwise"]
    assert pairwise.scores == {"q1": {"a": 2.0, "b": 0.0, "c": 0.0}}
    assert dict(pairwise.exclusions.failed) == {"api_error": 1}
    assert pairwise.details["preferences"] == [("q1", "a", "b", 1), ("q1", "c", "a", 2)]
    assert pairwise.details["never_won"] == {"q1": ["b", "c"]}

    exam = sets["exam-binary"]
    assert exam.scores == {"q1": {"a": 0.5, "b": 1.0, "c": 1.0}}
    assert exam.details["scale"] == "binary" and exam.details["scale_from"] == "records"
    assert exam.details["question_bank"] is True
    assert dict(exam.exclusions.failed) == {"unparsed": 1}
    assert exam.exclusions.missing == [("q1", "c", Q2)]  # from the exam-question records

    values = {name: sets[name].scores for name in NUGGET_SETS}
    assert values["nuggets-all"] == {"q1": {"a": 0.75, "b": 0.0}, "q2": {"d": 1.0}}
    assert values["nuggets-all-strict"] == {"q1": {"a": 0.5, "b": 0.0}, "q2": {"d": 1.0}}
    assert values["nuggets-vital"] == {"q1": {"a": 1.0, "b": 0.0}}  # q2 has no vital nugget
    assert values["nuggets-vital-strict"] == {"q1": {"a": 1.0, "b": 0.0}}
    assert values["nuggets-weighted"]["q1"]["a"] == pytest.approx((1 + 0.5 * 0.5) / 1.5)
    assert values["nuggets-weighted"]["q1"]["b"] == 0.0 and values["nuggets-weighted"]["q2"] == {"d": 1.0}
    assert values["nuggets-weighted-strict"]["q1"]["a"] == pytest.approx(1 / 1.5)
    for name in NUGGET_SETS:
        result = sets[name]
        assert dict(result.exclusions.failed) == {"api_error": 1}
        assert result.details["assignments_without_scored_nugget"] == 1  # the one to N4
        assert result.exclusions.missing == []  # N3 was not selected: never expected
        vital_gap = [("q2", "d", "vital: no vital nugget")]
        assert result.exclusions.unscored == (vital_gap if name.startswith("nuggets-vital") else [])


def test_bare_label_records_give_the_same_scores():
    records = mixed()
    views = [BareRecord.of(r) if r.method in LABEL_METHODS else r for r in records]
    full, light = score_sets(records), score_sets(iter(views))
    assert list(light) == list(full)
    for name in full:
        assert light[name].scores == full[name].scores, name
    # a bare record has no extra: the EXAM scale is read off the 0/1 labels instead
    assert light["exam-binary"].details["scale_from"] == "labels"
    assert score_sets(iter(views), exam_scale="binary")["exam-binary"].details["scale_from"] == "argument"


def _grades(labels: list[int], scale: str | None = None) -> list[Judgment]:
    extra = {"scale": scale} if scale else {}
    items = [question_id("q1", f"question {i}") for i in range(len(labels))]
    return [J("exam", docid="a", item_id=q, label=v, extra=extra) for q, v in zip(items, labels, strict=True)]


def test_exam_scale_from_argument_records_or_labels():
    graded = score_sets(_grades([1, 4, 2]))
    assert list(graded) == ["exam-graded-max", "exam-graded-mean"]
    assert graded["exam-graded-max"].scores == {"q1": {"a": 4.0}}
    assert graded["exam-graded-mean"].scores == {"q1": {"a": pytest.approx(7 / 3)}}
    assert graded["exam-graded-max"].details["question_bank"] is False  # no question records
    # self-ratings that happen to be 0/1 stay graded when the scale is recorded or given
    assert list(score_sets(_grades([0, 1], "graded"))) == ["exam-graded-max", "exam-graded-mean"]
    assert list(score_sets(_grades([0, 1]), exam_scale="graded")) == ["exam-graded-max", "exam-graded-mean"]
    assert list(score_sets(_grades([0, 1]))) == ["exam-binary"]
    with pytest.raises(ValueError, match="contradicts the recorded scale"):
        score_sets(_grades([0, 1], "graded"), exam_scale="binary")
    with pytest.raises(ValueError, match="several scales"):
        score_sets(
            [*_grades([0], "graded"), J("exam", docid="b", item_id=Q1, label=1, extra={"scale": "binary"})]
        )
    with pytest.raises(ValueError, match="0/1 labels"):
        score_sets(_grades([0, 3], "binary"))
    with pytest.raises(ValueError, match="exam_scale"):
        score_sets([], exam_scale="fine")  # type: ignore[arg-type]


def test_nugget_selection_recorded_or_chosen():
    records = mixed()
    # top_k=None re-selects every scored nugget: N3 is then expected from a and b, and missing
    everything = score_sets(records, top_k=None)["nuggets-all"]
    assert sorted(everything.exclusions.missing) == [("q1", "a", N3), ("q1", "b", N3)]
    assert everything.scores == score_sets(records)["nuggets-all"].scores
    # without recorded flags, the top 20 (vital first) are taken: N3 again
    unflagged = [
        r.model_copy(update={"extra": {k: v for k, v in r.extra.items() if k != "selected"}})
        if r.method == "nugget"
        else r
        for r in records
    ]
    assert len(score_sets(unflagged)["nuggets-all"].exclusions.missing) == 2
    # top_k=1 keeps N1, plus N2 because passages were assessed against it
    one = score_sets(records, top_k=1)["nuggets-all"]
    assert one.exclusions.missing == [] and one.scores == score_sets(records)["nuggets-all"].scores
    with pytest.raises(ValueError, match="top_k"):
        score_sets(records, top_k=0)


def test_shapes_it_cannot_aggregate_are_errors():
    with pytest.raises(ValueError, match="no judge declares that method"):
        score_sets([J("custom", docid="a", item_id="x", label=1)])
    with pytest.raises(ValueError, match="mix pointwise and pairwise"):
        score_sets([J("custom", docid="a", label=1), J("custom", docid="a", docid_b="b", label=1)])
    with pytest.raises(ValueError, match="conflicting judgments"):
        score_sets([J("binary", docid="a", label=1), J("binary", docid="a", label=0)])
    with pytest.raises(ValueError, match="named 'exam-binary'"):
        score_sets([J("exam-binary", docid="a", label=1), *_grades([1], "binary")])


def test_only_failures_give_an_empty_set_with_exclusions_and_nothing_gives_no_set():
    sets = score_sets([J("binary", docid="a", status="api_error")])
    assert sets["binary"].scores == {} and sets["binary"].exclusions.n_failed == 1
    assert score_sets([]) == {}
    assert score_sets([J("nugget-creation", item_id="window/0"), J("exam-question", item_id=Q1)]) == {}
