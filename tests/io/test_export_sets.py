"""`judge export --to qrels` through `score_sets`: any method's scores, the primary set by
default, ``--method`` / ``--set`` to choose; judgments files are recognised the same way as by
`judge evaluate` (`is_judgments_path`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from _cli import judge
from _mixed_run import mixed
from reljudge.analyses.inputs import load_judgment_sets
from reljudge.errors import InputError
from reljudge.export import export_judgments, export_scores
from reljudge.io.judgments import JudgmentWriter, is_judgments_path
from reljudge.io.trec import read_qrels
from reljudge.judges.scoring import score_sets, select_set
from reljudge.records import Judgment


def J(method: str, docid: str | None = None, label=None, **kw) -> Judgment:
    return Judgment(qid="q1", docid=docid, method=method, label=label, **kw)


def exam_run(scale: str = "graded") -> list[Judgment]:
    top = 5 if scale == "graded" else 1
    return [
        J("exam-question", item_id="q1/1", extra={"text": "Who?", "index": 0}),
        J("exam-question", item_id="q1/2", extra={"text": "Why?", "index": 1}),
        J("exam", "a", top, item_id="q1/1", extra={"scale": scale}),
        J("exam", "a", top // 2, item_id="q1/2", extra={"scale": scale}),
        J("exam", "b", 0, item_id="q1/1", extra={"scale": scale}),
        J("exam", "b", top - 1 if scale == "graded" else 1, item_id="q1/2", extra={"scale": scale}),
    ]


def test_is_judgments_path(tmp_path: Path) -> None:
    for name in ("j.jsonl", "j.json", "j.ndjson"):
        assert is_judgments_path(tmp_path / name)
    assert is_judgments_path(tmp_path)  # a run directory
    assert not is_judgments_path(tmp_path / "binary.dl19.qrels")
    assert not is_judgments_path(tmp_path / "j.txt")


def test_select_set_primary_method_and_name() -> None:
    sets = score_sets(exam_run())
    assert list(sets) == ["exam-graded-max", "exam-graded-mean"]
    assert select_set(sets) == "exam-graded-max"
    assert select_set(sets, method="exam") == "exam-graded-max"
    assert select_set(sets, method="exam-graded-mean") == "exam-graded-mean"
    assert select_set(sets, name="exam-graded-mean") == "exam-graded-mean"
    binary = score_sets(exam_run("binary"))
    assert select_set(binary) == "exam-binary"
    many = score_sets(mixed())
    with pytest.raises(ValueError, match="several methods"):
        select_set(many)
    assert select_set(many, method="umbrela") == "umbrela"
    assert select_set(many, method="nuggets") == "nuggets-all"
    assert select_set(many, method="nugget-assignment") == "nuggets-all"
    assert select_set(many, method="pairwise") == "pairwise"
    with pytest.raises(ValueError, match="no score set of method 'graded'"):
        select_set(many, method="graded")
    with pytest.raises(ValueError, match="no score set 'nuggets-x'"):
        select_set(many, name="nuggets-x")


def test_export_scores_of_structured_runs() -> None:
    assert export_scores(exam_run()) == {"q1": {"a": 5.0, "b": 4.0}}
    assert export_scores(exam_run(), score_set="exam-graded-mean") == {"q1": {"a": 3.5, "b": 2.0}}
    assert export_scores(mixed(), method="pairwise") == {"q1": {"a": 2, "b": 0, "c": 0}}
    with pytest.raises(InputError, match="several methods"):
        export_scores(mixed())
    # the last record of a key counts (a retried failure, or a re-judged passage)
    again = [J("binary", "a", 1), J("binary", "a", 0)]
    assert export_scores(again) == {"q1": {"a": 0}}


def test_export_judgments_qrels_of_a_pairwise_run(tmp_path: Path) -> None:
    records = [J("pairwise", "a", 1, docid_b="b"), J("pairwise", "c", 2, docid_b="a")]
    assert export_judgments(records, tmp_path / "p.qrels") == 3
    assert read_qrels(tmp_path / "p.qrels") == {"q1": {"a": 2, "b": 0, "c": 0}}
    with pytest.raises(InputError, match="no ok judgments give a score"):
        export_judgments([J("binary", "a", status="unparsed")], tmp_path / "none.qrels")


@pytest.mark.slow
def test_cli_export_exam_run_sets_and_json_judgments(tmp_path: Path) -> None:
    run = tmp_path / "run"
    with JudgmentWriter(run / "judgments.jsonl") as writer:
        writer.write_many(exam_run())
    out = tmp_path / "exam.qrels"
    result = judge("export", "--judgments", str(run), "--out", str(out))
    assert result.returncode == 0, result.stderr
    assert read_qrels(out) == {"q1": {"a": 5, "b": 4}}
    result = judge("export", "--judgments", str(run), "--out", str(out), "--set", "exam-graded-mean")
    assert result.returncode == 0, result.stderr
    assert read_qrels(out) == {"q1": {"a": 4, "b": 2}}  # 3.5 rounds half up
    result = judge(
        "export", "--judgments", str(run), "--out", str(out), "--method", "exam", "--float", "keep"
    )
    assert result.returncode == 0, result.stderr
    result = judge("export", "--judgments", str(run), "--out", str(tmp_path / "x"), "--set", "nope")
    assert result.returncode == 2 and "no score set 'nope'" in result.stderr
    # a .json judgments file is judgments for export as for evaluate (it was read as qrels)
    as_json = tmp_path / "j.json"
    as_json.write_bytes((run / "judgments.jsonl").read_bytes())
    result = judge("export", "--judgments", str(as_json), "--out", str(out))
    assert result.returncode == 0, result.stderr
    assert read_qrels(out) == {"q1": {"a": 5, "b": 4}}
    names = [s.name for s in load_judgment_sets([as_json])]
    assert names == ["j:exam-graded-max", "j:exam-graded-mean"]
