"""``judge answers check | convert``: answer files through the command line -- a malformed file
is ``error: FILE:LINE: ...`` with exit 2 and nothing written; conversions round-trip."""

from __future__ import annotations

import json
from pathlib import Path

from _cli import judge
from reljudge.io.answers import read_answers_tsv, read_rag24

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "answers" / "rag24-example.jsonl"


def test_malformed_answer_files_are_file_line_errors_with_exit_2(tmp_path):
    good = json.loads(EXAMPLE.read_text(encoding="utf-8").splitlines()[0])
    bad = dict(good, answer=[{"text": "x", "citations": [7]}])
    path = tmp_path / "run.jsonl"
    path.write_text(json.dumps(good) + "\n" + json.dumps(bad) + "\n", encoding="utf-8")
    done = judge("answers", "convert", str(path), "--out", str(tmp_path / "out.tsv"), cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.startswith(f"error: {path}:2: answer[0] cites reference 7, outside the 2 references")
    assert not (tmp_path / "out.tsv").exists()
    tsv = tmp_path / "a.tsv"
    tsv.write_text("s\tq1\tfine\ns\tq1\tagain\n", encoding="utf-8")
    done = judge("answers", "check", str(tsv), cwd=tmp_path)
    assert done.returncode == 2 and f"error: {tsv}:2: system 's' answers topic 'q1' twice" in done.stderr


def test_check_and_convert_round_trip(tmp_path):
    result = judge("answers", "check", str(EXAMPLE))
    assert result.returncode == 0 and "2 topic(s), 111 words" in result.output
    tsv = tmp_path / "answers.tsv"
    result = judge("answers", "convert", str(EXAMPLE), "--out", str(tsv))
    assert result.returncode == 0, result.output
    back = tmp_path / "again.jsonl"
    result = judge("answers", "convert", str(tsv), "--to", "rag24", "--out", str(back))
    assert result.returncode == 0, result.output
    original = read_rag24(EXAMPLE)
    again = read_rag24(back)
    # a TSV keeps system, topic and text (not sentences, citations or references)
    assert [(a.system, a.qid, a.text, a.length) for a in again] == [
        (a.system, a.qid, a.text, a.length) for a in original
    ]
    assert [(a.system, a.qid, a.text) for a in read_answers_tsv(tsv)] == [
        (a.system, a.qid, a.text) for a in original
    ]


def test_convert_refuses_two_systems_into_one_rag24_run(tmp_path):
    tsv = tmp_path / "two.tsv"
    tsv.write_text("s1\tq\ta\ns2\tq\tb\n", encoding="utf-8")
    result = judge("answers", "convert", str(tsv), "--to", "rag24", "--out", str(tmp_path / "x.jsonl"))
    assert result.returncode == 2 and "one run per file" in result.stderr
    assert not (tmp_path / "x.jsonl").exists()


def test_check_and_convert_refuse_an_answer_given_in_two_files_at_its_line(tmp_path):
    """Regression: the answer-file checks differed by command; `judge answers` reads as `judge run`."""
    one, two = tmp_path / "one.tsv", tmp_path / "two.tsv"
    one.write_text("s\tq1\tfirst\ns\tq2\tsecond\n", encoding="utf-8")
    two.write_text("t\tq1\tother\ns\tq2\tagain\n", encoding="utf-8")
    for args in (("check",), ("convert", "--out", str(tmp_path / "out.tsv"))):
        done = judge("answers", *args, str(one), str(two), cwd=tmp_path)
        assert done.returncode == 2, done.stderr
        assert done.stderr.startswith(f"error: {two}:2: system 's' answers topic 'q2' already in {one}:2")
    assert not (tmp_path / "out.tsv").exists()
