"""TREC readers on real data and on hostile input: every bad file names file:line."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from reljudge.datasets import bundled_path
from reljudge.errors import InputError
from reljudge.io.trec import read_qrels, read_run, read_topics, write_qrels, write_run

SAMPLE = bundled_path()


def write(tmp_path: Path, name: str, data: str | bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    return path


def expect_error(func, path: Path, line: int | None, fragment: str) -> InputError:
    with pytest.raises(InputError) as info:
        func(path)
    err = info.value
    assert err.path == str(path)
    assert err.line == line
    assert fragment in err.message
    expected = f"{path}:{line}:" if line is not None else f"{path}:"
    assert str(err).startswith(expected)
    return err


# --- the real files ---------------------------------------------------------------------


def test_sample_files_read() -> None:
    topics = read_topics(SAMPLE / "topics.tsv")
    qrels = read_qrels(SAMPLE / "qrels.txt", integer_grades=True)
    assert len(topics) == 5
    assert set(qrels) == set(topics)
    assert sum(len(d) for d in qrels.values()) == 684
    assert {g for d in qrels.values() for g in d.values()} == {0, 1, 2, 3}


def test_float_llm_judgments_read_as_float() -> None:
    qrels = read_qrels(SAMPLE / "llm-judgments/gpt-4o/exam-binary.dl19.qrels")
    values = [g for d in qrels.values() for g in d.values()]
    assert any(isinstance(v, float) and not v.is_integer() for v in values)
    assert all(0.0 <= v <= 1.0 for v in values)
    with pytest.raises(InputError, match="not an integer"):
        read_qrels(SAMPLE / "llm-judgments/gpt-4o/exam-binary.dl19.qrels", integer_grades=True)


@pytest.mark.shared
def test_shared_collections(shared_data: Path) -> None:
    counts = {
        "trec-dl19": (43, 9260),
        "trec-dl20": (54, 11386),
        "trec-dl21": (53, 10828),
        "antique": (200, 6589),
    }
    for name, (n_topics, n_pairs) in counts.items():
        topics = read_topics(shared_data / name / "topics.tsv")
        qrels = read_qrels(shared_data / name / "qrels.txt", integer_grades=True)
        assert len(topics) == n_topics
        assert sum(len(d) for d in qrels.values()) == n_pairs
        assert set(qrels) <= set(topics)
    antique = read_qrels(shared_data / "antique" / "qrels.txt")
    assert {g for d in antique.values() for g in d.values()} == {1, 2, 3, 4}


@pytest.mark.shared
def test_shared_gzip_run(shared_data: Path) -> None:
    path = sorted((shared_data / "trec-dl21" / "runs").glob("*.run.gz"))[0]
    topics = read_topics(shared_data / "trec-dl21" / "topics.tsv")
    run = read_run(path, topics=topics)
    assert run.name
    assert set(run) <= set(topics)
    qid = next(iter(run))
    ranked = run.ranked(qid)
    scores = [run[qid][d] for d in ranked]
    assert scores == sorted(scores, reverse=True)


@pytest.mark.shared
def test_shared_nugget_files_are_cumulative(shared_data: Path) -> None:
    """A documented quirk: the dl20 nugget file also holds the 43 DL19 topics."""
    dl19 = read_topics(shared_data / "trec-dl19" / "topics.tsv")
    nuggets = read_qrels(shared_data / "llm-judgments/gpt-4o/nuggets-all.dl20.qrels")
    assert set(dl19) <= set(nuggets)


# --- hostile qrels ------------------------------------------------------------------------


def test_qrels_truncated_line(tmp_path: Path) -> None:
    path = write(tmp_path, "q.txt", "1 0 d1 1\n1 0 d2\n")
    expect_error(read_qrels, path, 2, "expected 4 columns")


def test_qrels_too_many_columns(tmp_path: Path) -> None:
    path = write(tmp_path, "q.txt", "1 0 d1 1\n1 0 d2 1 extra\n")
    expect_error(read_qrels, path, 2, "found 5")


def test_qrels_non_numeric_grade(tmp_path: Path) -> None:
    path = write(tmp_path, "q.txt", "1 0 d1 1\n\n1 0 d2 high\n")
    expect_error(read_qrels, path, 3, "'high' is not a number")


def test_qrels_nan_grade(tmp_path: Path) -> None:
    path = write(tmp_path, "q.txt", "1 0 d1 nan\n")
    expect_error(read_qrels, path, 1, "not a finite number")


def test_qrels_duplicate_pair(tmp_path: Path) -> None:
    path = write(tmp_path, "q.txt", "1 0 d1 1\n1 0 d2 0\n1 0 d1 2\n")
    expect_error(read_qrels, path, 3, "duplicate judgment")
    assert read_qrels(path, on_duplicate="max")["1"]["d1"] == 2
    assert read_qrels(path, on_duplicate="last")["1"]["d1"] == 2


def test_qrels_not_utf8(tmp_path: Path) -> None:
    path = write(tmp_path, "q.txt", b"1 0 d1 1\n1 0 d\xff2 1\n")
    expect_error(read_qrels, path, 2, "not valid UTF-8")


@pytest.mark.parametrize("data", ["", "\n\n  \n"])
def test_qrels_empty(tmp_path: Path, data: str) -> None:
    path = write(tmp_path, "q.txt", data)
    expect_error(read_qrels, path, None, "empty")


def test_qrels_missing_file(tmp_path: Path) -> None:
    expect_error(read_qrels, tmp_path / "nope.txt", None, "not found")


def test_qrels_tolerates_layout(tmp_path: Path) -> None:
    path = write(tmp_path, "q.txt", "1\t0  d1 1\r\n\n2 Q0 d2 0.5   \r\n")
    assert read_qrels(path) == {"1": {"d1": 1}, "2": {"d2": 0.5}}


# --- hostile topics ---------------------------------------------------------------------


def test_topics_duplicate_id(tmp_path: Path) -> None:
    path = write(tmp_path, "t.tsv", "1\tfirst\n2\tsecond\n1\tagain\n")
    expect_error(read_topics, path, 3, "duplicate topic id")


def test_topics_missing_query(tmp_path: Path) -> None:
    path = write(tmp_path, "t.tsv", "1\tfirst\n2\t  \n")
    expect_error(read_topics, path, 2, "non-empty")


def test_topics_single_column(tmp_path: Path) -> None:
    path = write(tmp_path, "t.tsv", "1\tfirst\nlonely\n")
    expect_error(read_topics, path, 2, "qid<TAB>query")


def test_topics_not_utf8(tmp_path: Path) -> None:
    path = write(tmp_path, "t.tsv", b"1\tfirst\n2\tcaf\xe9\n")
    expect_error(read_topics, path, 2, "UTF-8")


# --- hostile runs ---------------------------------------------------------------------------


def test_run_wrong_columns(tmp_path: Path) -> None:
    path = write(tmp_path, "r.txt", "1 Q0 d1 1 2.0 sys\n1 Q0 d2 2 1.0\n")
    expect_error(read_run, path, 2, "expected 6 columns")


def test_run_bad_rank_and_score(tmp_path: Path) -> None:
    path = write(tmp_path, "r.txt", "1 Q0 d1 first 2.0 sys\n")
    expect_error(read_run, path, 1, "rank 'first'")
    path = write(tmp_path, "r2.txt", "1 Q0 d1 1 2.0 sys\n1 Q0 d2 2 x sys\n")
    expect_error(read_run, path, 2, "score 'x'")


def test_run_duplicate_doc(tmp_path: Path) -> None:
    path = write(tmp_path, "r.txt", "1 Q0 d1 1 2.0 sys\n1 Q0 d1 2 1.0 sys\n")
    expect_error(read_run, path, 2, "appears twice")


def test_run_unknown_topic(tmp_path: Path) -> None:
    path = write(tmp_path, "r.txt", "1 Q0 d1 1 2.0 sys\n99 Q0 d1 1 2.0 sys\n")
    with pytest.raises(InputError) as info:
        read_run(path, topics=["1", "2"])
    assert (info.value.line, "'99'" in info.value.message) == (2, True)
    assert read_run(path).name == "sys"  # without topics, any qid is fine


def test_run_truncated_gzip(tmp_path: Path) -> None:
    data = gzip.compress(b"1 Q0 d1 1 2.0 sys\n" * 200)
    path = write(tmp_path, "r.run.gz", data[: len(data) // 2])
    expect_error(read_run, path, None, "cannot read")


def test_run_ranked_order_and_roundtrip(tmp_path: Path) -> None:
    path = write(tmp_path, "r.txt", "1 Q0 a 1 1.0 s\n1 Q0 b 2 3.0 s\n1 Q0 c 3 1.0 s\n")
    run = read_run(path)
    assert run.ranked("1") == ["b", "c", "a"]  # ties by docid descending, as trec_eval does
    write_run(run, tmp_path / "out.txt")
    again = read_run(tmp_path / "out.txt")
    assert again == run and again.name == "s"


def test_write_qrels_roundtrip_keeps_floats(tmp_path: Path) -> None:
    qrels = {"1": {"a": 2, "b": 0.25, "c": 1.0}}
    write_qrels(qrels, tmp_path / "q.txt")
    assert read_qrels(tmp_path / "q.txt") == {"1": {"a": 2, "b": 0.25, "c": 1}}
