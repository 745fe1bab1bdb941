"""The leaderboard layouts `judge leaderboard` reads (`reljudge.analyses.leaderboard.files`):
every layout TREC AutoJudge reads gives the same leaderboard; bad input is ``FILE:LINE: what``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reljudge.analyses.leaderboard.files import read_leaderboard
from reljudge.errors import InputError

DATA = Path(__file__).parent / "data"


def _rows() -> list[tuple[str, str, str, str]]:
    """(run, topic, measure, value) of data/truth.eval.txt (ir_measures layout)."""
    return [tuple(line.split("\t")) for line in (DATA / "truth.eval.txt").read_text().splitlines()]  # type: ignore[misc]


def _write(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture(scope="module")
def reference():
    return read_leaderboard(DATA / "truth.eval.txt")


def test_every_layout_gives_the_same_leaderboard(tmp_path, reference):
    rows = _rows()
    layouts = {
        "tot": [f"{r}\t{m}\t{t}\t{v}" for r, t, m, v in rows],
        "rag4reports": [f"{t} {r} {m} {v}" for r, t, m, v in rows],
        "jsonl": [
            json.dumps({"run_id": r, "topic_id": t, "measure": m, "value": float(v)}) for r, t, m, v in rows
        ],
    }
    assert reference.layout == "ir_measures"
    for layout, lines in layouts.items():
        board = read_leaderboard(_write(tmp_path / f"{layout}.txt", lines))  # told apart by itself
        assert board.layout == layout
        assert board.per_topic == reference.per_topic and board.aggregate == reference.aggregate, layout
    # trec_eval -q output: one file per run, the run named by the file; 'runid' and 'relstring' are text
    runs = tmp_path / "trec_eval"
    runs.mkdir()
    for run in sorted({r for r, *_ in rows}):
        lines = [f"runid                 \tall\t{run}-name", "relstring\tt1\t1010"]
        lines += [f"{m}\t{t}\t{v}" for r, t, m, v in rows if r == run]
        _write(runs / run, lines)
    board = read_leaderboard(runs)
    assert board.layout == "trec_eval"
    assert board.per_topic == reference.per_topic and board.aggregate == reference.aggregate
    assert any("'runid' left out" in n for n in board.notes) and any("'relstring'" in n for n in board.notes)


def test_a_header_line_is_skipped_and_a_format_can_be_named(tmp_path, reference):
    lines = ["run_id\ttopic_id\tmeasure\tvalue"] + ["\t".join(r) for r in _rows()]
    board = read_leaderboard(_write(tmp_path / "with_header.txt", lines), "ir_measures")
    assert board.aggregate == reference.aggregate


@pytest.mark.parametrize(
    ("lines", "where", "what"),
    [
        (["runA all m 0.5", "runA t2 m"], 2, "expected 4 columns 'run topic measure value'"),
        (
            ["runA t1 m 0.5", "runA all m 0.5", "runA t1 m 0.6"],
            3,
            "a second value for run 'runA', topic 't1'",
        ),
        (["runA t1 m 0.5", "runA all m 0.5", "runB t1 m high"], 3, "is not a number"),
        (["runA t1 m 0.5", "runA all m nan"], 2, "is not a finite number"),
    ],
)
def test_bad_lines_are_file_line_errors(tmp_path, lines, where, what):
    path = _write(tmp_path / "bad.txt", lines)
    with pytest.raises(InputError, match=what) as caught:
        read_leaderboard(path)
    assert str(caught.value).startswith(f"{path}:{where}: ")


@pytest.mark.parametrize(
    ("line", "what"),
    [
        ("{not json", "not JSON"),
        ("[1, 2]", "expected a JSON object"),
        ('{"run_id": "a", "topic_id": "t1", "measure": "m"}', "the object has no value"),
        ('{"run_id": "a", "topic_id": "t1", "measure": "m", "value": true}', "value must be a number"),
        (
            '{"run_id": ["a"], "topic_id": "t1", "measure": "m", "value": 1}',
            "run_id must be a non-empty string",
        ),
    ],
)
def test_bad_json_lines_are_file_line_errors(tmp_path, line, what):
    good = json.dumps({"run_id": "a", "topic_id": "t1", "measure": "m", "value": 1})
    path = _write(tmp_path / "bad.jsonl", [good, line])
    with pytest.raises(InputError, match=what) as caught:
        read_leaderboard(path)
    assert str(caught.value).startswith(f"{path}:2: ")


def test_a_layout_that_cannot_be_told_apart_asks_for_the_format(tmp_path):
    path = _write(tmp_path / "four.txt", ["runA t1 m 0.5", "runB t1 m 0.6"])  # no 'all' rows
    with pytest.raises(InputError, match="cannot tell ir_measures .* pass the format"):
        read_leaderboard(path)
    assert read_leaderboard(path, "ir_measures").aggregate_from == {"m": "mean over topics"}
    with pytest.raises(InputError, match="unknown leaderboard format 'csv'"):
        read_leaderboard(path, "csv")
    with pytest.raises(InputError, match="file not found"):
        read_leaderboard(tmp_path / "nope.txt")
