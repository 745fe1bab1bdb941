"""Similarity of answers to judged passages (analyses.answers.similarity) and FD over answers, on
synthetic vectors whose angle to a topic direction falls with the grade."""

from __future__ import annotations

import math

import numpy as np
import pytest

from reljudge.analyses.answers.common_scale import generator_scale_scores as answer_scores
from reljudge.analyses.answers.similarity import (
    answer_grades,
    answer_id,
    cosines,
    cross_grade,
    pick_targets,
    top_grade_targets,
)
from reljudge.analyses.fd.per_run import fd_answers, fd_runs
from reljudge.vectors.embedding_source import PrecomputedEmbeddings

DIM = 8
# a passage of grade g makes this angle with its topic's direction (grade 3 nearly on it)
ANGLE = {3: 0.1, 2: 0.5, 1: 0.9, 0: 1.3}


def _vec(axis: int, angle: float, spin: int, rng: np.random.Generator) -> np.ndarray:
    """A unit vector at ``angle`` from axis ``axis`` (the rest in an orthogonal direction)."""
    other = np.zeros(DIM)
    other[(axis + 1 + spin % (DIM - 1)) % DIM] = 1.0
    if other[axis]:
        other = np.roll(other, 1)
    base = np.zeros(DIM)
    base[axis] = 1.0
    return math.cos(angle) * base + math.sin(angle) * other + rng.normal(0, 0.01, DIM)


def _collection(n_topics: int = 4, per_grade: int = 4):
    rng = np.random.default_rng(0)
    qrels: dict[str, dict[str, float]] = {}
    ids, vecs = [], []
    for t in range(n_topics):
        qid = f"q{t}"
        qrels[qid] = {}
        for g, angle in ANGLE.items():
            for i in range(per_grade):
                d = f"d{t}-{g}-{i}"
                qrels[qid][d] = g
                ids.append(d)
                vecs.append(_vec(t, angle, i, rng))
    # answers: system gN writes a text at the angle of grade N; "off" writes on another topic's axis
    answers: dict[str, dict[str, str]] = {}
    for name, angle in (("g3", ANGLE[3]), ("g1", ANGLE[1]), ("g0", ANGLE[0])):
        answers[name] = {}
        for t in range(n_topics):
            aid = answer_id(name, f"q{t}")
            answers[name][f"q{t}"] = aid
            ids.append(aid)
            vecs.append(_vec(t, angle, 5, rng))
    answers["off"] = {}
    for t in range(n_topics):
        aid = answer_id("off", f"q{t}")
        answers["off"][f"q{t}"] = aid
        ids.append(aid)
        vecs.append(_vec((t + n_topics) % DIM, 0.2, 5, rng))
    return qrels, answers, PrecomputedEmbeddings(ids, np.array(vecs))


def test_cosines_and_zero_vector():
    m = np.array([[1.0, 0.0], [0.0, 2.0], [1.0, 1.0], [0.0, 0.0]])
    assert cosines(np.array([3.0, 0.0]), m) == pytest.approx([1.0, 0.0, math.sqrt(0.5), 0.0])
    assert cosines(np.zeros(2), m) == pytest.approx([0.0] * 4)


def test_pick_targets_modes():
    qrels = {"q": {"a": 3, "b": 2, "c": 2, "z": 0}, "none": {"x": 1}}
    assert "none" not in pick_targets(qrels)
    assert pick_targets(qrels, mode="top-grade-first") == {"q": "a"}
    chosen = {pick_targets(qrels, seed=s)["q"] for s in range(30)}
    assert chosen == {"a", "b", "c"}  # seeded random among grades 2-3
    assert pick_targets(qrels, seed=4) == pick_targets(qrels, seed=4)
    with pytest.raises(ValueError):
        pick_targets(qrels, mode="best")


def test_cross_grade_falls_with_grade_and_leaves_the_target_out():
    qrels, _, source = _collection()
    targets = pick_targets(qrels, mode="top-grade-first")
    stats = cross_grade(qrels, targets, source)
    rows = stats.summary()
    assert [r["grade"] for r in rows] == [3, 2, 1, 0]
    means = [r["mean"] for r in rows]
    assert means == sorted(means, reverse=True) and means[0] > means[-1] + 0.3
    assert rows[0]["n"] == 4 * 3  # the target itself is not compared with itself
    assert stats.missing == []


def test_cross_grade_reports_missing_vectors():
    qrels = {"q": {"t": 3, "x": 0, "gone": 1}}
    source = PrecomputedEmbeddings(["t", "x"], np.eye(2))
    stats = cross_grade(qrels, {"q": "t"}, source)
    assert stats.missing == [("q", "gone")] and stats.values == {0.0: [0.0]}


def test_answer_grades_and_scores_rank_the_synthetic_systems():
    qrels, answers, source = _collection()
    grades = answer_grades(qrels, answers, source)
    for system in ("g3", "g1", "g0"):
        per = grades[system]
        assert list(per) == [3, 2, 1, 0]
        assert per[3] > per[0]
    scores = answer_scores(qrels, answers, source)
    order = sorted(scores, key=lambda s: -scores[s].score)
    assert order == ["g3", "g1", "g0", "off"]
    assert scores["g3"].pairs == 4 * 4 and scores["g3"].topics == 4
    macro = answer_scores(qrels, answers, source, macro=True)
    assert macro["g3"].score == pytest.approx(scores["g3"].score)  # same pairs per topic


def test_answer_scores_use_the_highest_grade_of_each_topic():
    qrels = {"q1": {"a": 3, "b": 2}, "q2": {"c": 2, "d": 1}, "q3": {"e": 1}}
    assert top_grade_targets(qrels) == {"q1": ["a"], "q2": ["c"]}
    source = PrecomputedEmbeddings(
        ["a", "b", "c", "d", "e", "A1", "A2"],
        np.array([[1, 0], [0, 1], [1, 0], [0, 1], [1, 1], [1, 0], [0, 1]]),
    )
    scores = answer_scores(qrels, {"s": {"q1": "A1", "q2": "A2", "q3": "A1", "q4": "nope"}}, source)
    assert scores["s"].score == pytest.approx(0.5)  # cos(A1, a) = 1, cos(A2, c) = 0; q3 has no target
    assert (scores["s"].pairs, scores["s"].topics) == (2, 2)


def test_answer_without_vector_is_counted_not_scored():
    qrels = {"q": {"a": 3}}
    source = PrecomputedEmbeddings(["a"], np.array([[1.0, 0.0]]))
    scores = answer_scores(qrels, {"s": {"q": "missing"}}, source)
    assert math.isnan(scores["s"].score) and scores["s"].missing_vectors == 1
    assert answer_grades(qrels, {"s": {"q": "missing"}}, source) == {"s": {}}


@pytest.mark.filterwarnings("ignore::scipy.stats.ConstantInputWarning")
def test_fd_answers_ranks_close_answers_first_and_matches_a_k1_run():
    qrels, answers, source = _collection(n_topics=6, per_grade=5)
    results = fd_answers(qrels, answers, source)
    fds = {s: r.fd for s, r in results.items()}
    assert fds["g3"] < fds["g1"] < fds["g0"]
    assert fds["off"] > fds["g3"]
    assert results["g3"].n_retrieved == 6 and results["g3"].n_reference == 6 * 10
    # the same numbers as fd_runs on runs that each retrieve the answer alone (k = 1)
    runs = {s: {q: {aid: 1.0} for q, aid in by_qid.items()} for s, by_qid in answers.items()}
    report = fd_runs(qrels, runs, source, k=1)
    for s in answers:
        assert report.runs[s].fd == pytest.approx(fds[s])
