"""``judge histogram``, ``judge pool-bias`` and ``judge sparsify`` end to end on a small synthetic
collection: the files they write, and bad input as one ``error: FILE:LINE: ...`` line, exit 2,
nothing written."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from _cli import judge

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture()
def collection(tmp_path: Path) -> Path:
    qrels, runs = [], tmp_path / "runs"
    runs.mkdir()
    for q in range(6):
        qrels += [f"q{q} 0 r{i} {2 if i < 4 else 0}" for i in range(8)]
    for s in range(6):
        lines = []
        for q in range(6):
            order = [f"r{(i + s + q) % 8}" for i in range(8)] + [f"u{s}{i}" for i in range(3)]
            lines += [f"q{q} Q0 {d} {i + 1} {20 - i} sys{s}" for i, d in enumerate(order)]
        (runs / f"sys{s}.run").write_text("\n".join(lines) + "\n")
    (tmp_path / "qrels.txt").write_text("\n".join(qrels) + "\n")
    info = [f"sys{s}\tg{s // 2}\t{'neural' if s % 2 else 'trad'}" for s in range(6)]
    (tmp_path / "types.tsv").write_text("# a comment\n" + "\n".join(info) + "\n")
    return tmp_path


@pytest.mark.slow
def test_the_three_commands_write_json_and_csv(collection: Path):
    proc = judge(
        "histogram", "--qrels", "qrels.txt", "--runs", "runs", "--bins", "5", "--out", "h", cwd=collection
    )
    assert proc.returncode == 0, proc.stderr
    data = json.loads((collection / "h" / "do_hsa.json").read_text())
    assert data["settings"]["bins"] == 5 and set(data["systems"]) == {f"sys{s}" for s in range(6)}
    corr = list(csv.DictReader((collection / "h" / "correlations.csv").open()))
    assert {r["metric"] for r in corr} == {"DO", "HSA"} and "pearson_p" in corr[0]

    proc = judge(
        "pool-bias",
        "--qrels",
        "qrels.txt",
        "--runs",
        "runs",
        "--run-info",
        "types.tsv",
        "--reps",
        "3",
        "--out",
        "p",
        cwd=collection,
    )
    assert proc.returncode == 0, proc.stderr
    taus = list(csv.DictReader((collection / "p" / "taus.csv").open()))
    assert {(r["pool_type"], r["test"]) for r in taus} >= {
        ("trad", "neural"),
        ("neural", "trad"),
        ("trad", "all"),
    }
    assert (collection / "p" / "relevant_found.csv").exists()

    proc = judge(
        "sparsify",
        "--qrels",
        "qrels.txt",
        "--runs",
        "runs",
        "--n",
        "1,2",
        "--repeats",
        "2",
        "--out",
        "s",
        cwd=collection,
    )
    assert proc.returncode == 0, proc.stderr
    rows = list(csv.DictReader((collection / "s" / "sparsified_ndcg.csv").open()))
    assert [r["n"] for r in rows] == ["1", "2"]


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("sys0\tg0\n", "types.tsv:1: expected 3 columns 'run<TAB>group<TAB>type', found 2"),
        ("sys0\tg0\ttrad\nsys0\tg0\ttrad\n", "types.tsv:2: run 'sys0' is listed twice"),
        ("# nothing\n", "types.tsv: no runs in the run-type file"),
    ],
)
@pytest.mark.slow
def test_a_malformed_run_type_file_is_file_line_exit_2(collection: Path, content: str, expected: str):
    (collection / "types.tsv").write_text(content)
    proc = judge(
        "pool-bias",
        "--qrels",
        "qrels.txt",
        "--runs",
        "runs",
        "--run-info",
        "types.tsv",
        "--out",
        "p",
        cwd=collection,
    )
    assert proc.returncode == 2
    assert proc.stderr.strip() == f"error: {expected}"
    assert not (collection / "p").exists()


@pytest.mark.slow
def test_missing_run_and_lonely_type_are_clear_errors(collection: Path):
    (collection / "types.tsv").write_text("".join(f"sys{s}\tg\tt{s % 2}\n" for s in range(5)))
    proc = judge(
        "pool-bias", "--qrels", "qrels.txt", "--runs", "runs", "--run-info", "types.tsv", cwd=collection
    )
    assert proc.returncode == 2 and "1 run(s) missing from the run-type file: sys5" in proc.stderr
    (collection / "types.tsv").write_text("".join(f"sys{s}\tg\t{'x' if s == 0 else 'y'}\n" for s in range(6)))
    proc = judge(
        "pool-bias", "--qrels", "qrels.txt", "--runs", "runs", "--run-info", "types.tsv", cwd=collection
    )
    assert proc.returncode == 2 and "type 'x' has 1 run" in proc.stderr


@pytest.mark.slow
def test_bad_files_and_options(collection: Path):
    (collection / "bad.txt").write_text("q0 0 r1 2\nq0 0 r2\n")
    proc = judge("histogram", "--qrels", "bad.txt", "--runs", "runs", "--out", "h", cwd=collection)
    assert proc.returncode == 2 and proc.stderr.startswith("error: bad.txt:2: expected 4 columns")
    proc = judge("histogram", "--qrels", "qrels.txt", "--runs", "runs", "--nonrel", "some", cwd=collection)
    assert proc.returncode == 2 and "--nonrel must be" in proc.stderr
    (collection / "scores.txt").write_text("sysA q0 r1 0.5\nsysA q0 r2 high\n")
    proc = judge(
        "histogram", "--qrels", "qrels.txt", "--scores", "scores.txt", "--values", "score", cwd=collection
    )
    assert proc.returncode == 2 and proc.stderr.strip() == "error: scores.txt:2: score 'high' is not a number"
    proc = judge("sparsify", "--qrels", "qrels.txt", "--runs", "runs", "--n", "0,a", cwd=collection)
    assert proc.returncode == 2 and "--n takes" in proc.stderr
    proc = judge("sparsify", "--qrels", "qrels.txt", "--runs", "runs", "--keep", "every", cwd=collection)
    assert proc.returncode == 2 and "--keep must be one of none, nonrelevant" in proc.stderr
    assert not any((collection / d).exists() for d in ("h", "sparsify", "histogram"))


@pytest.mark.slow
def test_a_topic_without_relevant_documents_is_stated(collection: Path):
    (collection / "qrels.txt").write_text((collection / "qrels.txt").read_text() + "q9 0 r1 0\nq9 0 r2 1\n")
    proc = judge("histogram", "--qrels", "qrels.txt", "--runs", "runs", "--out", "h", cwd=collection)
    assert proc.returncode == 0, proc.stderr
    assert "1 topic(s) without a relevant judgment skipped" in proc.stdout
    data = json.loads((collection / "h" / "do_hsa.json").read_text())
    assert data["settings"]["topics_without_relevant"] == ["q9"]
    proc = judge("sparsify", "--qrels", "qrels.txt", "--runs", "runs", "--out", "s", cwd=collection)
    assert proc.returncode == 0 and "1 topic(s) without a relevant judgment" in proc.stdout
