"""The shared line reader (`reljudge.io.lines`) and the shared run-directory reader."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from reljudge.errors import InputError
from reljudge.io.lines import is_jsonl_name, read_lines
from reljudge.io.trec import _lines, read_runs_dir


@pytest.mark.parametrize("stream", [False, True])
def test_both_modes_give_the_same_lines_and_errors(tmp_path: Path, stream: bool) -> None:
    plain = tmp_path / "a.txt"
    plain.write_bytes(b"one\r\ntwo\n\nthree")
    packed = tmp_path / "a.txt.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    expected = [(1, "one"), (2, "two"), (3, ""), (4, "three")]
    assert list(read_lines(plain, stream=stream)) == expected
    assert list(read_lines(packed, stream=stream)) == expected
    cases = {
        tmp_path / "missing": "file not found",
        tmp_path: "is a directory, expected a file",
    }
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"ok\n\xff\n")
    empty = tmp_path / "empty.txt"
    empty.write_bytes(b" \n\n")
    broken = tmp_path / "broken.gz"
    broken.write_bytes(b"not gzip")
    for path, message in cases.items():
        with pytest.raises(InputError, match=message):
            list(read_lines(path, stream=stream))
    with pytest.raises(InputError, match="not valid UTF-8") as err:
        list(read_lines(bad, stream=stream))
    assert err.value.line == 2
    with pytest.raises(InputError, match="file is empty"):
        list(read_lines(empty, stream=stream))
    with pytest.raises(InputError, match="cannot read"):
        list(read_lines(broken, stream=stream))
    assert _lines is read_lines  # the former private name still works


def test_is_jsonl_name() -> None:
    assert all(is_jsonl_name(n) for n in ("c.jsonl", "c.json.gz", "c.ndjson"))
    assert not any(is_jsonl_name(n) for n in ("c.tsv", "c.tsv.gz", "jsonl"))


def _run(path: Path, runid: str, qid: str = "1") -> None:
    path.write_text(f"{qid} Q0 d1 1 2.0 {runid}\n{qid} Q0 d2 2 1.0 {runid}\n")


def test_read_runs_dir_names_and_errors(tmp_path: Path) -> None:
    _run(tmp_path / "bm25.run", "bm25")
    _run(tmp_path / "other.txt", "bm25")  # runid taken: named after its file
    (tmp_path / ".hidden").write_text("junk")
    runs = read_runs_dir(tmp_path)
    assert list(runs) == ["bm25", "other"]
    assert runs["bm25"]["1"] == {"d1": 2.0, "d2": 1.0}
    (tmp_path / "other.run.gz").write_bytes(gzip.compress(b"1 Q0 d1 1 2.0 bm25\n"))  # "other" again
    with pytest.raises(InputError, match="two runs are named 'other'"):
        read_runs_dir(tmp_path)
    with pytest.raises(InputError, match="directory of TREC run files"):
        read_runs_dir(tmp_path / "bm25.run")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(InputError, match="no run files"):
        read_runs_dir(empty)
    strict = tmp_path / "strict"
    strict.mkdir()
    _run(strict / "r.run", "r", qid="9")
    with pytest.raises(InputError, match="topic '9' is not among the topics") as err:
        read_runs_dir(strict, topics=["1"])
    assert err.value.line == 1
