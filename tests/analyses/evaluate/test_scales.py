"""`judge evaluate` reads every set by what its judge declares its values mean (issue 25, items 5
and 7): a few off-scale labels keep the graded κ/α and the binary cut, with a warning naming the
set, the values and their count; win counts and shares are not gains, so they never become nDCG
gains, and their cut is the declared one whatever their values."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from _cli import judge
from reljudge.analyses.evaluate.comparison import evaluate
from reljudge.analyses.evaluate.scales import read_scale
from reljudge.analyses.evaluate.summary import off_scale_warnings, summary
from reljudge.analyses.inputs import JudgmentSet, file_meaning
from reljudge.metrics.agreement import cohen_kappa, paired_labels

# 6 topics x 8 documents on the 0-3 scale; the judge agrees on most
QRELS = {f"q{i}": {f"d{j}": (i + j) % 4 for j in range(8)} for i in range(6)}
JUDGE = {
    q: {d: (g if (int(q[1:]) + int(d[1:])) % 5 else (g + 1) % 4) for d, g in docs.items()}
    for q, docs in QRELS.items()
}
RUNS = {f"r{k}": {q: {f"d{(j + k) % 8}": 10.0 - j for j in range(8)} for q in QRELS} for k in range(4)}


def _with(values: dict[tuple[str, str], float]) -> dict[str, dict[str, float]]:
    out = {q: dict(d) for q, d in JUDGE.items()}
    for (q, d), v in values.items():
        out[q][d] = v
    return out


def _set(name: str, scores: dict, **kw) -> JudgmentSet:
    return JudgmentSet(name=name, source=name, scores=scores, meaning=file_meaning(name), **kw)


def test_two_fives_keep_the_graded_columns_and_the_cut_of_an_on_scale_set():
    fives = _with({("q0", "d3"): 5, ("q2", "d1"): 5})  # two 5s among 0-3 grades
    report = evaluate(QRELS, [_set("umbrela", JUDGE), _set("umbrela.fives", fives)], n_boot=0)
    on, off = report.sets
    for key in ("graded_unweighted", "graded_linear", "graded_quadratic", "graded_alpha_ordinal"):
        assert not math.isnan(off.kappa[key]), key
    assert off.kappa["judge_threshold"] == on.kappa["judge_threshold"] == ">= 2"
    assert off.scale.threshold == on.scale.threshold == 2
    assert off.scale.off_scale == {5.0: 2} and on.scale.off_scale == {}
    # the rule: a 5 is read as 3 for graded agreement
    _, human, judged = paired_labels(QRELS, _with({("q0", "d3"): 3, ("q2", "d1"): 3}))
    assert off.kappa["graded_linear"] == pytest.approx(cohen_kappa(human, judged, weights="linear"))
    entry = report.as_dict()["sets"][1]["scale"]
    assert entry["off_scale"]["labels"] == 2 and entry["off_scale"]["values"] == {"5": 2}
    assert "nearest end of 0-3" in entry["off_scale"]["rule"] and entry["judge_relevant"] == ">= 2"
    (line,) = off_scale_warnings(report)
    assert line.startswith("warning: umbrela.fives: 2 of 48 labels off the scale 0-3") and "5 (2x)" in line


def test_a_file_no_judge_declares_with_one_ten_is_read_as_grades_with_a_warning(tmp_path: Path):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"{q} 0 {d} {g}\n" for q, docs in QRELS.items() for d, g in docs.items()))
    ten = _with({("q4", "d0"): 10})
    labels = tmp_path / "mylabels.qrels"
    labels.write_text("".join(f"{q} 0 {d} {g}\n" for q, docs in ten.items() for d, g in docs.items()))
    ran = judge("evaluate", "--qrels", qrels, "--judgments", labels, "--out", tmp_path / "ev")
    assert ran.returncode == 0, ran.output
    assert "warning: mylabels: 1 of 48 labels off the scale 0-3" in ran.stderr and "10 (1x)" in ran.stderr
    data = json.loads((tmp_path / "ev" / "evaluation.json").read_text())
    (entry,) = data["sets"]
    assert entry["kappa"]["judge_threshold"] == ">= 2" and entry["kappa"]["graded_quadratic"] is not None
    assert entry["scale"]["declared"] is False and entry["scale"]["off_scale"]["labels"] == 1
    assert "grades on the human scale (read off the labels)" in ran.stdout
    assert "mylabels,grades on the human scale,False" in (tmp_path / "ev" / "scales.csv").read_text()


def test_win_counts_are_not_gains_whatever_their_values():
    small = {
        q: {d: float(g) for d, g in docs.items()} for q, docs in JUDGE.items()
    }  # counts that look like grades
    report = evaluate(
        QRELS, [_set("preferences.dl", small, missing=0)], RUNS, extra_measures=["P_5"], n_boot=0
    )
    (rep,) = report.sets
    assert rep.kappa["judge_threshold"] == "> 0" and "graded_linear" not in rep.kappa
    assert not rep.scale.gains and rep.scale.what.startswith("win counts")
    assert set(rep.qrels_ranking) == {"P_5"}  # nDCG needs gains: not computed, and said so
    assert rep.qrels_ranking_note.startswith("ndcg_cut_10: the values are not gains (win counts")
    assert "relevant when > 0" in rep.qrels_ranking_note
    assert "not computed: preferences.dl: ndcg_cut_10" in summary(report)
    # P@5 under the set binarised at > 0 is P@5 under 0/1 qrels made by hand
    binary = {q: {d: int(v > 0) for d, v in docs.items()} for q, docs in small.items()}
    by_hand = evaluate(QRELS, [_set("hand", binary)], RUNS, extra_measures=["P_5"], n_boot=0).sets[0]
    assert rep.qrels_ranking["P_5"]["kendall_tau_b"] == pytest.approx(
        by_hand.qrels_ranking["P_5"]["kendall_tau_b"]
    )


def test_exam_ratings_are_on_their_own_scale_and_shares_are_not_gains():
    ratings = {q: {d: float((g * 5) // 3) for d, g in docs.items()} for q, docs in JUDGE.items()}  # 0-5
    shares = {q: {d: g / 3 for d, g in docs.items()} for q, docs in JUDGE.items()}
    report = evaluate(
        QRELS, [_set("exam-graded-max.dl", ratings), _set("nuggets-all.dl", shares)], RUNS, n_boot=0
    )
    rating, share = report.sets
    assert rating.scale.off_scale == {} and rating.scale.range == (0, 5)  # 4 and 5 are on its scale
    assert rating.kappa["judge_threshold"] == "> 0" and "graded_linear" not in rating.kappa
    assert set(rating.qrels_ranking) == {"ndcg_cut_10"}  # the highest rating is a gain
    assert share.kappa["judge_threshold"] == "> 0" and not share.scale.gains
    assert (
        share.qrels_ranking == {} and "not gains (share of all nuggets supported)" in share.qrels_ranking_note
    )


def test_the_judge_threshold_option_overrides_every_cut_and_says_so():
    report = evaluate(
        QRELS, [_set("umbrela", JUDGE), _set("preferences", JUDGE)], judge_threshold=3, n_boot=0
    )
    for rep in report.sets:
        assert rep.kappa["judge_threshold"] == ">= 3" and rep.scale.cut_from == "--judge-threshold"
    assert "(--judge-threshold)" in summary(report)


def test_undeclared_scores_are_read_off_their_values():
    scale = read_scale(None, {"q": {"a": 0, "b": 1}}, human_scale=(0, 3), human_threshold=2)
    assert (scale.what, scale.relevant, scale.gains) == ("labels 0/1, 1 relevant", ">= 1", True)
    scale = read_scale(None, {"q": {"a": 0.25, "b": 0.5}}, human_scale=(0, 3), human_threshold=2)
    assert (scale.relevant, scale.gains, scale.declared) == ("> 0", False, False)
    expected = read_scale(
        None, {"q": {"a": 0.25, "b": 2.5}}, human_scale=(0, 3), human_threshold=2, judge_scale=(0, 3)
    )
    assert expected.relevant == ">= 1.5 (judge scale 0-3)"
