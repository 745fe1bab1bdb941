"""`judge evaluate`: several --measure's, each measure's system ranking under the judgment set as
qrels vs under the human qrels, the console "missing" column, --json, and a clear stop when no set
shares a judged document with the human qrels (issue 17)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from reljudge.analyses.evaluate.comparison import evaluate
from reljudge.analyses.evaluate.files import table_rows
from reljudge.analyses.evaluate.summary import summary, warnings
from reljudge.analyses.inputs import JudgmentSet
from reljudge.cli import app
from reljudge.errors import InputError

QRELS = {f"q{i}": {f"d{j}": (3 - j) % 4 for j in range(6)} for i in range(4)}
# five runs of decreasing quality: run k puts the k-th worst document first
RUNS = {f"r{k}": {q: {f"d{(j + k) % 6}": 10.0 - j for j in range(6)} for q in QRELS} for k in range(5)}


def _set(name: str, scores: dict) -> JudgmentSet:
    return JudgmentSet(name=name, source=name, scores=scores)


def test_qrels_ranking_per_measure_and_float_sets_skipped():
    same = _set("same", {q: dict(d) for q, d in QRELS.items()})
    fractions = _set("frac", {q: {d: g / 3 for d, g in docs.items()} for q, docs in QRELS.items()})
    report = evaluate(QRELS, [same, fractions], RUNS, measure="ndcg_cut_10", extra_measures=["P_5"], n_boot=0)
    assert list(report.measures) == ["ndcg_cut_10", "P_5"]
    rows = report.sets[0].qrels_ranking
    assert set(rows) == {"ndcg_cut_10", "P_5"}
    assert rows["ndcg_cut_10"]["kendall_tau_b"] == pytest.approx(
        1.0
    )  # the human labels as qrels: same ranking
    reverse = _set("reverse", {q: {d: 3 - g for d, g in docs.items()} for q, docs in QRELS.items()})
    flipped = evaluate(QRELS, [reverse], RUNS, n_boot=0).sets[0].qrels_ranking["ndcg_cut_10"]
    assert flipped["kendall_tau_b"] < 0  # grades turned upside down rank the systems the other way
    assert report.sets[1].qrels_ranking == {} and "whole numbers" in report.sets[1].qrels_ranking_note
    tables = table_rows(report)
    assert {r["measure"] for r in tables["qrels_ranking"]} == {"ndcg_cut_10", "P_5"}
    assert {"ndcg_cut_10", "P_5"} <= set(tables["measure"][0])
    text = summary(report)
    assert "under the set as qrels" in text and "not computed: frac" in text
    assert "missing" in text.splitlines()[1]


def test_no_overlap_warns_per_set():
    other = _set("other", {"z1": {"x": 1}})
    report = evaluate(QRELS, [_set("same", QRELS), other], RUNS, n_boot=0)
    assert report.sets[1].overlap == 0 and report.sets[0].overlap == 24
    (line,) = warnings(report)
    assert line.startswith("warning: other: no judged document in common")


def _files(tmp_path: Path) -> tuple[Path, Path, Path]:
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"{q} 0 {d} {g}\n" for q, docs in QRELS.items() for d, g in docs.items()))
    foreign = tmp_path / "foreign.qrels"
    foreign.write_text("z1 0 x 1\nz2 0 y 0\n")
    runs = tmp_path / "runs"
    runs.mkdir()
    for name, run in RUNS.items():
        (runs / name).write_text(
            "".join(
                f"{q} Q0 {d} {r} {s} {name}\n"
                for q, docs in run.items()
                for r, (d, s) in enumerate(docs.items(), 1)
            )
        )
    return qrels, foreign, runs


def test_cli_json_and_no_overlap_exit(tmp_path):
    qrels, foreign, runs = _files(tmp_path)
    argv = ["evaluate", "--qrels", str(qrels), "--judgments", str(qrels), "--runs", str(runs)]
    argv += [
        "--measure",
        "ndcg_cut_10",
        "--measure",
        "P_5",
        "--bootstrap",
        "0",
        "--json",
        "--out",
        str(tmp_path / "ev"),
    ]
    result = CliRunner().invoke(app, argv)
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["measures"] == ["ndcg_cut_10", "P_5"]
    assert set(data["sets"][0]["qrels_ranking_agreement"]) == {"ndcg_cut_10", "P_5"}
    assert (tmp_path / "ev" / "qrels_ranking.csv").exists()
    bad = ["evaluate", "--qrels", str(qrels), "--judgments", str(foreign), "--out", str(tmp_path / "ev2")]
    result = CliRunner().invoke(app, bad)
    assert isinstance(result.exception, InputError) and "same collection" in str(result.exception)
    assert not (tmp_path / "ev2").exists()  # nothing written
