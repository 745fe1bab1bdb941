"""The corpus index (`reljudge.io.corpus_index`): passages read through it are the passages a
full streamed read gives, with the same errors; it is built once, reused, and built again when
the collection changes."""

from __future__ import annotations

import json
import os
import random

import pytest

from reljudge.errors import InputError
from reljudge.io import corpus_index
from reljudge.io.corpus import load_corpus
from reljudge.io.corpus_index import CorpusIndex, index_path


@pytest.fixture(autouse=True)
def small_index(tmp_path, monkeypatch):
    """Index every collection (however small), in a directory of the test's own."""
    monkeypatch.setattr(corpus_index, "MIN_INDEX_BYTES", 0)
    monkeypatch.setenv("RELJUDGE_INDEX_DIR", str(tmp_path / "index"))


def write_tsv(path, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    docids = [f"d{i}" for i in range(300)]
    lines = [f"{d}\tpassage {d}: {'word ' * rng.randint(0, 30)}\twith a tab é" for d in docids]
    lines.insert(10, "")  # blank lines are skipped
    lines.insert(50, lines[40])  # an exact repeat is kept once
    lines.append("d7\ta different text for d7")  # a conflicting repeat
    path.write_bytes(b"\xef\xbb\xbf" + "\r\n".join(lines).encode() + b"\r\n")
    return docids


def test_indexed_lookups_equal_the_streamed_read(tmp_path):
    path = tmp_path / "passages.tsv"
    docids = write_tsv(path)
    rng = random.Random(1)
    for _ in range(5):
        wanted = set(rng.sample(docids, 40)) - {"d7"} | {"not-there", "d0", docids[-1]}
        assert load_corpus(path, docids=wanted) == load_corpus(path, docids=wanted, index=False)
    assert index_path(path).exists()
    indexed = load_corpus(path, docids=["d0", "d299", "d40"])
    assert dict(indexed) == dict(load_corpus(path, docids=["d0", "d299", "d40"], index=False))
    assert indexed["d0"].startswith("passage d0")  # the byte order mark is not part of the docid


def test_jsonl_collection(tmp_path):
    path = tmp_path / "corpus.jsonl"
    rows = [{"docid": f"d{i}", "title": f"t{i}" if i % 2 else "", "text": f"body {i} ü"} for i in range(200)]
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    wanted = ["d3", "d150", "d0", "nope"]
    assert load_corpus(path, docids=wanted) == load_corpus(path, docids=wanted, index=False)


def test_a_conflicting_repeat_is_the_same_error_only_when_asked_for(tmp_path):
    path = tmp_path / "passages.tsv"
    write_tsv(path)
    with pytest.raises(InputError) as streamed:
        load_corpus(path, docids=["d7"], index=False)
    with pytest.raises(InputError) as indexed:
        load_corpus(path, docids=["d7"])
    assert str(indexed.value) == str(streamed.value)
    assert "d7" in str(indexed.value)
    assert len(load_corpus(path, docids=["d8"])) == 1  # not asked for: no error


def test_a_bad_line_is_reported_with_its_line_when_building(tmp_path):
    path = tmp_path / "passages.tsv"
    path.write_text("d1\tfine\nno tab on this line\nd2\tfine\n")
    with pytest.raises(InputError) as streamed:
        load_corpus(path, docids=["d1"], index=False)
    with pytest.raises(InputError) as indexed:
        load_corpus(path, docids=["d1"])
    assert str(indexed.value) == str(streamed.value)
    assert ":2:" in str(indexed.value) or "line 2" in str(indexed.value)
    assert not index_path(path).exists()  # nothing half-built is kept


def test_built_once_reused_and_rebuilt_when_the_collection_changes(tmp_path):
    path = tmp_path / "passages.tsv"
    write_tsv(path)
    load_corpus(path, docids=["d1"])
    built = index_path(path).stat().st_mtime_ns
    assert CorpusIndex.open(path, lambda *a: ("", ""), build=False) is not None  # current
    load_corpus(path, docids=["d2"])
    assert index_path(path).stat().st_mtime_ns == built  # reused, not rebuilt
    path.write_text("d1\tthe new text of d1\n")
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    assert CorpusIndex.open(path, lambda *a: ("", ""), build=False) is None  # stale
    assert dict(load_corpus(path, docids=["d1", "d2"])) == {"d1": "the new text of d1"}


def test_an_unwritable_index_directory_falls_back_to_streaming(tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("RELJUDGE_INDEX_DIR", str(blocker / "index"))
    path = tmp_path / "passages.tsv"
    write_tsv(path)
    assert load_corpus(path, docids=["d1", "d5"]) == load_corpus(path, docids=["d1", "d5"], index=False)


def test_gzipped_and_small_collections_are_not_indexed(tmp_path, monkeypatch):
    import gzip

    path = tmp_path / "passages.tsv.gz"
    path.write_bytes(gzip.compress(b"d1\tone\nd2\ttwo\n"))
    assert dict(load_corpus(path, docids=["d2"])) == {"d2": "two"}
    assert not index_path(path).exists()
    monkeypatch.setattr(corpus_index, "MIN_INDEX_BYTES", 10**9)
    plain = tmp_path / "small.tsv"
    plain.write_text("d1\tone\n")
    assert dict(load_corpus(plain, docids=["d1"])) == {"d1": "one"}
    assert not index_path(plain).exists()


def _edit_keeping_size_and_time(path, old: bytes, new: bytes) -> None:
    stat = path.stat()
    data = path.read_bytes()
    assert len(old) == len(new) and old in data
    path.write_bytes(data.replace(old, new))
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert path.stat().st_size == stat.st_size and path.stat().st_mtime_ns == stat.st_mtime_ns


# d1's text two bytes shorter, d2's two longer: every size and time the same, d2's line moved
GLUE = (b"d1\tfirst passage\nd2\tsecond\n", b"d1\tfirst passa\nd2\tsecond!!\n")


def test_an_edit_keeping_size_and_time_is_seen_by_the_fingerprint(tmp_path):
    path = tmp_path / "passages.tsv"
    path.write_bytes(GLUE[0] + b"d3\tthird\n")
    assert dict(load_corpus(path, docids=["d1"])) == {"d1": "first passage"}
    _edit_keeping_size_and_time(path, *GLUE)
    assert CorpusIndex.open(path, lambda *a: ("", ""), build=False) is None  # stale
    assert dict(load_corpus(path, docids=["d1", "d2"])) == {"d1": "first passa", "d2": "second!!"}


def test_an_edit_the_samples_miss_rebuilds_the_index_instead_of_gluing_lines(tmp_path, monkeypatch, caplog):
    # the fingerprint reads only the first and the last 8 bytes: the edit in between is unseen
    monkeypatch.setattr(corpus_index, "SAMPLES", 2)
    monkeypatch.setattr(corpus_index, "BLOCK", 8)
    path = tmp_path / "passages.tsv"
    path.write_bytes(b"d0\tthe start\n" + GLUE[0] + b"d3\tthe end\n")
    assert dict(load_corpus(path, docids=["d1", "d2"])) == {"d1": "first passage", "d2": "second"}
    _edit_keeping_size_and_time(path, *GLUE)
    assert CorpusIndex.open(path, lambda *a: ("", ""), build=False) is not None  # looks current
    with caplog.at_level("WARNING"):
        assert dict(load_corpus(path, docids=["d1"])) == {"d1": "first passa"}  # not "first passa\nd2"
        assert dict(load_corpus(path, docids=["d2", "d3"])) == {"d2": "second!!", "d3": "the end"}
    said = [r.getMessage() for r in caplog.records if "indexing it again" in r.getMessage()]
    assert len(said) == 1 and "line 2 is no longer" in said[0]
