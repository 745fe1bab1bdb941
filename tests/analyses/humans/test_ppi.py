"""The combined estimators on synthetic data with a known truth: unbiasedness of the linear
estimator, coverage sanity of a small simulation, trec_eval equivalence of the full-label values,
the ideal DCG's derivative (all seeded, no shared data)."""

from __future__ import annotations

import numpy as np
import pytest

from reljudge.analyses.humans.design import label_stratum, stratified_sample
from reljudge.analyses.humans.ppi import (
    Design,
    Population,
    estimate_linear,
    estimate_ndcg,
    estimate_share,
    idcg,
    linear_weights,
    ndcg_weights,
    true_ndcg,
)
from reljudge.metrics.measures import mean_measure


def _world(topics=12, docs=40, seed=0, systems=4):
    rng = np.random.default_rng(seed)
    keys = sorted((f"q{t:02d}", f"d{j:03d}") for t in range(topics) for j in range(docs))
    human = rng.choice(4, len(keys), p=[0.45, 0.25, 0.18, 0.12]).astype(float)
    llm = np.where(rng.random(len(keys)) < 0.65, human, rng.integers(0, 4, len(keys))).astype(float)
    pop = Population(keys, llm)
    runs = {
        f"s{s}": {
            q: {d: float(rng.normal() + 0.3 * s * human[pop.index[(q, d)]]) for (qq, d) in keys if qq == q}
            for q in pop.topics
        }
        for s in range(systems)
    }
    return keys, human, llm, pop, runs


def _design(llm, human, n, seed):
    strata = [label_stratum(v) for v in llm]
    names = sorted(set(strata))
    chosen = stratified_sample(strata, n, seed)
    lab = np.full(llm.size, np.nan)
    lab[chosen.items] = human[chosen.items]
    return Design(np.array([names.index(s) for s in strata]), lab, names)


def test_full_label_values_equal_trec_eval():
    keys, human, _, pop, runs = _world(topics=5, docs=30)
    qrels: dict[str, dict[str, int]] = {}
    for (q, d), g in zip(keys, human, strict=True):
        qrels.setdefault(q, {})[d] = int(g)
    names, w, tw = ndcg_weights(pop, runs, 10)
    got = true_ndcg(pop, w, tw, human, 10)
    want = [mean_measure(qrels, runs[n], "nDCG@10") for n in names]
    assert got == pytest.approx(want, abs=1e-12)
    names, a = linear_weights(pop, runs, 10)
    assert a @ (human >= 2) == pytest.approx([mean_measure(qrels, runs[n], "P(rel=2)@10") for n in names])


def test_ideal_dcg_derivative_matches_a_finite_difference():
    counts = np.array([[30.0, 4.0, 3.5, 2.2], [5.0, 1.0, 0.0, 12.0]])
    total, deriv = idcg(counts, 10)
    for g in range(4):
        bumped = counts.copy()
        bumped[:, g] += 1e-6
        assert (idcg(bumped, 10)[0] - total) / 1e-6 == pytest.approx(deriv[:, g], abs=1e-4)
    # whole counts give the ideal DCG of the sorted grades
    sorted_gains = [3] * 2 + [2] * 3 + [1] * 4 + [0]
    assert idcg(np.array([[1.0, 4.0, 3.0, 2.0]]), 10)[0][0] == pytest.approx(
        sum(g / np.log2(r + 2) for r, g in enumerate(sorted_gains))
    )


@pytest.mark.slow
def test_linear_estimate_is_unbiased_and_narrower_than_human_only():
    keys, human, llm, pop, runs = _world()
    names, a = linear_weights(pop, runs, 10)
    truth = a @ (human >= 2)
    values, alone, widths, human_widths = [], [], [], []
    for seed in range(400):
        d = _design(llm, human, 120, seed)
        x_h = np.where(np.isnan(d.human), 0.0, (d.human >= 2).astype(float))
        est = estimate_linear(a, (llm >= 2).astype(float), x_h, d, variance="design")
        values.append([e.value for e in est])
        alone.append([e.human_only for e in est])
        widths.append([e.width for e in est])
        human_widths.append([e.human_only_width for e in est])
    values, alone = np.array(values), np.array(alone)
    # exactly unbiased for a fixed λ: the mean of 400 draws within 4 standard errors of the truth
    for got in (values, alone):
        se = got.std(axis=0) / np.sqrt(len(got))
        assert np.all(np.abs(got.mean(axis=0) - truth) < 4 * se + 1e-9)
    assert np.mean(widths) < np.mean(human_widths)


@pytest.mark.slow
def test_share_and_ndcg_intervals_cover_about_their_nominal_rate():
    keys, human, llm, pop, runs = _world(topics=10, docs=60)
    names, w, tw = ndcg_weights(pop, runs, 10)
    truth_ndcg = true_ndcg(pop, w, tw, human, 10)
    truth_share = float((human >= 2).mean())
    _, a = linear_weights(pop, runs, 10)
    truth_p = a @ (human >= 2)
    hits_share, hits_ndcg, hits_p = [], [], []
    widths: list[tuple[float, float]] = []
    for seed in range(150):
        d = _design(llm, human, 300, seed)
        e = estimate_share(llm, d.human, d, 2)
        hits_share.append(e.low <= truth_share <= e.high)
        x_h = np.where(np.isnan(d.human), 0.0, (d.human >= 2).astype(float))
        p_at = estimate_linear(a, (llm >= 2).astype(float), x_h, d)  # PPI, pooled variance
        hits_p += [x.low <= t <= x.high for x, t in zip(p_at, truth_p, strict=True)]
        est = estimate_ndcg(pop, w, tw, d, 10, replicates=100, seed=seed)
        hits_ndcg += [x.low <= t <= x.high for x, t in zip(est, truth_ndcg, strict=True)]
        widths += [(x.width, x.human_only_width) for x in est]
    assert 0.88 <= np.mean(hits_share) <= 0.99
    # the union of two intervals (module doc): at least nominal, conservative, narrower than human-only
    assert 0.9 <= np.mean(hits_ndcg)
    assert np.mean([w for w, _ in widths]) < np.mean([h for _, h in widths])
    assert 0.9 <= np.mean(hits_p) <= 0.99  # the LLM's errors here do not depend on the rank


def test_a_stratum_without_two_labels_is_refused():
    stratum = np.array([0, 0, 0, 1, 1, 1])
    human = np.array([1.0, 0.0, np.nan, 1.0, np.nan, np.nan])
    with pytest.raises(ValueError, match="stratum '1' has 3 items and 1 labelled"):
        estimate_share(np.zeros(6), human, Design(stratum, human, ["0", "1"]), 1)


def test_a_stratum_taken_whole_adds_no_variance():
    stratum = np.array([0, 0, 1, 1, 1, 1])
    human = np.array([1.0, 0.0, 1.0, 1.0, 0.0, 0.0])  # every item labelled
    e = estimate_share(np.array([1.0, 1, 1, 1, 1, 1]), human, Design(stratum, human, ["a", "b"]), 1)
    assert e.value == pytest.approx(0.5)
    assert e.se == 0.0
