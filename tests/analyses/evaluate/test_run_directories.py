"""EXAM and nuggets runs against the mock LLM server, then evaluated: every score set of the run
directory, with values recomputed by hand from the records, and the run's qrels as one of them."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import pytest
from typer.testing import CliRunner

from reljudge.analyses.inputs import load_judgment_sets
from reljudge.cli import app
from reljudge.io.judgments import load_judgments
from reljudge.io.trec import read_qrels
from reljudge.run import RunConfig, run_job
from reljudge.testing import MockLLMServer

NUGGET_SETS = ("all", "all-strict", "vital", "vital-strict", "weighted", "weighted-strict")


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Path]:
    """One run directory per job: exam (binary), exam (graded), nuggets; exact qrels kept."""
    root = tmp_path_factory.mktemp("runs")
    jobs = {"exam": ("exam", {}), "exam-graded": ("exam", {"mode": "graded"}), "nuggets": ("nuggets", {})}
    out = {}
    with MockLLMServer() as server:
        for name, (method, options) in jobs.items():
            summary = run_job(
                RunConfig(
                    method=method,
                    model="openai/mock-model",
                    base_url=server.openai_url,
                    dataset="dl19-sample",
                    output=root / name,
                    options=options,
                    topics_limit=1,
                    limit=3,
                    float_policy="keep",
                    use_cache=False,
                    progress=False,
                )
            )
            assert summary.state == "finished" and summary.qrels_pairs == 3, name
            out[name] = root / name
    return out


def _by_passage(records, method: str) -> dict[tuple[str, str], list[float]]:
    values: dict[tuple[str, str], list[float]] = defaultdict(list)
    for r in records:
        if r.method == method and r.status == "ok":
            values[(r.qid, r.docid)].append(float(r.label))
    return values


def flat(scores) -> dict[tuple[str, str], float]:
    """``{qid: {docid: v}}`` as ``{(qid, docid): v}`` (what pytest.approx compares)."""
    return {(q, d): v for q, docs in scores.items() for d, v in docs.items()}


@pytest.mark.slow
def test_exam_binary_run_gives_the_exam_binary_set(runs):
    path = runs["exam"]
    records = load_judgments(path)
    grades = [r for r in records if r.method == "exam"]
    assert grades and {r.extra.get("scale") for r in grades} == {"binary"}
    expected = {k: sum(v) / len(v) for k, v in _by_passage(records, "exam").items()}
    assert len(expected) == 3 and len(set(expected.values())) > 1
    (only,) = load_judgment_sets([path])
    assert only.name == path.name and only.preferences is None
    assert flat(only.scores) == pytest.approx(expected)
    assert flat(read_qrels(path / "qrels.txt")) == pytest.approx(expected)  # the run's own qrels


def test_exam_graded_run_gives_graded_max_and_mean(runs):
    path = runs["exam-graded"]
    records = load_judgment_sets([path])
    assert [s.name for s in records] == [f"{path.name}:exam-graded-max", f"{path.name}:exam-graded-mean"]
    grades = _by_passage(load_judgments(path), "exam")
    assert any(v > 1 for vs in grades.values() for v in vs)  # the 0-5 self-rating scale
    assert flat(records[0].scores) == {k: max(v) for k, v in grades.items()}
    assert flat(records[1].scores) == pytest.approx({k: sum(v) / len(v) for k, v in grades.items()})
    assert read_qrels(path / "qrels.txt") == records[0].scores  # graded mode publishes graded-max


def test_nuggets_run_gives_the_six_nugget_sets(runs):
    path = runs["nuggets"]
    records = load_judgments(path)
    importance = {
        r.item_id: r.extra["importance"] for r in records if r.method == "nugget" and r.extra.get("selected")
    }
    assert "vital" in importance.values()
    sets = {s.name.split(":", 1)[1]: s for s in load_judgment_sets([path])}
    assert list(sets) == [f"nuggets-{n}" for n in NUGGET_SETS]
    assigned: dict[tuple[str, str], list[tuple[str, float]]] = defaultdict(list)
    for r in records:
        if r.method == "nugget-assignment" and r.status == "ok" and r.item_id in importance:
            assigned[(r.qid, r.docid)].append((importance[r.item_id], float(r.label)))
    assert len(assigned) == 3

    def mean(xs):
        return sum(xs) / len(xs)

    expected = {
        "all": {k: mean([s for _, s in v]) for k, v in assigned.items()},
        "all-strict": {k: mean([s == 1 for _, s in v]) for k, v in assigned.items()},
        "vital": {k: mean([s for i, s in v if i == "vital"]) for k, v in assigned.items()},
        "weighted": {
            k: sum(s * (1 if i == "vital" else 0.5) for i, s in v)
            / sum(1 if i == "vital" else 0.5 for i, _ in v)
            for k, v in assigned.items()
        },
    }
    for name, values in expected.items():
        assert flat(sets[f"nuggets-{name}"].scores) == pytest.approx(values), name
    assert flat(read_qrels(path / "qrels.txt")) == pytest.approx(expected["all"])


def test_judge_evaluate_reads_exam_and_nugget_run_directories(runs, tmp_path):
    out = tmp_path / "ev"
    argv = ["evaluate", "--dataset", "dl19-sample", "--bootstrap", "0", "--out", str(out)]
    for name in ("exam", "exam-graded", "nuggets"):
        argv += ["--judgments", str(runs[name])]
    result = CliRunner().invoke(app, argv)
    assert result.exit_code == 0, result.output
    report = json.loads((out / "evaluation.json").read_text())
    labels = {s["name"]: s["labels"] for s in report["sets"]}
    assert labels == {
        "exam": 3,
        "exam-graded:exam-graded-max": 3,
        "exam-graded:exam-graded-mean": 3,
        **{f"nuggets:nuggets-{n}": 3 for n in NUGGET_SETS},
    }
    for s in report["sets"]:
        assert s["alignment"]["BvU"] is not None and s["kappa"]["pairs"] == 3, s["name"]
