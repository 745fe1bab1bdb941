"""The measure registry: what it declares matches what the measures output, and a measure added
with one registry line reaches every report that runs the registry (``judge evaluate``,
``judge fd``, the sweep analysis) without touching them."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from _cli import judge
from reljudge.metrics import registry
from reljudge.metrics.agreement import paired_labels
from reljudge.metrics.base import JudgeLabels, JudgmentMeasure, Outcome, RankingMeasure
from reljudge.records import Judgment

QRELS = "q1 0 a 3\nq1 0 b 2\nq1 0 c 0\nq1 0 d 1\nq2 0 e 2\nq2 0 f 0\nq2 0 g 0\n"
JUDGED = "q1 0 a 3\nq1 0 b 1\nq1 0 c 0\nq1 0 d 2\nq2 0 e 3\nq2 0 f 1\nq2 0 g 0\n"
HUMAN = {"q1": {"a": 3, "b": 2, "c": 0, "d": 1}, "q2": {"e": 2, "f": 0, "g": 0}}
SCORES = {"q1": {"a": 3, "b": 1, "c": 0, "d": 2}, "q2": {"e": 3, "f": 1, "g": 0}}


def _exact(labels: JudgeLabels) -> Outcome:
    _, human, judged = paired_labels(labels.qrels, labels.scores, missing=labels.missing)
    share = float((human == judged).mean()) if human.size else float("nan")
    return Outcome(
        share,
        {"exact": {"share": share, "pairs": int(human.size)}},
        {"exact": share, "pairs": int(human.size)},
    )


EXACT = JudgmentMeasure(
    name="exact",
    description="Exact agreement with the human grades",
    applies_to=frozenset({"pointwise"}),
    columns=("exact", "pairs"),
    empty={"exact": {}},
    compute=_exact,
)
PEARSON = RankingMeasure(
    "pearson", "pearson", "Pearson", "pearson", lambda x, y: float(np.corrcoef(x, y)[0, 1])
)


@pytest.fixture
def fresh_registry(monkeypatch):
    """The registry as shipped, in copies a test may add to."""
    monkeypatch.setattr(registry, "MEASURES", dict(registry.MEASURES))
    monkeypatch.setattr(registry, "_REPORTED_BY", dict(registry._REPORTED_BY))
    return registry


@pytest.fixture
def files(tmp_path: Path) -> Path:
    (tmp_path / "qrels.txt").write_text(QRELS)
    (tmp_path / "umbrela.qrels").write_text(JUDGED)
    runs = tmp_path / "runs"
    runs.mkdir()
    orders = {"good": "abdc", "mid": "bcad", "bad": "cdba"}
    for name, order in orders.items():
        lines = [f"q1 Q0 {d} {r + 1} {10 - r} {name}" for r, d in enumerate(order)]
        lines += [
            f"q2 Q0 {d} {r + 1} {10 - r} {name}" for r, d in enumerate("efg" if name != "bad" else "gfe")
        ]
        (runs / f"{name}.run").write_text("\n".join(lines) + "\n")
    records = [
        Judgment(qid="q1", docid="a", docid_b="c", method="pairwise", label=1),
        Judgment(qid="q1", docid="d", docid_b="a", method="pairwise", label=2),
    ]
    (tmp_path / "prefs.jsonl").write_text("".join(r.to_json() + "\n" for r in records))
    ids = list("abcdefg")
    np.save(tmp_path / "emb.npy", np.random.default_rng(0).normal(size=(len(ids), 4)))
    (tmp_path / "emb.ids").write_text("\n".join(ids))
    return tmp_path


def _evaluate(files: Path, out: Path) -> str:
    result = judge(
        "evaluate",
        "--qrels",
        str(files / "qrels.txt"),
        "--judgments",
        str(files / "umbrela.qrels"),
        "--judgments",
        str(files / "prefs.jsonl"),
        "--runs",
        str(files / "runs"),
        "--bootstrap",
        "20",
        "--out",
        str(out),
    )
    assert result.returncode == 0, result.output
    return result.output


def test_names_are_unique_and_lookups_work():
    names = [m.name for m in registry.MEASURES.values()]
    assert names == list(registry.MEASURES) and len(set(names)) == len(names)
    assert [m.name for m in registry.judgment_measures()] == ["alignment", "kappa"]
    assert [m.name for m in registry.ranking_measures("evaluate")] == [
        "kendall_tau_b",
        "spearman",
        "tau_ap",
        "tau_ap_b",
        "rbo_p0.9",
    ]
    assert [m.name for m in registry.ranking_measures("fd")] == ["kendall_tau_b", "spearman", "tau_ap"]
    assert registry.ranking_measure("kendall") is registry.ranking_measure("kendall_tau_b")
    with pytest.raises(ValueError, match="unknown ranking measure 'nope'"):
        registry.ranking_measure("nope")


def test_registering_a_name_twice_or_for_an_unknown_command_is_refused(fresh_registry):
    with pytest.raises(ValueError, match="registered already"):
        fresh_registry.register(registry.MEASURES["kappa"])
    with pytest.raises(ValueError, match="unknown command"):
        fresh_registry.register(PEARSON, reported_by={"sweep"})


def test_declared_columns_are_the_columns_the_measures_output():
    labels = JudgeLabels(HUMAN, SCORES)
    for m in registry.judgment_measures():
        outcome = m(labels)
        assert outcome is not None and outcome.row is not None
        assert list(outcome.row) == [c for c in m.columns if c in outcome.row], m.name
        assert set(outcome.row) <= set(m.columns), m.name
        assert set(outcome.fields) == set(m.empty), m.name
    # the graded kappa columns appear for labels on the human scale, so all of them were output
    assert set(registry.MEASURES["kappa"](labels).row) == set(registry.MEASURES["kappa"].columns)
    prefs = JudgeLabels(HUMAN, {}, preferences=[("q1", "a", "c", 1)], missing=0)
    assert registry.MEASURES["kappa"](prefs) is None  # kappa applies to pointwise labels only
    assert registry.MEASURES["alignment"](prefs).value.counts["BvU"].agree == 1


def test_ranking_measures_orient_a_lower_is_better_ranking():
    human = {"r1": 0.9, "r2": 0.5, "r3": 0.1}
    distance = {"r1": 1.0, "r2": 2.0, "r3": 3.0}  # lower is better: the same ranking as human
    kendall, tau_ap = registry.ranking_measure("kendall_tau_b"), registry.ranking_measure("tau_ap")
    assert kendall(human, distance, lower_is_better=True) == pytest.approx(
        -1.0
    )  # a correlation keeps the sign
    assert tau_ap(human, distance, lower_is_better=True) == pytest.approx(1.0)  # top-weighted: oriented
    reps_h = np.array([[0.9, 0.8], [0.5, 0.6], [0.1, 0.2]])  # systems × replicates
    reps_d = np.array([[1.0, 1.5], [2.0, 1.0], [3.0, 3.0]])
    assert tau_ap.replicates(reps_h, reps_d, lower_is_better=True) == pytest.approx([1.0, 0.0])
    assert kendall.replicates(reps_h, reps_d, lower_is_better=True) == pytest.approx([-1.0, -1 / 3])
    x = np.array([1.0, np.nan, 3.0, 2.0])
    assert kendall.paired(x, np.array([1.0, 5.0, 2.0, 3.0])) == pytest.approx(1 / 3)
    assert np.isnan(kendall.paired(x, np.array([np.nan, 1.0, np.nan, 2.0])))


def test_a_new_judge_quality_measure_reaches_every_evaluate_output(files, fresh_registry):
    fresh_registry.register(EXACT)
    out = files / "ev"
    console = _evaluate(files, out)
    report = json.loads((out / "evaluation.json").read_text())
    umbrela, prefs = report["sets"]
    assert umbrela["exact"] == {"share": pytest.approx(3 / 7), "pairs": 7}
    assert prefs["exact"] == {}  # pointwise only: the declared empty value
    assert list(umbrela)[:8] == [
        "name",
        "source",
        "labels",
        "topics",
        "dropped_topics",
        "alignment",
        "kappa",
        "confusion",
    ]
    assert list(umbrela)[8:] == [
        "exact",
        "compatibility",
        "ranking_agreement",
        "overlap",
        "qrels_ranking_agreement",
        "scale",
    ]
    assert (out / "exact.csv").read_text().splitlines() == ["set,topics,exact,pairs", f"umbrela,2,{3 / 7},7"]
    assert "Exact agreement with the human grades" in console and "0.429" in console


def test_a_new_ranking_method_reaches_evaluate_and_fd(files, fresh_registry):
    fresh_registry.register(PEARSON)
    out = files / "ev"
    console = _evaluate(files, out)
    header = (out / "ranking.csv").read_text().splitlines()[0].split(",")
    assert header == [
        "set",
        "runs",
        "kendall_tau_b",
        "kendall_ci_low",
        "kendall_ci_high",
        "spearman",
        "tau_ap",
        "tau_ap_b",
        "rbo_p0.9",
        "pearson",
    ]
    assert "pearson" in console.split("System ranking")[1]
    fd = judge(
        "fd", "--qrels", str(files / "qrels.txt"), "--runs", str(files / "runs"),
        "--embeddings", str(files / "emb.npy"), "--k", "2", "--min-grade", "1", "--out", str(files / "fd"),
    )  # fmt: skip
    assert fd.returncode == 0, fd.output
    agreement = json.loads((files / "fd" / "fd.json").read_text())["agreement"]
    assert list(agreement) == ["runs", "kendall_tau_b", "spearman", "tau_ap", "pearson"]
    assert "Pearson = " in fd.output


def test_a_ranking_method_reported_by_evaluate_only_stays_out_of_fd(files, fresh_registry):
    fresh_registry.register(PEARSON, reported_by={"evaluate"})
    fd = judge(
        "fd", "--qrels", str(files / "qrels.txt"), "--runs", str(files / "runs"),
        "--embeddings", str(files / "emb.npy"), "--k", "2", "--min-grade", "1", "--out", str(files / "fd"),
    )  # fmt: skip
    assert fd.returncode == 0, fd.output
    assert "pearson" not in json.loads((files / "fd" / "fd.json").read_text())["agreement"]


def test_the_sweep_takes_its_ranking_measure_from_the_registry():
    from reljudge.sweep.analysis import Conventions, ranking_stability
    from reljudge.sweep.labels import CellLabels

    human = {"q1": {"a": 3, "b": 0, "c": 2}, "q2": {"a": 0, "b": 2, "c": 0}}
    orders = {
        "R1": {"q1": "abc", "q2": "bac"},
        "R2": {"q1": "cab", "q2": "abc"},
        "R3": {"q1": "bac", "q2": "cab"},
    }
    runs = {
        n: {q: {d: float(10 - i) for i, d in enumerate(o)} for q, o in t.items()} for n, t in orders.items()
    }
    cell = CellLabels(dataset="toy", model="m", task="binary", prompt="p2", group="g")
    labels = {"q1": {"a": 1, "b": 0, "c": 1}, "q2": {"a": 1, "b": 0, "c": 0}}
    cell.qids, cell.docids = zip(*[(q, d) for q, docs in labels.items() for d in docs], strict=True)
    cell.qids, cell.docids = list(cell.qids), list(cell.docids)
    cell.values = np.array([labels[q][d] for q, d in zip(cell.qids, cell.docids, strict=True)], float)
    # P@1: human R1 = 1.0, R2 = 0.5, R3 = 0.0; p2 R1 = 0.5, R2 = 1.0, R3 = 0.0
    kendall = Conventions(ranking_measure="P@1")
    spearman = Conventions(ranking_measure="P@1", ranking_agreement="spearman")
    (by_tau,) = ranking_stability([cell], {"toy": human}, {"toy": runs}, kendall)
    (by_rho,) = ranking_stability([cell], {"toy": human}, {"toy": runs}, spearman)
    assert by_tau.tau_to_human["p2"] == pytest.approx(1 / 3)
    assert by_rho.tau_to_human["p2"] == pytest.approx(0.5)  # 1 - 6 * (1 + 1) / (3 * 8)
    assert kendall.as_dict()["ranking"] == "Kendall tau-b of system rankings by P@1"
    assert spearman.as_dict()["ranking"] == "Spearman of system rankings by P@1"
