"""Passage collections: TSV and JSONL, hostile lines, missing docids."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from reljudge.datasets import bundled_path
from reljudge.errors import InputError
from reljudge.io.corpus import Corpus, MissingDocumentError, load_corpus
from reljudge.io.trec import read_qrels


def write(tmp_path: Path, name: str, data: str | bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    return path


def test_sample_corpus_covers_qrels() -> None:
    corpus = load_corpus(bundled_path() / "passages.tsv")
    qrels = read_qrels(bundled_path() / "qrels.txt")
    assert isinstance(corpus, Corpus)
    assert len(corpus) == 682
    assert corpus.missing(d for docs in qrels.values() for d in docs) == []
    assert all(text.strip() for text in corpus.values())


@pytest.mark.shared
def test_shared_corpora_cover_qrels(shared_data: Path) -> None:
    for name in ("trec-dl19", "antique"):
        corpus = load_corpus(shared_data / name / "passages.tsv")
        qrels = read_qrels(shared_data / name / "qrels.txt")
        assert corpus.missing(d for docs in qrels.values() for d in docs) == []


def test_tsv_text_may_hold_tabs(tmp_path: Path) -> None:
    corpus = load_corpus(write(tmp_path, "p.tsv", "d1\tone\ttwo\r\n\nd2\t  three \n"))
    assert dict(corpus) == {"d1": "one\ttwo", "d2": "three"}


def test_jsonl_fields_and_title(tmp_path: Path) -> None:
    lines = [
        {"docid": "a", "text": "alpha"},
        {"id": "b", "contents": "beta"},
        {"_id": "c", "title": "Gamma", "text": "body"},
        {"doc_id": 7, "passage": "seven"},
    ]
    path = write(tmp_path, "c.jsonl", "".join(json.dumps(x) + "\n" for x in lines))
    corpus = load_corpus(path)
    assert corpus["a"] == "alpha" and corpus["b"] == "beta" and corpus["7"] == "seven"
    assert corpus["c"] == "Gamma\nbody"


def test_gzipped_jsonl(tmp_path: Path) -> None:
    path = write(tmp_path, "c.jsonl.gz", gzip.compress(b'{"id": "a", "text": "x"}\n'))
    assert dict(load_corpus(path)) == {"a": "x"}


def test_filter_docids(tmp_path: Path) -> None:
    corpus = load_corpus(write(tmp_path, "p.tsv", "a\t1\nb\t2\nc\t3\n"), docids={"b", "zz"})
    assert dict(corpus) == {"b": "2"}


def test_missing_docid_error(tmp_path: Path) -> None:
    path = write(tmp_path, "p.tsv", "a\t1\n")
    corpus = load_corpus(path)
    with pytest.raises(MissingDocumentError) as info:
        corpus["nope"]
    assert isinstance(info.value, KeyError) and isinstance(info.value, InputError)
    assert "'nope'" in str(info.value) and str(path) in str(info.value)
    assert corpus.get("nope") is None
    assert "nope" not in corpus
    assert corpus.missing(["a", "x", "y", "x"]) == ["x", "y"]
    with pytest.raises(InputError, match="2 document"):
        corpus.require(["a", "x", "y"])


@pytest.mark.parametrize(
    ("name", "data", "line", "fragment"),
    [
        ("p.tsv", "a\t1\nno tab here\n", 2, "no tab"),
        ("p.tsv", "a\t1\n\t2\n", 2, "empty document id"),
        ("p.tsv", "a\t1\nb\t2\na\tother\n", 3, "different text"),
        ("p.tsv", b"a\t1\nb\t\xc3\x28\n", 2, "UTF-8"),
        ("c.jsonl", '{"id": "a", "text": "x"}\n{"id": "b", "text": \n', 2, "not valid JSON"),
        ("c.jsonl", '["a", "x"]\n', 1, "JSON object"),
        ("c.jsonl", '{"name": "a", "text": "x"}\n', 1, "no document id"),
        ("c.jsonl", '{"id": "a", "title": "x"}\n', 1, "no text field"),
        ("c.jsonl", '{"id": "", "text": "x"}\n', 1, "non-empty"),
        ("c.jsonl", '{"id": "a", "text": 5}\n', 1, "must be a string"),
    ],
)
def test_hostile_corpus(tmp_path: Path, name: str, data: str | bytes, line: int, fragment: str) -> None:
    path = write(tmp_path, name, data)
    with pytest.raises(InputError) as info:
        load_corpus(path)
    assert info.value.line == line
    assert fragment in info.value.message
    assert str(info.value).startswith(f"{path}:{line}:")


def test_exact_duplicate_is_kept_once(tmp_path: Path) -> None:
    # the TREC DL passages.tsv repeats a passage once per judged pair
    corpus = load_corpus(write(tmp_path, "p.tsv", "a\tsame\nb\t2\na\tsame\n"))
    assert dict(corpus) == {"a": "same", "b": "2"}


@pytest.mark.parametrize("data", ["", "\n \n"])
def test_empty_corpus(tmp_path: Path, data: str) -> None:
    with pytest.raises(InputError, match="empty"):
        load_corpus(write(tmp_path, "p.tsv", data))


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="not found"):
        load_corpus(tmp_path / "none.tsv")
