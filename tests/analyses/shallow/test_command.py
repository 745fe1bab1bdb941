"""``judge shallow`` end to end on a small synthetic collection: the pairs files it writes are the
``--pairs`` input of ``judge run --method pairwise`` (dry run: both orders; a real run against the
project's mock LLM), the analysis reads the run directory, and bad input is a ``file:line`` error
(exit 2) or an explicit count of what was skipped. The DL21 figures of the README are checked
on the shared data."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pytest

from _cli import judge
from reljudge.errors import EXIT_BAD_INPUT
from reljudge.testing import MockLLMServer

ENV = {"OPENAI_API_KEY": "test-key"}


@pytest.fixture
def collection(tmp_path: Path) -> Path:
    """4 topics; q* = d1 of each; runs A, B, C with different top passages; C misses topic 4."""
    (tmp_path / "topics.tsv").write_text("".join(f"{q}\tquestion {q}\n" for q in "1234"))
    qrels = []
    passages = []
    for q in "1234":
        for d, g in (("d1", 2), ("d2", 1), ("d3", 0), ("d4", 0)):
            qrels.append(f"{q} 0 {q}{d} {g}\n")
            passages.append(f"{q}{d}\tpassage {d} of topic {q}\n")
    (tmp_path / "qrels.txt").write_text("".join(qrels))
    (tmp_path / "passages.tsv").write_text("".join(passages))
    runs = tmp_path / "runs"
    runs.mkdir()
    orders = {"A": ["d1", "d2", "d3"], "B": ["d2", "d1", "d4"], "C": ["d3", "d2", "d1"]}
    for name, order in orders.items():
        lines = [
            f"{q} Q0 {q}{d} {r} {10 - r} {name}\n"
            for q in "1234"
            if not (name == "C" and q == "4")
            for r, d in enumerate(order, start=1)
        ]
        (runs / f"{name}.run").write_text("".join(lines))
    return tmp_path


def data_args(c: Path) -> list[str]:
    return [
        "--topics",
        str(c / "topics.tsv"),
        "--qrels",
        str(c / "qrels.txt"),
        "--corpus",
        str(c / "passages.tsv"),
    ]


def test_pool_pairs_dry_run_states_both_orders(collection: Path):
    result = judge(
        "shallow", "pool", "--runs", str(collection / "runs"), "--qrels", str(collection / "qrels.txt"),
        "--out", str(collection / "pool"), "--relevant", "2", env=ENV,
    )  # fmt: skip
    assert result.returncode == 0, result.output
    report = json.loads((collection / "pool" / "pool.json").read_text())
    # pools: topics 1-3 {d1, d2, d3}; topic 4 {d1, d2} (C misses it): 3 + 3 + 3 + 1 pairs
    assert report["pool"]["histogram"] == {"2": 1, "3": 3}
    assert report["pairs"] == 10 and report["calls_both_orders"] == 20
    assert report["runs_missing_queries"] == {"C": 1}
    result = judge(
        "run", "--method", "pairwise", "--model", "openai/mock", *data_args(collection),
        "--pairs", str(collection / "pool" / "pairs.txt"), "--dry-run", env=ENV,
    )  # fmt: skip
    assert result.returncode == 0, result.output
    assert "LLM calls: 20" in result.output and "10 pairs x 2 orders" in result.output


@pytest.mark.slow
def test_full_pipeline_against_the_mock_llm(collection: Path):
    pool = collection / "pool"
    assert judge("shallow", "pool", "--runs", str(collection / "runs"), "--qrels", str(collection / "qrels.txt"),
                 "--out", str(pool), "--relevant", "2", env=ENV).returncode == 0  # fmt: skip
    with MockLLMServer() as srv:
        result = judge(
            "run", "--method", "pairwise", "--model", "openai/mock", "--base-url", srv.openai_url,
            *data_args(collection), "--pairs", str(pool / "pairs.txt"), "--no-cache",
            "--output", str(collection / "judged"), "--no-progress", env=ENV,
        )  # fmt: skip
        assert result.returncode == 0, result.output
        assert srv.calls == 20  # 10 pairs, both orders
    result = judge(
        "shallow", "tournament", "--pool", str(pool / "pool.tsv"), "--judged", str(collection / "judged"),
        "--out", str(collection / "t"), "--json", env=ENV,
    )  # fmt: skip
    assert result.returncode == 0, result.output
    report = json.loads(result.output)
    assert report["source_counts"]["records_used"] == 10 and report["source_counts"]["not_judged"] == 0
    t = report["tournament"]
    assert t["queries"] == 4 and t["single"] + t["cycle"] + t["tie"] == 4
    qrels_lines = (collection / "t" / "preference.qrels").read_text().splitlines()
    assert len(qrels_lines) == t["preference_qrels"] and all(line.endswith(" 1") for line in qrels_lines)
    rows = list(csv.reader((collection / "t" / "win-ratios.csv").open()))
    assert rows[0] == ["row", "qrels", "A", "B", "C"] and len(rows) == 6
    result = judge(
        "shallow", "leaderboard", "--pool", str(pool / "pool.tsv"), "--judged", str(collection / "judged"),
        "--runs", str(collection / "runs"), "--qrels", str(collection / "qrels.txt"), "--relevant", "2",
        "--out", str(collection / "t"), "--bootstrap", "50", "--plot", env=ENV,
    )  # fmt: skip
    assert result.returncode == 0, result.output
    pytest.importorskip("matplotlib")
    assert (collection / "t" / "leaderboard.png").read_bytes()[:4] == b"\x89PNG"
    board = json.loads((collection / "t" / "leaderboard.json").read_text())
    assert {r["run"] for r in board["leaderboard"]} == {"A", "B", "C"}
    by_run = {r["run"]: r for r in board["leaderboard"]}
    assert by_run["A"]["mrr10_original"] == 1.0 and by_run["C"]["mrr10_original"] == pytest.approx(0.25)


def test_human_grades_as_the_judge_and_btp(collection: Path):
    out = collection / "btp"
    result = judge(
        "shallow", "btp-pairs", "--qrels", str(collection / "qrels.txt"), "--run", str(collection / "runs" / "C.run"),
        "--relevant", "2", "--out", str(out), env=ENV,
    )  # fmt: skip
    assert result.returncode == 0, result.output
    assert "skipped: 1 queries (not ranked by the run)" in result.output  # C misses topic 4
    assert "category B: 3" in result.output
    result = judge(
        "shallow", "btp", "--pairs", str(out / "pairs.tsv"), "--human-qrels", str(collection / "qrels.txt"), "--json", env=ENV,
    )  # fmt: skip
    assert result.returncode == 0, result.output
    b = json.loads(result.output)["categories"]["B"]
    assert (b["reference_preferred"], b["other_preferred"], b["tie"]) == (3, 0, 0)


def test_best_known_update_replaces_a_beaten_reference(collection: Path):
    # q* = the first relevant passage in qrels order: d2 (grade 1) once d2 is listed first
    qrels = collection / "qrels-d2-first.txt"
    lines = (collection / "qrels.txt").read_text().splitlines(keepends=True)
    qrels.write_text("".join(sorted(lines, key=lambda line: (line.split()[0], "d2 " not in line))))
    out = collection / "btp"
    result = judge("shallow", "btp-pairs", "--qrels", str(qrels), "--run", str(collection / "runs" / "A.run"),
                   "--out", str(out), env=ENV)  # fmt: skip
    # A's top is d1 everywhere
    assert result.returncode == 0 and "category B: 4" in result.output, result.output
    best = collection / "best-known.qrels"
    result = judge("shallow", "btp", "--pairs", str(out / "pairs.tsv"), "--human-qrels", str(qrels),
                   "--update-out", str(best), env=ENV)  # fmt: skip
    assert result.returncode == 0, result.output
    assert sorted(best.read_text().splitlines()) == [f"{q} 0 {q}d1 1" for q in "1234"]
    provenance = Path(f"{best}.provenance.tsv").read_text().splitlines()
    assert provenance[1].split("\t")[:3] == ["1", "1d2", "1d1"] and len(provenance) == 5


def test_a_reference_without_text_is_skipped_and_counted(collection: Path):
    corpus = collection / "passages.tsv"
    corpus.write_text(corpus.read_text().replace("1d1\tpassage d1 of topic 1", "1d1\t "))
    result = judge(
        "shallow", "btp-pairs", "--qrels", str(collection / "qrels.txt"), "--run", str(collection / "runs" / "B.run"),
        "--relevant", "2", "--corpus", str(corpus), "--out", str(collection / "btp"), env=ENV,
    )  # fmt: skip
    assert result.returncode == 0, result.output
    assert "skipped: 1 queries (reference passage without text)" in result.output
    assert len((collection / "btp" / "pairs.tsv").read_text().splitlines()) == 3


def test_bad_input_names_file_and_line(collection: Path, tmp_path: Path):
    bad_pool = tmp_path / "pool.tsv"
    bad_pool.write_text("1\t1d1\tqrels\n1\t1d2\n")
    result = judge("shallow", "tournament", "--pool", str(bad_pool), "--human-qrels",
                   str(collection / "qrels.txt"), "--out", str(tmp_path / "o"), env=ENV)  # fmt: skip
    assert result.returncode == EXIT_BAD_INPUT and f"{bad_pool}:2:" in result.output, result.output
    assert not (tmp_path / "o").exists()
    plain = tmp_path / "plain.txt"
    plain.write_text("1 1d1 1d2\n")
    result = judge(
        "shallow", "btp", "--pairs", str(plain), "--human-qrels", str(collection / "qrels.txt"), env=ENV
    )
    assert (
        result.returncode == EXIT_BAD_INPUT and str(plain) in result.output and "btp-pairs" in result.output
    ), result.output
    run = collection / "runs" / "A.run"
    run.write_text(run.read_text() + "1 Q0 1d9 x 1 A\n")
    result = judge("shallow", "pool", "--runs", str(collection / "runs"), "--qrels",
                   str(collection / "qrels.txt"), "--out", str(tmp_path / "p"), env=ENV)  # fmt: skip
    assert result.returncode == EXIT_BAD_INPUT and re.search(r"A\.run:13: rank 'x'", result.output), (
        result.output
    )
    good_pool = tmp_path / "good.tsv"
    good_pool.write_text("1\t1d1\tqrels\n1\t1d2\tA\n")
    result = judge("shallow", "tournament", "--pool", str(good_pool), "--out", str(tmp_path / "o"), env=ENV)
    assert result.returncode == EXIT_BAD_INPUT and "--judged" in result.output, result.output
    result = judge("shallow", "tournament", "--pool", str(good_pool), "--judged", str(tmp_path),
                   "--out", str(tmp_path / "o"), env=ENV)  # fmt: skip
    assert result.returncode == EXIT_BAD_INPUT and "judgments.jsonl" in result.output, result.output


def test_a_pairs_file_naming_unknown_passages_is_an_error_of_judge_run(collection: Path, tmp_path: Path):
    pairs = tmp_path / "pairs.txt"
    pairs.write_text("1\t1d1\t1d2\n1\t1d1\tnowhere\n")
    result = judge("run", "--method", "pairwise", "--model", "openai/mock", *data_args(collection),
                   "--pairs", str(pairs), "--dry-run", env=ENV)  # fmt: skip
    assert result.returncode == EXIT_BAD_INPUT and "nowhere" in result.output, result.output


def test_judged_records_outside_the_pool_are_counted(collection: Path, tmp_path: Path):
    pool = tmp_path / "pool.tsv"
    pool.write_text("1\t1d1\tqrels\n1\t1d2\tA\n")
    pairs = tmp_path / "pairs.txt"
    pairs.write_text("1\t1d1\t1d2\n1\t1d1\t1d3\n")
    with MockLLMServer() as srv:
        result = judge(
            "run", "--method", "pairwise", "--model", "openai/mock", "--base-url", srv.openai_url,
            *data_args(collection), "--pairs", str(pairs), "--no-cache", "--output", str(tmp_path / "j"), "--no-progress", env=ENV,
        )  # fmt: skip
        assert result.returncode == 0, result.output
    result = judge("shallow", "tournament", "--pool", str(pool), "--judged", str(tmp_path / "j"),
                   "--human-qrels", str(collection / "qrels.txt"), "--out", str(tmp_path / "t"), "--json", env=ENV)  # fmt: skip
    assert result.returncode == 0, result.output
    counts = json.loads(result.output)["source_counts"]
    assert counts["records_used"] == 1 and counts["records_outside"] == 1
    assert counts["agreement_with_human_grades"]["pairs"] == 1  # the judge compared with the grades


@pytest.mark.shared
@pytest.mark.slow
def test_dl21_pool_matches_the_feasibility_figures(shared_data: Path, tmp_path: Path):
    d = shared_data / "trec-dl21"
    result = judge(
        "shallow", "pool", "--runs", str(d / "runs"), "--qrels", str(d / "qrels.txt"), "--qrel-choice", "top-grade",
        "--corpus", str(d / "passages.tsv"), "--out", str(tmp_path), "--json", env=ENV,
    )  # fmt: skip
    assert result.returncode == 0, result.output
    r = json.loads(result.output)
    assert r["runs"] == 63 and r["pool"]["queries"] == 53
    assert (r["pool"]["min"], r["pool"]["median"], r["pool"]["max"]) == (7, 20, 35)
    assert round(r["pool"]["mean"], 1) == 20.1 and r["pairs"] == 11359
    assert r["passages_without_text"]["passages"] == 1067 and r["passages_without_text"]["without_text"] == 3


def test_a_dataset_gives_the_qrels_runs_and_passages(collection: Path):
    """``--dataset DIR`` instead of ``--qrels`` (and ``--runs``, ``--corpus``) writes the same
    pairs and the same leaderboard; the report names the dataset as the qrels' source."""
    given, known = collection / "given", collection / "known"
    assert judge("shallow", "pool", "--runs", str(collection / "runs"), "--qrels", str(collection / "qrels.txt"),
                 "--corpus", str(collection / "passages.tsv"), "--out", str(given), env=ENV).returncode == 0  # fmt: skip
    result = judge("shallow", "pool", "--dataset", str(collection), "--out", str(known), env=ENV)
    assert result.returncode == 0, result.output
    for name in ("pool.tsv", "pairs.txt"):
        assert (known / name).read_bytes() == (given / name).read_bytes()
    pool = json.loads((known / "pool.json").read_text())
    assert (
        pool["qrels"] == f"dataset {collection.name}" and pool["passages_without_text"]["without_text"] == 0
    )
    assert json.loads((given / "pool.json").read_text())["qrels"] == str(collection / "qrels.txt")
    boards = []
    for args in (
        ["--qrels", str(collection / "qrels.txt"), "--runs", str(collection / "runs")],
        ["--dataset", str(collection)],
    ):
        result = judge(
            "shallow", "leaderboard", "--pool", str(given / "pool.tsv"), "--human-qrels", str(collection / "qrels.txt"),
            *args, "--relevant", "2", "--bootstrap", "20", "--out", str(collection / "board"), "--json", env=ENV,
        )  # fmt: skip
        assert result.returncode == 0, result.output
        boards.append(json.loads(result.output))
    assert boards[0]["leaderboard"] == boards[1]["leaderboard"]
    assert boards[1]["qrels"] == f"dataset {collection.name}"
    result = judge("shallow", "btp-pairs", "--dataset", str(collection), "--run", str(collection / "runs" / "C.run"),
                   "--relevant", "2", "--out", str(collection / "btp"), "--json", env=ENV)  # fmt: skip
    assert result.returncode == 0, result.output
    assert json.loads(result.output)["categories"]["B"]["queries"] == 3


def test_qrels_and_dataset_together_are_refused(collection: Path):
    result = judge("shallow", "pool", "--dataset", str(collection), "--qrels", str(collection / "qrels.txt"),
                   "--out", str(collection / "p"), env=ENV)  # fmt: skip
    assert result.returncode == EXIT_BAD_INPUT and "exactly one of --qrels" in result.output
    assert not (collection / "p").exists()
    result = judge(
        "shallow", "pool", "--qrels", str(collection / "qrels.txt"), "--out", str(collection / "p"), env=ENV
    )
    assert result.returncode == EXIT_BAD_INPUT and "--runs" in result.output
