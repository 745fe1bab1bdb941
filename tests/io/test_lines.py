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


BOM = b"\xef\xbb\xbf"


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("gz", [False, True])
def test_a_utf8_bom_is_not_part_of_the_first_line(tmp_path: Path, stream: bool, gz: bool) -> None:
    path = tmp_path / ("a.txt.gz" if gz else "a.txt")
    data = BOM + b"19335\tanthropological definition of environment\n47923\taxon\n"
    path.write_bytes(gzip.compress(data) if gz else data)
    assert list(read_lines(path, stream=stream))[:2] == [
        (1, "19335\tanthropological definition of environment"),
        (2, "47923\taxon"),
    ]


def test_every_input_reader_ignores_a_bom(tmp_path: Path) -> None:
    from reljudge.io.corpus import load_corpus
    from reljudge.io.pairs import read_pairs
    from reljudge.io.trec import read_qrels, read_run, read_topics

    def write(name: str, text: str) -> Path:
        path = tmp_path / name
        path.write_bytes(BOM + text.encode())
        return path

    assert list(read_topics(write("topics.tsv", "1\tq one\n2\tq two\n"))) == ["1", "2"]
    assert read_qrels(write("qrels.txt", "1 0 d1 2\n1 0 d2 0\n")) == {"1": {"d1": 2, "d2": 0}}
    assert list(read_run(write("run.txt", "1 Q0 d1 1 9.0 r\n1 Q0 d2 2 8.0 r\n"))["1"]) == ["d1", "d2"]
    assert dict(load_corpus(write("p.tsv", "d1\tone\nd2\ttwo\n"))) == {"d1": "one", "d2": "two"}
    jsonl = write("c.jsonl", '{"docid": "d1", "text": "one"}\n{"docid": "d2", "text": "two"}\n')
    assert dict(load_corpus(jsonl, docids={"d1"})) == {"d1": "one"}
    pairs, _ = read_pairs(write("pairs.txt", "1 d1 d2\n1 d2 d3\n"))
    assert pairs == {"1": [("d1", "d2"), ("d2", "d3")]}


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("damage", ["crc", "truncated", "body"])
def test_a_corrupt_gzip_body_is_an_input_error(tmp_path: Path, stream: bool, damage: str) -> None:
    packed = gzip.compress(
        "".join(f"d{i}\tpassage number {i} with some words\n" for i in range(3000)).encode()
    )
    if damage == "crc":  # the CRC-32 in the trailer does not match the data
        raw = packed[:-8] + bytes([packed[-8] ^ 1]) + packed[-7:]
    elif damage == "truncated":  # the stream ends before its end marker
        raw = packed[: len(packed) // 2]
    else:  # bytes flipped inside the deflate stream
        raw = packed[:200] + bytes(b ^ 0xFF for b in packed[200:260]) + packed[260:]
    path = tmp_path / "p.tsv.gz"
    path.write_bytes(raw)
    with pytest.raises(InputError, match="cannot read") as err:
        list(read_lines(path, stream=stream))
    assert err.value.path == str(path)
