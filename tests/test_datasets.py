"""Datasets: the bundled sample, the shared collections, directories and explicit files."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from _cli import judge
from reljudge import load_dataset
from reljudge.datasets import DATA_DIR_ENV, KNOWN_DATASETS, bundled_path, list_datasets
from reljudge.errors import InputError
from reljudge.io.trec import read_qrels
from reljudge.judges.exam.question_files import dataset_questions


def test_bundled_sample() -> None:
    ds = load_dataset("dl19-sample")
    assert ds.name == "dl19-sample"
    assert len(ds.topics) == 5 and len(ds.pairs()) == 684 and len(ds.corpus) == 682
    assert ds.corpus.missing(d for _, d in ds.pairs()) == []
    assert (ds.min_grade, ds.max_grade, ds.relevant_threshold) == (0, 3, 2)
    assert ds.is_relevant(2) and not ds.is_relevant(1)
    assert ds.runs() == {} and ds.runs_dir is None
    questions = dataset_questions(ds)
    assert set(questions) == set(ds.topics) and all(len(q) == 10 for q in questions.values())
    files = ds.llm_judgment_files()
    assert {"gpt-4o/binary", "gpt-4o/umbrela", "gpt-4o/exam-binary", "gpt-4o/preferences"} <= set(files)
    umbrela = read_qrels(files["gpt-4o/umbrela"])
    assert sum(len(d) for d in umbrela.values()) == 684
    assert "NIST" in (bundled_path() / "README.md").read_text() and "Microsoft" in ds.attribution


def test_sample_is_small() -> None:
    size = sum(p.stat().st_size for p in bundled_path().rglob("*") if p.is_file())
    assert size < 1_500_000


def test_sample_is_a_faithful_slice(shared_data: Path) -> None:
    """Every sample line is a line of the source files (nothing invented or altered)."""
    src = shared_data / "trec-dl19"
    for name in ("topics.tsv", "qrels.txt", "passages.tsv", "exam_questions.gpt-4o.tsv"):
        source = set((src / name).read_text(encoding="utf-8").splitlines())
        assert set((bundled_path() / name).read_text(encoding="utf-8").splitlines()) <= source, name
    for path in (bundled_path() / "llm-judgments" / "gpt-4o").glob("*.qrels"):
        source = set((shared_data / "llm-judgments" / "gpt-4o" / path.name).read_text().splitlines())
        assert set(path.read_text().splitlines()) <= source, path.name
    # all judged pairs of the chosen topics are there
    full = read_qrels(src / "qrels.txt")
    sample = load_dataset("dl19-sample").qrels
    assert all(sample[q] == full[q] for q in sample)


def test_make_sample_is_deterministic(shared_data: Path, tmp_path: Path) -> None:
    script = Path(__file__).resolve().parent.parent / "scripts" / "make_sample.py"
    subprocess.run(
        [sys.executable, str(script), "--shared", str(shared_data), "--out", str(tmp_path / "s")],
        check=True,
        capture_output=True,
    )
    for path in bundled_path().rglob("*"):
        if path.is_file():
            assert (tmp_path / "s" / path.relative_to(bundled_path())).read_bytes() == path.read_bytes(), path


@pytest.mark.shared
def test_shared_datasets(shared_data: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(DATA_DIR_ENV, str(shared_data))
    monkeypatch.chdir(tmp_path)  # so ../shared/data is not found by accident
    antique = load_dataset("antique")
    assert (antique.min_grade, antique.max_grade, antique.relevant_threshold) == (1, 4, 3)
    assert len(antique.topics) == 200 and len(antique.pairs()) == 6589
    assert antique.corpus.missing(d for _, d in antique.pairs()) == []
    dl21 = load_dataset("trec-dl21")
    assert len(dl21.run_files()) == 63
    dl19 = load_dataset("trec-dl19")
    assert len(dl19.llm_judgment_files()) == 12
    assert len(dataset_questions(dl19)) == 43


@pytest.mark.shared
@pytest.mark.slow
def test_shared_runs_strict(shared_data: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(DATA_DIR_ENV, str(shared_data))
    ds = load_dataset("trec-dl21")
    runs = ds.runs()
    assert len(runs) == 63
    assert all(set(run) <= set(ds.topics) for run in runs.values())


def test_named_dataset_not_found(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(DATA_DIR_ENV, str(tmp_path / "nowhere"))
    monkeypatch.chdir(tmp_path)
    with pytest.raises(InputError, match=f"dataset 'trec-dl20' not found.*{DATA_DIR_ENV}"):
        load_dataset("trec-dl20")
    entries = {e["name"]: e for e in list_datasets()}
    assert entries["dl19-sample"]["available"] and not entries["antique"]["available"]


def test_unknown_name_lists_known() -> None:
    with pytest.raises(InputError) as info:
        load_dataset("msmarco-full")
    for name in KNOWN_DATASETS:
        assert name in str(info.value)


def make_dir(tmp_path: Path, **extra: str) -> Path:
    d = tmp_path / "mine"
    d.mkdir()
    (d / "topics.tsv").write_text("1\tfirst query\n2\tsecond query\n")
    (d / "qrels.txt").write_text("1 0 a 1\n1 0 b 0\n2 0 c 1\n")
    (d / "corpus.jsonl").write_text(
        '{"id": "a", "text": "A"}\n{"id": "b", "text": "B"}\n{"id": "c", "text": "C"}\n'
    )
    for name, text in extra.items():
        (d / name).write_text(text)
    return d


def test_directory_dataset_defaults(tmp_path: Path) -> None:
    ds = load_dataset(make_dir(tmp_path))
    assert ds.name == "mine" and ds.corpus["c"] == "C"
    assert (ds.min_grade, ds.max_grade, ds.relevant_threshold) == (0, 1, 1)  # binary qrels
    assert ds.pairs() == [("1", "a"), ("1", "b"), ("2", "c")]


def test_directory_dataset_metadata_and_runs(tmp_path: Path) -> None:
    d = make_dir(
        tmp_path, **{"dataset.json": json.dumps({"name": "x", "relevant_threshold": 1, "min_grade": 0})}
    )
    (d / "runs").mkdir()
    (d / "runs" / "bm25.run").write_text("1 Q0 a 1 3.0 bm25\n2 Q0 c 1 2.0 bm25\n")
    ds = load_dataset(d)
    assert ds.name == "x" and list(ds.runs()) == ["bm25"]
    (d / "runs" / "bad.run").write_text("1 Q0 a 1 3.0 bad\n9 Q0 c 1 2.0 bad\n")
    with pytest.raises(InputError) as info:
        ds.runs()
    assert info.value.line == 2 and "'9'" in info.value.message
    assert set(ds.runs(strict=False)) == {"bm25", "bad"}


def test_explicit_files_override(tmp_path: Path) -> None:
    d = make_dir(tmp_path)
    other = tmp_path / "q2.txt"
    other.write_text("1 0 a 3\n")
    ds = load_dataset(d, qrels=other)
    assert ds.qrels == {"1": {"a": 3}}
    only = load_dataset(topics=d / "topics.tsv", corpus=d / "corpus.jsonl")
    assert only.name == "custom" and not only.has_qrels
    with pytest.raises(InputError, match="no qrels"):
        _ = only.qrels
    with pytest.raises(InputError, match="no topics"):
        load_dataset(qrels=other)


def test_dataset_given_a_file(tmp_path: Path) -> None:
    d = make_dir(tmp_path)
    with pytest.raises(InputError, match="got a file"):
        load_dataset(d / "topics.tsv")


def test_grade_counts_of_a_directory_dataset(tmp_path: Path) -> None:
    d = make_dir(tmp_path, **{"dataset.json": json.dumps({"min_grade": 0, "max_grade": 3})})
    (d / "qrels.txt").write_text("1 0 a 3\n1 0 b 0\n1 0 c 0\n2 0 a 1\n")
    counts = load_dataset(d).grade_counts()
    assert counts["judged_topics"] == 2
    assert [(g["grade"], g["count"]) for g in counts["per_grade"]] == [(0, 2), (1, 1), (2, 0), (3, 1)]


def test_datasets_grades_command(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:

    monkeypatch.setenv(DATA_DIR_ENV, str(tmp_path / "nowhere"))
    monkeypatch.chdir(tmp_path)
    qrels = read_qrels(bundled_path() / "qrels.txt")
    expected = {g: sum(1 for docs in qrels.values() for v in docs.values() if v == g) for g in range(4)}
    res = judge("datasets", "--grades", "--json")
    assert res.returncode == 0, res.output
    entry = {e["name"]: e for e in json.loads(res.stdout)}["dl19-sample"]
    assert entry["judged_topics"] == len(qrels)
    assert {g["grade"]: g["count"] for g in entry["per_grade"]} == expected
    assert entry["per_grade"][3]["label"] == "perfectly relevant"
    table = judge("datasets", "--grades").stdout
    assert "| dl19-sample | 5 | " + " | ".join(f"{expected[g]:,}" for g in range(4)) in table


@pytest.mark.shared
def test_shared_grade_counts_match_table_4_2(shared_data: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Spec S10: the per-grade counts of Table 4.2 (the thesis's three typos corrected)."""
    monkeypatch.setenv(DATA_DIR_ENV, str(shared_data))
    expected = {
        "trec-dl19": (43, {0: 5158, 1: 1601, 2: 1804, 3: 697}),
        "trec-dl20": (54, {0: 7780, 1: 1940, 2: 1020, 3: 646}),
        "trec-dl21": (53, {0: 4338, 1: 3063, 2: 2341, 3: 1086}),
        "antique": (200, {1: 1642, 2: 2417, 3: 1196, 4: 1334}),
    }
    for name, (topics, per_grade) in expected.items():
        counts = load_dataset(name).grade_counts()
        assert counts["judged_topics"] == topics, name
        assert {g["grade"]: g["count"] for g in counts["per_grade"]} == per_grade, name
