"""Label-level metrics: alignment, Cohen's kappa, Krippendorff's alpha (cross-checked)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from reljudge.metrics import (
    binarize,
    cohen_kappa,
    confusion_matrix,
    human_alignment,
    krippendorff_alpha,
    labels_matrix,
    paired_labels,
    preference_alignment,
)

QRELS = {"q1": {"b1": 3, "b2": 3, "a1": 2, "a2": 1, "u1": 0, "u2": 0}, "q2": {"x": 1, "y": 0}}


def brute_alignment(qrels, scores, unacceptable=0):
    out = {c: [0, 0, 0] for c in ("BvU", "AvU", "BvA")}
    for qid, grades in qrels.items():
        top = max(grades.values())
        if top <= unacceptable:
            continue
        cat = {d: "B" if g == top else "U" if g <= unacceptable else "A" for d, g in grades.items()}
        for a, b in itertools.permutations(grades, 2):
            key = {("B", "U"): "BvU", ("A", "U"): "AvU", ("B", "A"): "BvA"}.get((cat[a], cat[b]))
            if key is None or a not in scores.get(qid, {}) or b not in scores.get(qid, {}):
                continue
            sa, sb = scores[qid][a], scores[qid][b]
            out[key][0 if sa > sb else 1 if sa == sb else 2] += 1
    return out


def test_alignment_counts_by_hand():
    scores = {"q1": {"b1": 3, "b2": 1, "a1": 1, "a2": 0, "u1": 0, "u2": 2}, "q2": {"x": 0, "y": 0}}
    result = human_alignment(QRELS, scores)
    # q1: B={b1:3,b2:1}, A={a1:1,a2:0}, U={u1:0,u2:2}; q2: x is Best (grade 1), y Unacceptable
    assert (result.counts["BvU"].agree, result.counts["BvU"].tie, result.counts["BvU"].disagree) == (3, 1, 1)
    assert (result.counts["AvU"].agree, result.counts["AvU"].tie, result.counts["AvU"].disagree) == (1, 1, 2)
    assert (result.counts["BvA"].agree, result.counts["BvA"].tie, result.counts["BvA"].disagree) == (3, 1, 0)
    assert result.fractions("BvA") == (0.75, 0.25, 0.0)


@pytest.mark.parametrize("seed", range(5))
def test_alignment_matches_brute_force(seed):
    rng = np.random.default_rng(seed)
    qrels = {f"q{t}": {f"d{i}": int(rng.integers(0, 4)) for i in range(12)} for t in range(6)}
    scores = {
        q: {d: float(rng.integers(0, 3)) for d in docs if rng.random() > 0.1} for q, docs in qrels.items()
    }
    result = human_alignment(qrels, scores)
    brute = brute_alignment(qrels, scores)
    for comp, (a, t, d) in brute.items():
        c = result.counts[comp]
        assert (c.agree, c.tie, c.disagree) == (a, t, d)


def test_alignment_missing_and_antique_scale():
    qrels = {"q": {"best": 4, "ok": 2, "bad": 1}}
    result = human_alignment(qrels, {"q": {"best": 5.0, "ok": 0.5}}, unacceptable=1)
    assert result.missing == 1 and result.counts["BvU"].total == 0 and result.counts["BvA"].agree == 1
    filled = human_alignment(qrels, {"q": {"best": 5.0, "ok": 0.5}}, unacceptable=1, missing=0)
    assert filled.counts["BvU"].agree == 1 and filled.counts["AvU"].agree == 1


def test_preference_alignment_records():
    prefs = [
        ("q1", "b1", "u1", 1),  # BvU agree
        ("q1", "u1", "b1", 1),  # BvU disagree
        ("q1", "a1", "u2", 0),  # AvU tie
        ("q1", "a1", "b2", 2),  # BvA agree (b2 preferred)
        ("q1", "b1", "b2", 1),  # same category: ignored
        ("q1", "zz", "b2", 1),  # unjudged: missing
    ]
    r = preference_alignment(QRELS, prefs)
    assert (r.counts["BvU"].agree, r.counts["BvU"].disagree) == (1, 1)
    assert r.counts["AvU"].tie == 1 and r.counts["BvA"].agree == 1 and r.missing == 1
    with pytest.raises(ValueError):
        preference_alignment(QRELS, [("q1", "b1", "u1", 3)])


def test_kappa_matches_sklearn():
    metrics = pytest.importorskip(
        "sklearn.metrics", reason="scikit-learn (the reference, in the dev extra) is not installed"
    )
    cohen_kappa_score = metrics.cohen_kappa_score

    rng = np.random.default_rng(1)
    a = rng.integers(0, 4, 500)
    b = np.clip(a + rng.integers(-1, 2, 500), 0, 3)
    for w in (None, "linear", "quadratic"):
        assert cohen_kappa(a, b, weights=w) == pytest.approx(cohen_kappa_score(a, b, weights=w), abs=1e-12)
    assert cohen_kappa(binarize(a, 2), binarize(b, 2)) == pytest.approx(cohen_kappa_score(a >= 2, b >= 2))
    with pytest.raises(ValueError):
        cohen_kappa(a, b, weights="cubic")


def test_confusion_matrix_and_pairs():
    cats, m = confusion_matrix([0, 1, 1, 2], [0, 1, 2, 2])
    assert cats == [0, 1, 2] and m.tolist() == [[1, 0, 0], [0, 1, 1], [0, 0, 1]]
    keys, h, j = paired_labels({"q": {"a": 1, "b": 0}}, {"q": {"a": 1}})
    assert keys == [("q", "a")] and h.tolist() == [1.0] and j.tolist() == [1.0]
    _, h, j = paired_labels({"q": {"a": 1, "b": 0}}, {"q": {"a": 1}}, missing=0)
    assert j.tolist() == [1.0, 0.0]


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval"])
def test_alpha_matches_krippendorff_package(level):
    krippendorff = pytest.importorskip(
        "krippendorff", reason="the krippendorff package (the reference, in the dev extra) is not installed"
    )

    rng = np.random.default_rng(7)
    truth = rng.integers(0, 4, 300).astype(float)
    data = np.vstack([np.clip(truth + rng.integers(-1, 2, 300), 0, 3) for _ in range(4)])
    data[rng.random(data.shape) < 0.2] = np.nan
    ours = krippendorff_alpha(data, level=level)
    ref = krippendorff.alpha(reliability_data=data, level_of_measurement=level)
    assert ours == pytest.approx(ref, abs=1e-10)


def test_alpha_edge_cases_and_matrix():
    assert np.isnan(krippendorff_alpha([[1, 1, 1], [1, 1, 1]]))
    assert krippendorff_alpha([[0, 1, 0, 1], [0, 1, 0, 1]]) == pytest.approx(1.0)
    units, data = labels_matrix([{"q": {"a": 1, "b": 0}}, {"q": {"b": 1, "c": 2}}])
    assert units == [("q", "a"), ("q", "b"), ("q", "c")]
    assert np.isnan(data[1, 0]) and data[1, 2] == 2
