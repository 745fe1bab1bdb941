"""The grid measures from their definitions (thesis §5.2, Eq. 5.1-5.4), on grids computed by hand."""

from __future__ import annotations

import numpy as np
import pytest

from reljudge.analyses.grids.baselines import diversity, fid, mean_pairwise_cosine
from reljudge.analyses.grids.measures import (
    err,
    novelty_discount,
    rbp,
    relevance,
    similarity,
    trajectory_values,
)


def test_rbp_by_hand():
    # Eq. 5.1 without (1 - gamma): 1 + 0.9 * 0.5 + 0.81 * 0 + 0.729 * 1
    assert rbp([1.0, 0.5, 0.0, 1.0], 0.9)[0] == pytest.approx(1 + 0.45 + 0 + 0.729)
    assert rbp([[0.2, 0.4]], 0.5)[0] == pytest.approx(0.2 + 0.5 * 0.4)


def test_err_by_hand():
    # Eq. 5.2 with g = f: f1 + gamma f2 (1 - f1) + gamma^2 f3 (1 - f1)(1 - f2)
    gains = [0.5, 0.4, 0.8]
    expected = 0.5 + 0.9 * 0.4 * 0.5 + 0.81 * 0.8 * 0.5 * 0.6
    assert err([gains], 0.9)[0] == pytest.approx(expected)
    # a fully relevant first image stops the user: nothing after it counts
    assert err([[1.0, 1.0, 1.0]], 0.9)[0] == pytest.approx(1.0)
    # a given g: stop with probability f^2
    squared = 0.5 + 0.9 * 0.4 * 0.75 + 0.81 * 0.8 * 0.75 * 0.84
    assert err([gains], 0.9, stop=lambda g: g**2)[0] == pytest.approx(squared)


def test_err_never_exceeds_rbp_and_discounting_never_raises():
    rng = np.random.default_rng(3)
    for _ in range(20):
        images, target = rng.normal(size=(6, 5)), rng.normal(size=(1, 5))
        rel, sim = relevance(images, target), similarity(images)
        orders = np.array([rng.permutation(6) for _ in range(10)])
        v = trajectory_values(rel, sim, orders)
        assert np.all(v["ERR"] <= v["RBP"] + 1e-12)
        assert np.all(v["RBP_delta"] <= v["RBP"] + 1e-12) and np.all(v["ERR_delta"] <= v["ERR"] + 1e-12)


def test_relevance_is_the_clipped_cosine_max_or_mean_over_targets():
    images = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0]])
    targets = np.array([[1.0, 0.0], [1.0, 1.0]])
    half = 1 / np.sqrt(2)
    assert relevance(images, targets, "max") == pytest.approx([1.0, half, 0.0])
    assert relevance(images, targets, "mean") == pytest.approx([(1 + half) / 2, half / 2, 0.0])
    with pytest.raises(ValueError):
        relevance(images, targets, "median")


def test_delta_on_duplicated_images():
    # images 0 and 2 are the same; 1 is orthogonal to both
    images = np.array([[1.0, 0.0], [0.0, 1.0], [2.0, 0.0]])
    sim = similarity(images)
    delta = novelty_discount(sim, np.array([[0, 1, 2], [2, 0, 1]]))
    # order 0,1,2: the first is new, 1 is orthogonal to 0, 2 repeats 0 -> nothing new
    assert delta[0] == pytest.approx([1.0, 1.0, 0.0])
    # order 2,0,1: 0 repeats 2
    assert delta[1] == pytest.approx([1.0, 0.0, 1.0])
    # a grid of one image repeated: only its first inspection counts
    same = np.tile([[0.6, 0.8]], (4, 1))
    rel = relevance(same, np.array([[0.6, 0.8]]))
    v = trajectory_values(rel, similarity(same), np.arange(4)[None, :], 0.9)
    assert v["RBP_delta"][0] == pytest.approx(1.0) and v["ERR_delta"][0] == pytest.approx(1.0)
    assert v["RBP"][0] == pytest.approx(1 + 0.9 + 0.81 + 0.729)


def test_delta_discounts_the_stop_probability_too():
    images = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    rel = np.array([0.5, 0.5, 0.5])
    v = trajectory_values(rel, similarity(images), np.array([[0, 1, 2]]), 0.9)
    # gains with delta: 0.5, 0, 0.5; the user goes on past the duplicate with probability 1
    assert v["ERR_delta"][0] == pytest.approx(0.5 + 0.81 * 0.5 * 0.5 * 1.0)


def test_diversity_is_one_minus_the_mean_pairwise_cosine():
    images = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    mean = (0 + 1 / np.sqrt(2) + 1 / np.sqrt(2)) / 3
    assert mean_pairwise_cosine(images) == pytest.approx(mean)
    assert diversity(images) == pytest.approx(1 - mean)
    assert diversity(np.tile([[1.0, 2.0]], (5, 1))) == pytest.approx(0.0)
    assert np.isnan(mean_pairwise_cosine(np.ones((1, 3))))


def test_fid_is_zero_for_the_same_set_and_nan_for_too_few_vectors():
    x = np.random.default_rng(0).normal(size=(10, 3))
    assert fid(x, x) == pytest.approx(0.0, abs=1e-9)
    assert fid(x + 1.0, x) == pytest.approx(3.0)
    assert np.isnan(fid(x[:1], x))
