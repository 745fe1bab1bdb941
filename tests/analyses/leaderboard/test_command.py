"""``judge leaderboard`` end to end, in process (`_cli.judge`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from _cli import judge

DATA = Path(__file__).parent / "data"


@pytest.mark.slow  # the bootstrap of 4 measure pairs x 10 measures: about 2-6 s on a loaded machine
def test_the_command_prints_the_headline_and_writes_the_tables(tmp_path):
    (tmp_path / "truth.qrels").write_text("q1 0 d1 2\nq1 0 d2 0\nq2 0 d3 1\n")
    (tmp_path / "judge.qrels").write_text("q1 0 d1 3\nq1 0 d2 2\nq2 0 d3 0\n")
    ran = judge(
        "leaderboard",
        "--judge", DATA / "judge.eval.txt",
        "--truth", DATA / "truth.eval.txt",
        "--truth-measure", "nDCG@10",
        "--top-k", "5",
        "--bootstrap", "200",
        "--judge-qrels", tmp_path / "judge.qrels",
        "--truth-qrels", tmp_path / "truth.qrels",
        "--out", tmp_path / "out",
    )  # fmt: skip
    assert ran.returncode == 0, ran.output
    out = ran.stdout
    assert "leaderboard meta-evaluation: judge" in out and "(ir_measures)" in out
    assert "aggregates: judge NUGGET: all rows" in out
    assert "top 5: the truth's 5 best runs by its aggregate, ties at the cut broken by run id" in out
    assert "nDCG@10 vs UMBRELA: 8 runs, 5 shared topics, tied run pairs: truth 0, judge 4" in out
    assert "0.857" in out and "0.982" in out  # tau-b and tau_GAP of nDCG@10 vs NUGGET
    assert "t interval with the bootstrap standard error (200 resamples of the topics" in out
    assert "tau_GAP: the judge's ties broken by run id" in out
    assert "qrels agreement: relevant: judge grade >= 1, truth grade >= 1" in out
    written = {p.name for p in (tmp_path / "out").iterdir()}
    assert written == {
        "leaderboard.json",
        "correlations.csv",
        "per_topic.csv",
        "pairs.csv",
        "qrels_agreement.csv",
    }
    data = json.loads((tmp_path / "out" / "leaderboard.json").read_text())
    assert data["settings"]["truth_measures"] == ["nDCG@10"] and len(data["pairs"]) == 2
    assert data["qrels_agreement"]["summary"]["tp"] == 1


@pytest.mark.slow  # two runs of the command: about 1-1.5 s on a loaded machine
def test_runs_in_one_leaderboard_only_exit_2_naming_them_and_write_nothing(tmp_path):
    lines = (DATA / "judge.eval.txt").read_text().splitlines()
    (tmp_path / "judge.txt").write_text("\n".join(x for x in lines if not x.startswith("runH")) + "\n")
    ran = judge(
        "leaderboard",
        "--judge",
        tmp_path / "judge.txt",
        "--truth",
        DATA / "truth.eval.txt",
        "--out",
        tmp_path / "out",
    )
    assert ran.returncode == 2
    assert (
        "error: the leaderboards rank different runs" in ran.stderr
        and "not in the judge's: runH" in ran.stderr
    )
    assert not (tmp_path / "out").exists()
    dropped = judge(
        "leaderboard",
        "--judge", tmp_path / "judge.txt",
        "--truth", DATA / "truth.eval.txt",
        "--missing", "drop",
        "--bootstrap", "0",
        "--out", tmp_path / "out",
    )  # fmt: skip
    assert dropped.returncode == 0, dropped.output
    assert "1 run(s) only the truth has, left out" in dropped.stdout
    assert "no bootstrap (--bootstrap 0)" in dropped.stdout


def test_a_bad_line_is_file_line_and_exit_2(tmp_path):
    (tmp_path / "judge.txt").write_text("runA\tall\tm\t0.5\nrunA\tt1\tm\n")
    ran = judge("leaderboard", "--judge", tmp_path / "judge.txt", "--truth", DATA / "truth.eval.txt")
    assert ran.returncode == 2
    assert f"error: {tmp_path / 'judge.txt'}:2: expected 4 columns" in ran.stderr


def test_options_that_go_together(tmp_path):
    ran = judge("leaderboard", "--judge", DATA / "judge.eval.txt")
    assert ran.returncode == 2 and "--judge and --truth go together" in ran.stderr
    ran = judge("leaderboard")
    assert ran.returncode == 2 and "nothing to compare" in ran.stderr
    ran = judge(
        "leaderboard",
        "--judge",
        DATA / "judge.eval.txt",
        "--truth",
        DATA / "truth.eval.txt",
        "--judge-measure",
        "X",
    )
    assert ran.returncode == 2 and "--judge-measure: no measure X in" in ran.stderr
    for option, value in (("--interval", "bca"), ("--missing", "ignore"), ("--top-k", "0")):
        ran = judge(
            "leaderboard",
            "--judge",
            DATA / "judge.eval.txt",
            "--truth",
            DATA / "truth.eval.txt",
            option,
            value,
        )
        assert ran.returncode == 2 and f"error: {option} must be" in ran.stderr, ran.output


def test_json_prints_the_file_it_writes(tmp_path):
    ran = judge(
        "leaderboard",
        "--judge", DATA / "judge.eval.txt",
        "--truth", DATA / "truth.eval.txt",
        "--judge-measure", "NUGGET",
        "--bootstrap", "0",
        "--json",
        "--out", tmp_path / "out",
    )  # fmt: skip
    assert ran.returncode == 0, ran.output
    assert json.loads(ran.stdout) == json.loads((tmp_path / "out" / "leaderboard.json").read_text())
