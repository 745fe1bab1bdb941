"""Trajectories: the sampler against the exact expectation, Plackett-Luce probabilities, salience
that puts relevant images first, and results that do not depend on the order of the input.

Tolerance of sampler vs exact: with m sampled trajectories the sampled mean of a measure differs
from its exact expectation by at most 4 standard errors, sqrt(Var/m), Var the exact variance of
the measure over trajectories (seeded: the test is deterministic; 4 standard errors is a
1-in-15,000 event for a mean of this many draws)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from reljudge.analyses.grids import GridPreference, GridSettings, evaluate_grids, grid_values
from reljudge.analyses.grids.measures import relevance, similarity, trajectory_values
from reljudge.analyses.grids.trajectories import (
    exact_orders,
    gumbel_noise,
    order_probabilities,
    sample_orders,
)

SAMPLES = 20_000


def grid(seed=1, k=5, d=6):
    rng = np.random.default_rng(seed)
    target = rng.normal(size=(1, d))
    images = target + rng.normal(size=(k, d))
    return images, target, rng.uniform(0.1, 1.0, size=k)


@pytest.mark.parametrize("law", ["uniform", "salience"])
def test_the_sampler_matches_the_exact_expectation(law):
    images, target, salience = grid()
    rel, sim = relevance(images, target), similarity(images)
    orders = exact_orders(5)
    probs = order_probabilities(orders, law, salience)
    assert probs.sum() == pytest.approx(1.0)
    exact = trajectory_values(rel, sim, orders)
    sampled = trajectory_values(rel, sim, sample_orders(gumbel_noise(7, "q", SAMPLES, 5), law, salience))
    for name, values in exact.items():
        mean = probs @ values
        sd = math.sqrt(probs @ (values - mean) ** 2)
        assert abs(sampled[name].mean() - mean) <= 4 * sd / math.sqrt(SAMPLES), name


def test_plackett_luce_probabilities_by_hand_and_first_image_frequencies():
    s = np.array([0.5, 0.3, 0.2])
    p = order_probabilities(np.array([[0, 1, 2], [2, 1, 0]]), "salience", s)
    assert p == pytest.approx([0.5 * 0.3 / 0.5, 0.2 * 0.3 / 0.8])
    orders = sample_orders(gumbel_noise(0, "q", SAMPLES, 3), "salience", s)
    first = np.bincount(orders[:, 0], minlength=3) / SAMPLES
    assert first == pytest.approx(s, abs=4 * math.sqrt(0.25 / SAMPLES))


def test_images_of_zero_salience_come_last():
    s = np.array([0.0, 1.0, 0.0, 2.0])
    orders = sample_orders(gumbel_noise(0, "q", 500, 4), "salience", s)
    assert set(map(tuple, orders[:, 2:])) <= {(0, 2), (2, 0)}
    probs = order_probabilities(exact_orders(4), "salience", s)
    assert probs.sum() == pytest.approx(1.0)
    allowed = exact_orders(4)[probs > 0]
    assert all(set(o[2:]) == {0, 2} for o in allowed)
    # all zero: uniform
    assert order_probabilities(exact_orders(3), "salience", np.zeros(3)) == pytest.approx(np.full(6, 1 / 6))


def test_salience_that_puts_relevant_images_first_raises_the_expected_measure():
    images, target, _ = grid(seed=4, k=6)
    settings = GridSettings(exact=True)

    def by_salience(images, target, names):
        rel = relevance(images, target)
        towards, away, flat = rel / rel.sum(), (1.0 - rel) / (1.0 - rel).sum(), np.ones(len(rel))
        high, low, even = (
            grid_values(images, target, salience=s, settings=settings, trajectory="salience")
            for s in (towards, away, flat)
        )
        for name in names:
            assert high[name] > even[name] > low[name], name
        # the uniform variants do not use salience
        assert high["RBP_delta_u"] == pytest.approx(low["RBP_delta_u"])

    by_salience(images, target, ("RBP", "ERR"))
    # images that share nothing (delta = 1 throughout): the discounted measures rise too
    distinct = np.diag([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    by_salience(
        distinct, np.array([[0.9, 0.1, 0.5, 0.3, 0.7, 0.2]]), ("RBP", "RBP_delta", "ERR", "ERR_delta")
    )


def test_row_major_is_the_list_read_in_order():
    images, target, _ = grid(k=4)
    rel = relevance(images, target)
    values = grid_values(images, target, settings=GridSettings(), trajectory="row-major")
    assert values["RBP"] == pytest.approx(float(rel @ 0.9 ** np.arange(4)))


@pytest.mark.slow
def test_results_do_not_depend_on_the_order_of_the_input():
    rng = np.random.default_rng(5)
    vectors = {f"i{n}": rng.normal(size=4) for n in range(12)}
    grids = {
        (f"q{p}", s): [f"i{(p * 3 + j + o) % 12}" for j in range(3)]
        for p in range(3)
        for o, s in enumerate("AB")
    }
    targets = {f"q{p}": rng.normal(size=(2, 4)) for p in range(3)}
    salience = {name: float(rng.uniform(0.1, 1)) for name in vectors}
    prefs = [GridPreference(f"q{p}", "A", "B", (-1) ** p) for p in range(3)]
    one = evaluate_grids(
        grids, vectors, targets, salience=salience, preferences=prefs, settings=GridSettings(n_boot=50)
    )
    flipped = evaluate_grids(
        dict(reversed(list(grids.items()))),
        dict(reversed(list(vectors.items()))),
        dict(reversed(list(targets.items()))),
        salience=dict(reversed(list(salience.items()))),
        preferences=prefs[::-1],
        settings=GridSettings(n_boot=50),
    )
    assert one.per_prompt == flipped.per_prompt
    assert one.per_system == flipped.per_system
    assert one.agreement == flipped.agreement


def test_the_exact_expectation_is_limited_to_small_grids():
    with pytest.raises(ValueError, match="k <= 8"):
        exact_orders(9)


def test_oversized_grids_and_missing_pieces_are_input_errors():
    from reljudge.errors import InputError

    vectors = {f"i{n}": np.ones(2) for n in range(1025)}
    with pytest.raises(InputError, match="at most 1024 images"):
        evaluate_grids({("q", "A"): list(vectors)}, vectors, {"q": np.ones((1, 2))})
    with pytest.raises(InputError, match="no vector for image 'x'"):
        evaluate_grids({("q", "A"): ["i0", "x"]}, vectors, {"q": np.ones((1, 2))})
    with pytest.raises(InputError, match="prompt 'q' has no target"):
        evaluate_grids({("q", "A"): ["i0", "i1"]}, vectors, {})
    with pytest.raises(InputError, match="no salience for image 'i1'"):
        evaluate_grids({("q", "A"): ["i0", "i1"]}, vectors, {"q": np.ones((1, 2))}, salience={"i0": 1.0})
