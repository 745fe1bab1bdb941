"""`judge calibrate` and `reljudge.analyses.calibrate.calibration`: the κ-maximising threshold, ordinal
cut-points, cross-validation over topics, and (marked ``shared``) the published GPT-4o judgments."""

from __future__ import annotations

import json

import numpy as np
import pytest

from _cli import judge
from reljudge.analyses.calibrate.calibration import apply_cuts, best_threshold, cross_validate, fit_cuts
from reljudge.metrics.agreement import cohen_kappa


def test_best_threshold_is_the_brute_force_optimum():
    rng = np.random.default_rng(1)
    for _ in range(30):
        s = rng.integers(0, 8, size=60) / 7
        y = (s + rng.normal(0, 0.3, size=60) > 0.5).astype(int)
        thr, kappa = best_threshold(s, y)
        brute = {t: cohen_kappa(y, (s >= t).astype(int), labels=[0, 1]) for t in np.unique(s)}
        best = max(brute.values())
        assert kappa == pytest.approx(best)
        assert thr == min(t for t, k in brute.items() if k >= best - 1e-12)


def test_cut_points_map_scores_to_grades():
    scores = np.array([0.1, 0.2, 0.4, 0.5, 0.7, 0.9])
    grades = np.array([0, 0, 1, 1, 2, 3])
    low, cuts = fit_cuts(scores, grades)
    assert low == 0 and cuts == sorted(cuts)
    assert apply_cuts(scores, low, cuts).tolist() == grades.tolist()


def test_no_cut_points_give_the_lowest_grade_for_every_score():
    # fitted on passages of one human grade: no cut-point, every score maps to that grade
    assert apply_cuts(np.array([0.1, 0.9]), 0.0, []).tolist() == [0.0, 0.0]
    qrels = {"a": {"d1": 0, "d2": 0, "d3": 0}, "b": {"d1": 0, "d2": 2, "d3": 3}}
    scores = {"a": {"d1": 0, "d2": 1, "d3": 2}, "b": {"d1": 0, "d2": 2, "d3": 3}}
    result = cross_validate(qrels, scores, repeats=4, seed=0)  # some splits fit on topic a alone
    assert any(s.fit_topics == ["a"] and not s.cuts for s in result.splits)
    assert all(s.graded_calibrated is not None for s in result.splits)


def _shifted(n_topics: int = 20, docs: int = 30):
    """Human grades, and judge scores on a 0-1 scale where relevance starts at 0.6 (a default
    "> 0" threshold calls everything relevant)."""
    rng = np.random.default_rng(0)
    qrels, scores = {}, {}
    for t in range(n_topics):
        q = f"q{t}"
        qrels[q], scores[q] = {}, {}
        for d in range(docs):
            grade = int(rng.integers(0, 4))
            qrels[q][f"d{d}"] = grade
            scores[q][f"d{d}"] = float(np.clip(0.2 + 0.2 * grade + rng.normal(0, 0.05), 0.01, 1))
    return qrels, scores


def test_cross_validation_beats_a_bad_default():
    qrels, scores = _shifted()
    result = cross_validate(qrels, scores, fit_fraction=0.2, repeats=10, seed=3)
    s = result.summary
    assert s["fit_topics"] == 4 and s["held_out_topics"] == 16
    assert s["default_threshold"] == "> 0"
    assert s["binary_default"]["mean"] == pytest.approx(0.0)
    assert s["binary_calibrated"]["mean"] > 0.8
    assert s["binary_calibrated"]["low"] <= s["binary_calibrated"]["mean"] <= s["binary_calibrated"]["high"]
    assert s["graded_calibrated"]["mean"] > 0.6
    for split in result.splits:  # fitted on the fitting topics only
        assert len(split.fit_topics) == 4


def test_cli_calibrate(tmp_path):
    qrels, scores = _shifted()
    human = tmp_path / "human.txt"
    judged = tmp_path / "judge.qrels"
    human.write_text("".join(f"{q} 0 {d} {g}\n" for q, docs in qrels.items() for d, g in docs.items()))
    judged.write_text("".join(f"{q} 0 {d} {v}\n" for q, docs in scores.items() for d, v in docs.items()))
    out = tmp_path / "cal"
    result = judge(
        "calibrate", "--judgments", str(judged), "--qrels", str(human), "--repeats", "5", "--out", str(out)
    )
    assert result.returncode == 0, result.output
    assert "binary kappa, default threshold (> 0): 0.000" in result.output
    data = json.loads((out / "calibration.json").read_text())
    assert len(data["splits"]) == 5
    fit = set(data["splits"][0]["fit_topics"])
    written = {line.split()[0] for line in (out / "binary.qrels").read_text().split("\n") if line}
    assert written and not written & fit  # only held-out topics are mapped
    bad = judge("calibrate", "--judgments", str(judged), "--qrels", str(human), "--topics-fraction", "1.5")
    assert bad.returncode != 0


@pytest.mark.shared
@pytest.mark.slow
def test_published_exam_binary_dl21(shared_data, monkeypatch):
    monkeypatch.setenv("RELJUDGE_DATA_DIR", str(shared_data))
    from reljudge.analyses.calibrate.pipeline import calibrate_paths

    _, result = calibrate_paths(
        shared_data / "llm-judgments" / "gpt-4o" / "exam-binary.dl21.qrels", dataset="trec-dl21", repeats=50
    )
    s = result.summary
    assert (s["fit_topics"], s["held_out_topics"]) == (11, 42)
    # the README's measured row: calibration lifts kappa over the "> 0" default
    assert s["binary_gain"]["low"] > 0
