"""The pure parts of ``judge autojudge``: the leaderboard's rows and ``all`` values as
autojudge-base's ``fix_aggregate`` computes them, one number format, the qrels and nugget bank
texts, and each track rule's finding (`reljudge.autojudge.outputs`, `reljudge.autojudge.tracks`)."""

from __future__ import annotations

import hashlib
import json

import pytest

from reljudge.autojudge import outputs, tracks
from reljudge.autojudge.outputs import Measure
from reljudge.io.autojudge import AutoJudgeTopic

M = [Measure("a", "first"), Measure("b", "second")]


def test_all_rows_count_a_missing_topic_as_zero_and_leave_an_undefined_measure_out():
    values = {
        ("r1", "t1"): {"a": 1.0, "b": None},  # b undefined on t1
        ("r1", "t2"): {"a": 0.5, "b": 0.25},
        ("r2", "t2"): {"a": 1.0, "b": 1.0},  # r2 has no row for t1 and t3
    }
    rows = outputs.leaderboard_rows(values, ["t1", "t2", "t3"], M, runs=["r3"])
    got = {(r, t, m): v for r, t, m, v in rows}
    assert got[("r1", "all", "a")] == pytest.approx((1.0 + 0.5 + 0) / 3)
    assert got[("r1", "all", "b")] == pytest.approx((0.25 + 0) / 2)  # t1 left out, t3 counts 0
    assert got[("r2", "all", "a")] == pytest.approx(1 / 3)
    assert got[("r3", "all", "a")] == 0.0  # a run without any row still has its 'all' row
    assert ("r1", "t1", "b") not in got
    assert [r[:2] for r in rows][:3] == [("r1", "t1"), ("r1", "t2"), ("r1", "t2")]


def test_the_order_values_come_in_never_changes_the_text():
    values = {("r2", "t1"): {"a": 1 / 3, "b": 0.0}, ("r1", "t2"): {"a": 2 / 3, "b": -0.0}}
    backwards = dict(reversed(list(values.items())))
    text = outputs.leaderboard_text(outputs.leaderboard_rows(values, ["t1", "t2"], M))
    assert text == outputs.leaderboard_text(outputs.leaderboard_rows(backwards, ["t1", "t2"], M))
    assert "r1\tt2\ta\t0.666667\n" in text and "r1\tt2\tb\t0.000000\n" in text
    assert "-0.000000" not in text
    with pytest.raises(ValueError):
        outputs.leaderboard_text([("r", "t", "a", float("nan"))])


def test_measures_yaml_qrels_and_doc_ids():
    assert outputs.measures_yaml(M) == (
        "measures:\n- name: a\n  dtype: float\n  description: first\n- name: b\n  dtype: float\n  description: second\n"
    )
    assert outputs.response_doc_id(["A b.", "C"]) == hashlib.md5(b"A b. C").hexdigest()
    text = outputs.qrels_text([("t2", "d", 1), ("t1", "z", 0), ("t1", "a", 2), ("t1", "a", 3)])
    assert text == "t1 0 a 3\nt1 0 z 0\nt2 0 d 1\n"


def test_nugget_banks_in_both_formats():
    banks = [("q1", "title one", [("a fact", "vital"), ("another", None)])]
    line = json.loads(outputs.nuggetizer_text(banks))
    assert line == {
        "query": "title one",
        "qid": "q1",
        "nuggets": [{"text": "a fact", "importance": "vital"}, {"text": "another"}],
    }
    v3 = json.loads(outputs.v3_text(banks))
    assert v3["format_version"] == "v3" and v3["query_id"] == "q1" and v3["title_query"] == "title one"
    claim = v3["claim_bank"]["a fact"]
    assert claim == {
        "claim": "a fact",
        "claim_id": hashlib.md5(b"a fact").hexdigest(),
        "query_id": "q1",
        "importance": "vital",
    }


def report(**over):
    obj = {
        "metadata": {
            "team_id": "t",
            "run_id": "run",
            "topic_id": "q1",
            "narrative_id": "q1",
            "narrative": "n",
            "run_desc": "d",
        },
        "answer": [{"text": "one two three", "citations": [0]}],
        "references": ["shard_00001_2"],
    }
    obj.update(over)
    return obj


TOPICS = {"q1": AutoJudgeTopic("q1", "title", limit=10)}


@pytest.mark.parametrize(
    ("track", "obj", "category"),
    [
        ("rag26", report(metadata={"run_id": "run", "narrative_id": "q1"}), "metadata"),
        ("rag26", report(metadata={**report()["metadata"], "run_id": "r" * 21}), "run_id_length"),
        ("rag26", report(answer=None, responses=[{"text": "x"}]), "sentences_key"),
        ("rag26", report(answer=[{"text": "x", "citations": {"shard_00001_2": 1.0}}]), "citation_format"),
        ("rag26", report(references=["doc-1"]), "docid_pattern"),
        ("rag26", report(answer=[{"text": "x", "citations": [0, 0, 0, 0]}]), "citation_count"),
        ("rag26", report(answer=[{"text": "word " * 1025, "citations": []}]), "length"),
        ("rag26", report(answer=[{"text": " ", "citations": []}]), "blank_sentence"),
        ("rag26", report(answer=[{"text": "x", "citations": ["shard_00009_9"]}]), "references_undeclared"),
        ("ragtime25", {"metadata": {"team_id": "t", "run_id": "r", "topic_id": "q1"}, "responses": [{"text": "x" * 11}]}, "length"),
        ("ragtime25", {"metadata": {"team_id": "t", "run_id": "r", "topic_id": "q1"}, "responses": [{"text": "x", "citations": []}], "references": ["00000000-0000-0000-0000-000000000000_1"]}, "references_uncited"),
    ],
)  # fmt: skip
def test_each_rule_gives_its_category(track, obj, category):
    assert category in [c for c, _ in tracks.findings(obj, tracks.rules(track), TOPICS)]


def test_a_report_that_keeps_the_rules_has_no_finding():
    assert tracks.findings(report(), tracks.rules("rag26"), TOPICS) == []
    kiddie = {
        "metadata": {"team_id": "t", "run_id": "r", "topic_id": "q1"},
        "responses": [{"text": "x", "citations": ["Any_Title"]}],
    }
    assert tracks.findings(kiddie, tracks.rules("kiddie"), TOPICS) == []
