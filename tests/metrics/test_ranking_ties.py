"""Ties in system rankings: every agreement measure is a function of the values alone (never of
the order the systems are listed in), τ_AP is the mean over shared tie-breaking orders, τ_AP-b
and RBO follow their published tie-aware definitions (reference computations written here from
the definitions, loop by loop)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reljudge.metrics import registry
from reljudge.metrics.ranking import (
    METHODS,
    agreement_arrays,
    bootstrap_ranking_agreement,
    ranking_agreement,
    rbo_ties,
    tau_ap,
    tau_ap_b,
)

# few distinct values, so that most draws hold ties (in one ranking, the other or both)
tied_values = st.lists(st.integers(0, 4), min_size=2, max_size=9)


@st.composite
def two_rankings_and_a_permutation(draw):
    x = draw(tied_values)
    n = len(x)
    y = draw(st.lists(st.integers(0, 4), min_size=n, max_size=n))
    order = draw(st.permutations(list(range(n))))
    return np.array(x, float), np.array(y, float), list(order)


def _same(a: float, b: float) -> bool:
    return (np.isnan(a) and np.isnan(b)) or a == pytest.approx(b, rel=1e-12, abs=1e-12)


@pytest.mark.slow  # 150 examples x 6 methods x 5 measures, each four ways: about 1.5-2 s
@pytest.mark.filterwarnings("ignore::scipy.stats.ConstantInputWarning")  # NaN for a constant input
@settings(max_examples=150, deadline=None)
@given(two_rankings_and_a_permutation())
def test_listing_order_never_changes_an_agreement_measure(data):
    x, y, order = data
    for method in METHODS:
        before = agreement_arrays(x, y, method)
        after = agreement_arrays(x[order], y[order], method)
        assert _same(before, after), (method, x, y, order, before, after)
    for m in registry.ranking_measures():
        assert _same(m.compute(x, y), m.compute(x[order], y[order])), m.name
        names = [f"s{i}" for i in range(len(x))]
        as_dicts = dict(zip(names, x, strict=True)), dict(zip(names, y, strict=True))
        listed = {names[i]: x[i] for i in order}, {names[i]: y[i] for i in order}
        assert _same(m(*as_dicts), m(*listed)), m.name


@pytest.mark.slow  # 200 examples of four measures: 0.8-1.1 s
@settings(max_examples=200, deadline=None)
@given(tied_values)
def test_a_ranking_agrees_fully_with_itself_even_with_ties(values):
    x = np.array(values, float)
    assert tau_ap(x, x) == pytest.approx(1.0)
    assert rbo_ties(x, x, 0.9) == pytest.approx(1.0)
    if np.ptp(x) > 0:  # τ-b and τ_AP-b are undefined for a ranking that ties every system
        assert tau_ap_b(x, x) == pytest.approx(1.0)
        assert agreement_arrays(x, x, "kendall") == pytest.approx(1.0)


def _yilmaz(reference: list[float], order: list[int], above) -> float:
    """Yilmaz's τ_AP of ``order`` (best first) against a reference given as ``above(e, d)``."""
    n = len(order)
    total = 0.0
    for i in range(1, n):
        total += sum(above(e, order[i]) for e in order[:i]) / i
    return 2.0 * total / (n - 1) - 1.0


def _tau_ap_by_enumeration(reference, estimate) -> float:
    """The definition: the mean of Yilmaz's τ_AP over every permutation of the systems used as
    the secondary sort key of both rankings."""
    n = len(reference)
    values = []
    for key in itertools.permutations(range(n)):
        order = sorted(range(n), key=lambda i, key=key: (-estimate[i], key[i]))

        def above(e, d, key=key):
            return reference[e] > reference[d] or (reference[e] == reference[d] and key[e] < key[d])

        values.append(_yilmaz(reference, order, above))
    return float(np.mean(values))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3)), min_size=2, max_size=6))
def test_tau_ap_is_the_mean_over_shared_tie_breaking_orders(pairs):
    reference = [float(a) for a, _ in pairs]
    estimate = [float(b) for _, b in pairs]
    assert tau_ap(reference, estimate) == pytest.approx(
        _tau_ap_by_enumeration(reference, estimate), abs=1e-12
    )


def test_tau_ap_without_ties_is_yilmaz_and_known_tie_values():
    rng = np.random.default_rng(3)
    for _ in range(20):
        ref, est = rng.normal(size=8), rng.normal(size=8)
        order = list(np.argsort(-est))
        expected = _yilmaz(list(ref), order, lambda e, d, ref=ref: ref[e] > ref[d])
        assert tau_ap(ref, est) == pytest.approx(expected)
    # the estimate ties the top two: 1.0 or 0.0 by listing order before, now their mean
    assert tau_ap([2, 1, 0], [1, 1, 0]) == pytest.approx(0.5)
    assert tau_ap([1, 2, 0], [1, 1, 0]) == pytest.approx(0.5)
    # one tie in the middle of five: 1.0 or 0.75 by listing order before
    assert tau_ap([5, 4, 3, 2, 1], [5, 4, 4, 2, 1]) == pytest.approx(0.875)
    # a ranking that ties everything agrees with any reference by chance only
    assert tau_ap([3, 2, 1, 0], [1, 1, 1, 1]) == pytest.approx(0.0)


def _tau_ap_b_reference(x, y) -> float:
    """Urbano & Marrero's τ_AP-b from its definition: the mean of the two directions; in the
    direction walking ``w`` (``o`` the other), every system ``i`` below ``w``'s top tie group scores
    c_i / p_i, p_i the systems strictly above ``i`` in ``w``, c_i those of them strictly above ``i``
    in ``o``; the direction is 2 * (mean score) - 1."""

    def direction(w, o):
        scores = []
        for i in range(len(w)):
            p = [j for j in range(len(w)) if w[j] > w[i]]
            if p:
                scores.append(sum(1 for j in p if o[j] > o[i]) / len(p))
        return 2.0 * sum(scores) / len(scores) - 1.0

    return (direction(y, x) + direction(x, y)) / 2.0


@settings(max_examples=200, deadline=None)
@given(two_rankings_and_a_permutation())
def test_tau_ap_b_equals_the_reference_computation(data):
    x, y, _ = data
    if np.ptp(x) == 0 or np.ptp(y) == 0:
        assert np.isnan(tau_ap_b(x, y))
        return
    assert tau_ap_b(x, y) == pytest.approx(_tau_ap_b_reference(list(x), list(y)), abs=1e-12)
    assert tau_ap_b(x, y) == pytest.approx(tau_ap_b(y, x))  # symmetric


def test_tau_ap_b_known_values():
    # no ties: the mean of Yilmaz's τ_AP in both directions
    x, y = [4.0, 3.0, 2.0, 1.0], [3.0, 4.0, 2.0, 1.0]
    assert tau_ap_b(x, y) == pytest.approx((tau_ap(x, y) + tau_ap(y, x)) / 2)
    # x ties its top two, y orders them: y's direction scores the 2nd system 0/1, x's skips the top group
    assert tau_ap_b([2, 2, 1, 0], [3, 2, 1, 0]) == pytest.approx(((2 * (0 + 1 + 1) / 3 - 1) + 1.0) / 2)
    assert np.isnan(tau_ap_b([1, 1, 1], [3, 2, 1]))


def _rbo_by_enumeration(x, y, p) -> float:
    """The definition: the mean of Webber et al.'s extrapolated RBO over every permutation of the
    systems used as the secondary sort key of both rankings."""
    n = len(x)
    values = []
    for key in itertools.permutations(range(n)):
        s = sorted(range(n), key=lambda i, key=key: (-x[i], key[i]))
        t = sorted(range(n), key=lambda i, key=key: (-y[i], key[i]))
        total = sum(len(set(s[:d]) & set(t[:d])) / d * p**d for d in range(1, n + 1))
        values.append((1 - p) / p * total + p**n)
    return float(np.mean(values))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2), st.integers(0, 2)), min_size=1, max_size=6))
def test_rbo_is_the_mean_over_shared_tie_breaking_orders(pairs):
    x = [float(a) for a, _ in pairs]
    y = [float(b) for _, b in pairs]
    assert rbo_ties(x, y, 0.9) == pytest.approx(_rbo_by_enumeration(x, y, 0.9), abs=1e-12)
    assert rbo_ties(x, y, 0.5) == pytest.approx(_rbo_by_enumeration(x, y, 0.5), abs=1e-12)


def test_rbo_with_ties_in_one_ranking_is_rbo_a():
    # Corsi & Urbano's RBO^a: a system in a tie group of t below q others is in the top d with
    # chance clip((d - q) / t, 0, 1), independently in the two rankings when only one ties
    x, y, p = [5.0, 5.0, 5.0, 3.0, 2.0, 1.0], [6.0, 5.0, 4.0, 3.0, 2.0, 1.0], 0.9
    chance = [
        [min(max((d - 0) / 3, 0.0), 1.0) if i < 3 else float(d > i) for d in range(1, 7)] for i in range(6)
    ]
    top_y = [[float(d > i) for d in range(1, 7)] for i in range(6)]
    overlap = [sum(chance[i][d] * top_y[i][d] for i in range(6)) for d in range(6)]
    expected = (1 - p) / p * sum(overlap[d] / (d + 1) * p ** (d + 1) for d in range(6)) + p**6
    assert rbo_ties(x, y, p) == pytest.approx(expected, abs=1e-12)


def test_rbo_without_ties_is_the_rbo_package_rbo_ext():
    import rbo

    rng = np.random.default_rng(5)
    for _ in range(20):
        x, y = rng.normal(size=12), rng.normal(size=12)
        s, t = list(np.argsort(-x)), list(np.argsort(-y))
        assert rbo_ties(x, y, 0.9) == pytest.approx(rbo.RankingSimilarity(s, t).rbo_ext(p=0.9), abs=1e-12)
    # ties: one value, whatever the listing order (1.0 or 0.955 before, by which of the tied came first)
    ref, est = [5, 4, 3, 2, 1], [5, 4, 4, 2, 1]
    listed = dict(zip("abcde", ref, strict=True)), dict(zip("abcde", est, strict=True))
    relisted = {s: listed[0][s] for s in "acbde"}, {s: listed[1][s] for s in "acbde"}
    assert ranking_agreement(*listed, "rbo") == pytest.approx(ranking_agreement(*relisted, "rbo"))
    assert ranking_agreement(*listed, "rbo") == pytest.approx(0.9775)  # the mean of 1.0 and 0.955
    with pytest.raises(ValueError):
        rbo_ties(ref, est, 1.0)


def test_tau_ap_b_is_reported_by_evaluate_only():
    assert "tau_ap_b" in [m.name for m in registry.ranking_measures("evaluate")]
    assert "tau_ap_b" not in [m.name for m in registry.ranking_measures("fd")]
    assert registry.ranking_measure("tau_ap_b").compute(np.array([3.0, 2, 1]), np.array([3.0, 2, 1])) == 1.0


def test_the_bootstrap_interval_does_not_depend_on_the_listing_order():
    rng = np.random.default_rng(4)
    x = {f"s{i}": {f"q{t}": float(rng.integers(0, 3)) for t in range(15)} for i in range(8)}
    y = {s: {q: v + float(rng.integers(0, 2)) for q, v in topics.items()} for s, topics in x.items()}
    names = list(x)[::-1]
    for method in ("kendall", "tau_ap", "tau_ap_b", "rbo"):
        a = bootstrap_ranking_agreement(x, y, method, n_boot=50, seed=3)
        b = bootstrap_ranking_agreement(
            {s: x[s] for s in names}, {s: y[s] for s in names}, method, n_boot=50, seed=3
        )
        assert _same(a.value, b.value) and _same(a.low, b.low) and _same(a.high, b.high), method
