"""Alignment variants (spec S8, issue 16): shares averaged over topics beside the pooled pairs, and
the alignment-vs-agreement summary (CSV, plot, ``judge plot-summary``)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from typer.testing import CliRunner

from reljudge.cli import app
from reljudge.metrics.alignment import ALIGNMENT, human_alignment
from reljudge.metrics.base import JudgeLabels

# topic 1: one Best, one Unacceptable -> 1 BvU pair, agreed;
# topic 2: one Best, three Unacceptable -> 3 BvU pairs, one agreed and two ties
QRELS = {"1": {"b1": 3, "u1": 0}, "2": {"b2": 3, "u2": 0, "u3": 0, "u4": 0}}
JUDGE = {"1": {"b1": 1, "u1": 0}, "2": {"b2": 1, "u2": 0, "u3": 1, "u4": 1}}


def test_pooled_pairs_by_default_and_topic_average_on_request():
    pooled = human_alignment(QRELS, JUDGE)
    assert pooled.average == "pairs"
    assert pooled.fractions("BvU") == pytest.approx((2 / 4, 2 / 4, 0.0))
    topics = human_alignment(QRELS, JUDGE)
    topics.average = "topics"
    # topic 1: (1, 0, 0); topic 2: (1/3, 2/3, 0) -> mean (2/3, 1/3, 0)
    assert topics.fractions("BvU") == pytest.approx((2 / 3, 1 / 3, 0.0))
    assert topics.macro[0] == pytest.approx(2 / 3)  # the only comparison with pairs
    assert topics.as_dict()["BvU"]["pairs"] == 4 and topics.as_dict()["average"] == "topics"
    assert math.isnan(topics.fractions("BvA")[0])


def test_the_measure_follows_the_labels_average():
    measure = ALIGNMENT
    pairs = measure(JudgeLabels(QRELS, JUDGE)).value
    topics = measure(JudgeLabels(QRELS, JUDGE, alignment_average="topics")).value
    assert pairs.fractions("BvU")[0] == pytest.approx(0.5)
    assert topics.fractions("BvU")[0] == pytest.approx(2 / 3)
    with pytest.raises(ValueError):
        measure(JudgeLabels(QRELS, JUDGE, alignment_average="docs"))


def _files(tmp_path: Path) -> tuple[Path, Path, Path]:
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"{q} 0 {d} {g}\n" for q, docs in QRELS.items() for d, g in docs.items()))
    judged = tmp_path / "judge.qrels"
    judged.write_text("".join(f"{q} 0 {d} {g}\n" for q, docs in JUDGE.items() for d, g in docs.items()))
    runs = tmp_path / "runs"
    runs.mkdir()
    # three runs ranking the documents differently, so every set gets a tau
    orders = {"r1": ["b1", "u1", "b2", "u2", "u3", "u4"], "r2": ["u1", "b1", "u2", "b2", "u3", "u4"]}
    orders["r3"] = ["u1", "b1", "u4", "u3", "u2", "b2"]
    for name, docs in orders.items():
        lines = []
        for q in QRELS:
            mine = [d for d in docs if d in QRELS[q]]
            lines += [f"{q} Q0 {d} {i + 1} {10 - i} {name}\n" for i, d in enumerate(mine)]
        (runs / f"{name}.run").write_text("".join(lines))
    return qrels, judged, runs


@pytest.mark.slow
def test_evaluate_option_label_and_plot_summary(tmp_path):
    pytest.importorskip("matplotlib")
    qrels, judged, runs = _files(tmp_path)
    base = ["evaluate", "--qrels", str(qrels), "--judgments", str(judged), "--bootstrap", "0"]
    res = CliRunner().invoke(
        app, [*base, "--out", str(tmp_path / "a"), "--runs", str(runs), "--plot", "--label", "X"]
    )
    assert res.exit_code == 0, res.output
    data = json.loads((tmp_path / "a" / "evaluation.json").read_text())
    assert data["settings"]["label"] == "X" and data["settings"]["alignment_average"] == "pairs"
    assert data["sets"][0]["alignment"]["BvU"]["agree_frac"] == pytest.approx(0.5)
    csv_text = (tmp_path / "a" / "alignment_vs_agreement.csv").read_text().splitlines()
    assert csv_text[0] == "label,set,macro_agree,kendall_tau_b" and csv_text[1].startswith("X,judge,0.5,")
    assert (tmp_path / "a" / "alignment_vs_agreement.png").stat().st_size > 1000
    res = CliRunner().invoke(
        app, [*base, "--out", str(tmp_path / "b"), "--runs", str(runs), "--alignment-average", "topics"]
    )
    assert res.exit_code == 0, res.output
    data = json.loads((tmp_path / "b" / "evaluation.json").read_text())
    assert data["sets"][0]["alignment"]["BvU"]["agree_frac"] == pytest.approx(2 / 3)
    out = tmp_path / "summary"
    res = CliRunner().invoke(
        app, ["plot-summary", str(tmp_path / "a"), str(tmp_path / "b" / "evaluation.json"), "--out", str(out)]
    )
    assert res.exit_code == 0, res.output
    rows = (out / "alignment_vs_agreement.csv").read_text().splitlines()
    assert [r.split(",")[0] for r in rows[1:]] == ["X", "b"]  # label, else the directory's name
    assert (out / "alignment_vs_agreement.png").exists()


def test_bad_alignment_average_and_summary_input(tmp_path):
    from reljudge.analyses.evaluate.files import read_points
    from reljudge.errors import InputError

    qrels, judged, _ = _files(tmp_path)
    res = CliRunner().invoke(
        app, ["evaluate", "--qrels", str(qrels), "--judgments", str(judged), "--alignment-average", "docs"]
    )
    assert res.exit_code != 0 and isinstance(res.exception, InputError)
    bad = tmp_path / "evaluation.json"
    bad.write_text("[1, 2]")
    with pytest.raises(InputError, match="no 'sets' list"):
        read_points([bad])


def test_pointwise_alignment_on_given_pairs(tmp_path):
    from reljudge.analyses.evaluate.comparison import evaluate
    from reljudge.analyses.inputs import load_judgment_sets
    from reljudge.metrics.alignment import preferences_from_scores

    assert preferences_from_scores(JUDGE, [("2", "b2", "u2"), ("2", "u3", "b2"), ("2", "u4", "zz")]) == [
        ("2", "b2", "u2", 1),
        ("2", "u3", "b2", 0),
    ]
    _, judged, _ = _files(tmp_path)
    sets = load_judgment_sets([judged])
    # only topic 2's pairs (b2, u3) and (u2, b2): one tie, one agreement
    report = evaluate(QRELS, sets, n_boot=0, pairs=[("2", "b2", "u3"), ("2", "u2", "b2")])
    assert report.sets[0].alignment.counts["BvU"].total == 2
    assert report.sets[0].alignment.fractions("BvU") == pytest.approx((0.5, 0.5, 0.0))
    assert evaluate(QRELS, sets, n_boot=0).sets[0].alignment.counts["BvU"].total == 4
