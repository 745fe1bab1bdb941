"""Hostile input files: every malformed topics, qrels, corpus, run or pairs file stops ``judge run``
with ``error: file:line: what is wrong`` and exit code 2, before any call and without leaving
any output behind."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from _cli import judge
from _reliability import MODEL, SECRET, cli, make_dataset
from reljudge.errors import EXIT_BAD_INPUT

ENV = {"OPENAI_API_KEY": SECRET}

DEAD_URL = "http://127.0.0.1:9/v1"  # nothing listens: a call would fail, not hang

# (case id, which file, content, expected line or None, a fragment of the message)
CASES: list[tuple[str, str, bytes, int | None, str]] = [
    ("topics-truncated", "topics", b"q0\twhat is the river bank\nq1\n", 2, "expected 'qid<TAB>query'"),
    ("topics-duplicate", "topics", b"q0\tone\nq1\ttwo\nq0\tthree\n", 3, "duplicate topic id 'q0'"),
    ("topics-not-utf8", "topics", b"q0\tone\nq1\tcaf\xe9 au lait\n", 2, "not valid UTF-8"),
    ("topics-empty", "topics", b"", None, "file is empty"),
    ("topics-blank", "topics", b"\n \n\t\n", None, "file is empty"),
    ("qrels-columns", "qrels", b"q0 0 d0-0 1\nq0 0 d0-1\n", 2, "expected 4 columns"),
    ("qrels-truncated", "qrels", b"q0 0 d0-0 1\nq0 0 d0-1 2\nq0 0 d0", 3, "expected 4 columns"),
    ("qrels-grade", "qrels", b"q0 0 d0-0 1\nq0 0 d0-1 high\n", 2, "grade 'high' is not a number"),
    ("qrels-nan", "qrels", b"q0 0 d0-0 nan\n", 1, "not a finite number"),
    ("qrels-duplicate", "qrels", b"q0 0 d0-0 1\nq0 0 d0-1 0\nq0 0 d0-0 2\n", 3, "duplicate judgment"),
    ("qrels-not-utf8", "qrels", b"q0 0 d0-0 1\nq0 0 d\xff\xfe 1\n", 2, "not valid UTF-8"),
    ("qrels-empty", "qrels", b"", None, "file is empty"),
    ("corpus-no-tab", "corpus", b"d0-0\tfine text\nd0-1 no tab here\n", 2, "expected 'docid<TAB>text'"),
    ("corpus-not-utf8", "corpus", b"d0-0\tfine\nd0-1\t\xc3\x28 broken\n", 2, "not valid UTF-8"),
    ("corpus-duplicate", "corpus", b"d0-0\tone text\nd0-1\tx\nd0-0\tanother text\n", 3, "d0-0"),
    ("corpus-empty", "corpus", b"", None, "empty"),
    (
        "jsonl-truncated",
        "jsonl",
        b'{"docid": "d0-0", "text": "a"}\n{"docid": "d0-1", "te',
        2,
        "not valid JSON",
    ),
    ("jsonl-no-text", "jsonl", b'{"docid": "d0-0", "text": "a"}\n{"docid": "d0-1"}\n', 2, "no text field"),
    ("run-columns", "run", b"q0 Q0 d0-0 1 9.5 sys\nq0 Q0 d0-1 2 sys\n", 2, "expected 6 columns"),
    ("run-score", "run", b"q0 Q0 d0-0 1 9.5 sys\nq0 Q0 d0-1 2 high sys\n", 2, "score 'high' is not a number"),
    ("run-rank", "run", b"q0 Q0 d0-0 one 9.5 sys\n", 1, "rank 'one' is not an integer"),
    ("run-duplicate", "run", b"q0 Q0 d0-0 1 9.5 sys\nq0 Q0 d0-0 2 9.0 sys\n", 2, "appears twice"),
    (
        "run-unknown-topic",
        "run",
        b"q0 Q0 d0-0 1 9.5 sys\nq77 Q0 d0-1 1 9.0 sys\n",
        2,
        "topic 'q77' is not among",
    ),
    ("run-not-utf8", "run", b"q0 Q0 d0-0 1 9.5 sys\nq0 Q0 d\x80 2 9.0 sys\n", 2, "not valid UTF-8"),
    ("run-empty", "run", b"", None, "file is empty"),
    ("pairs-columns", "pairs", b"q0 d0-0 d0-1\nq0 d0-0\n", 2, "found 2 columns"),
    ("pairs-duplicate", "pairs", b"q0 d0-0 d0-1\nq0 d0-2 d0-3\nq0 d0-0 d0-1\n", 3, "duplicate pair"),
    ("pairs-self", "pairs", b"q0 d0-0 d0-0\n", 1, "with itself"),
]


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    return make_dataset(tmp_path_factory.mktemp("data"), 3, 5)


def _argv(data, tmp: Path, which: str, bad: Path) -> list[str]:
    files = {"topics": data.topics, "qrels": data.qrels, "corpus": data.corpus}
    method, extra = "binary", []
    if which in ("topics", "qrels", "corpus"):
        files[which] = bad
    elif which == "jsonl":
        files["corpus"] = bad
    elif which == "run":
        extra = ["--pool", f"run:{bad}:10"]
    elif which == "pairs":
        method, extra = "pairwise", ["--pairs", str(bad)]
    argv = ["run", "--method", method, "--model", MODEL, "--base-url", DEAD_URL, "--no-progress"]
    argv += [
        "--topics",
        str(files["topics"]),
        "--qrels",
        str(files["qrels"]),
        "--corpus",
        str(files["corpus"]),
    ]
    return [*argv, *extra, "--output", str(tmp / "out"), "--cache", str(tmp / "cache.sqlite")]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_bad_file_is_exit_2_with_file_line_and_no_output(data, tmp_path, case):
    name, which, content, line, fragment = case
    suffix = {"jsonl": ".jsonl", "qrels": ".txt", "run": ".run"}.get(which, ".tsv")
    bad = tmp_path / f"bad-{name}{suffix}"
    bad.write_bytes(content)
    before = set(os.listdir(tmp_path))
    result = judge(*_argv(data, tmp_path, which, bad), env=ENV)
    assert result.returncode == EXIT_BAD_INPUT, result.output
    where = f"{bad}:{line}: " if line is not None else f"{bad}: "
    assert result.output.startswith(f"error: {where}"), result.output
    assert fragment in result.output, result.output
    assert "\n" not in result.output.strip()  # one line, no traceback
    assert set(os.listdir(tmp_path)) == before, "a bad input left a file behind"


@pytest.mark.slow
def test_the_real_command_exits_2_on_a_bad_run_file(data, tmp_path):
    bad = tmp_path / "bad.run"
    bad.write_bytes(b"q0 Q0 d0-0 1 9.5 sys\nq9 Q0 d0-1 1 9.0 sys\n")
    proc = cli(_argv(data, tmp_path, "run", bad), tmp_path)
    assert proc.returncode == EXIT_BAD_INPUT, proc.stderr
    assert proc.stderr.strip() == f"error: {bad}:2: topic 'q9' is not among the topics"
    assert not (tmp_path / "out").exists() and not (tmp_path / "cache.sqlite").exists()


def test_a_missing_input_file_is_exit_2(data, tmp_path):
    argv = _argv(data, tmp_path, "qrels", tmp_path / "nope.txt")
    result = judge(*argv, env=ENV)
    assert (
        result.returncode == EXIT_BAD_INPUT
        and result.output == f"error: {tmp_path / 'nope.txt'}: file not found\n"
    )
    assert not (tmp_path / "out").exists()


def test_a_damaged_judgments_file_in_the_run_directory_is_exit_2(data, tmp_path):
    """Resuming onto a judgments file damaged in the middle (not just a torn last line) stops
    with file:line instead of guessing."""
    from reljudge.testing import MockLLMServer

    with MockLLMServer() as srv:
        argv = _argv(data, tmp_path, "none", tmp_path / "unused")
        argv[argv.index(DEAD_URL)] = srv.openai_url
        result = judge(*argv, env=ENV)
        assert result.returncode == 0, result.output
        path = tmp_path / "out" / "judgments.jsonl"
        lines = path.read_text().splitlines(keepends=True)
        lines[3] = lines[3][:20] + "\n"
        path.write_text("".join(lines))
        srv.reset()
        result = judge(*argv, env=ENV)
        assert result.returncode == EXIT_BAD_INPUT and result.output.startswith(
            f"error: {path}:4: not valid JSON"
        ), result.output
        assert srv.calls == 0
