"""Bootstrap replicates computed together from topic counts are the replicates of stacking each
resample (FD), and the intervals are `scipy.stats.bootstrap`'s."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from reljudge.analyses.fd.frechet import frechet_distance
from reljudge.analyses.fd.per_run import fd_at_k
from reljudge.analyses.fd.resamples import fd_weighted, topic_rows
from reljudge.metrics.bootstrap import bootstrap_interval, counts
from reljudge.metrics.ranking import bootstrap_ranking_agreement, kendall_tau_b_batch


@pytest.mark.parametrize(
    ("n_ref", "n_ret", "dim"),
    [(1, 10, 24), (12, 1, 40), (6, 8, 5), (1, 10, 64)],  # reference smaller, retrieved smaller, both > d
)
def test_fd_of_topic_counts_equals_fd_of_the_stacked_resample(n_ref, n_ret, dim):
    rng = np.random.default_rng(n_ref * 100 + dim)
    T = 15
    ref = [rng.normal(size=(n_ref, dim)) for _ in range(T)]
    ret = [rng.normal(size=(n_ret, dim)) + 0.2 for _ in range(T)]
    ref[3] = np.zeros((0, dim))  # a topic without reference vectors
    x, xt = topic_rows(ref)
    y, yt = topic_rows(ret)
    draws = rng.integers(0, T, size=(25, T))
    draws[0] = 3  # only the topic without reference vectors: NaN
    fast = fd_weighted(x, xt, y, yt, counts(draws, T))
    assert np.isnan(fast[0])
    for b in range(1, len(draws)):
        xs = np.concatenate([ref[t] for t in draws[b] if ref[t].size])
        ys = np.concatenate([ret[t] for t in draws[b]])
        assert fast[b] == pytest.approx(frechet_distance(xs, ys), rel=1e-7, abs=1e-9)


def test_fd_at_k_replicates_on_explicit_draws():
    from reljudge.vectors.embedding_source import PrecomputedEmbeddings

    rng = np.random.default_rng(3)
    topics = [f"q{t}" for t in range(8)]
    ids = [f"{q}-{i}" for q in topics for i in range(6)]
    source = PrecomputedEmbeddings(ids, rng.normal(size=(len(ids), 16)))
    qrels = {q: {f"{q}-0": 3, f"{q}-1": 2} for q in topics}
    run = {q: {f"{q}-{i}": float(10 - i) for i in range(6)} for q in topics}
    draws = [list(rng.choice(topics, size=8)) for _ in range(12)]
    result = fd_at_k(qrels, run, source, k=4, draws=draws)
    for sample, value in zip(draws, result.replicates, strict=True):
        xs = source.lookup([d for q in sample for d in (f"{q}-0", f"{q}-1")])[0]
        ys = source.lookup([f"{q}-{i}" for q in sample for i in range(4)])[0]
        assert value == pytest.approx(frechet_distance(xs, ys), rel=1e-7)
    boot = fd_at_k(qrels, run, source, k=4, n_boot=200)
    assert boot.interval is not None and boot.interval.low <= boot.interval.high


def test_the_tau_interval_is_scipys_on_the_topic_resamples():
    rng = np.random.default_rng(5)
    systems, topics = 6, 20
    a = rng.normal(size=(systems, 1)) + rng.normal(size=(systems, topics))
    b = a + rng.normal(scale=0.5, size=(systems, topics))
    x = {f"s{i}": {f"q{t:02d}": a[i, t] for t in range(topics)} for i in range(systems)}
    y = {f"s{i}": {f"q{t:02d}": b[i, t] for t in range(topics)} for i in range(systems)}

    def tau(idx, axis=-1):
        idx = np.atleast_2d(idx)
        return kendall_tau_b_batch(a[:, idx].mean(axis=2), b[:, idx].mean(axis=2))

    for method in ("basic", "BCa", "percentile"):
        got = bootstrap_ranking_agreement(x, y, "kendall", n_boot=300, seed=9, interval=method)
        want = stats.bootstrap(
            (np.arange(topics),), tau, vectorized=True, n_resamples=300, method=method,
            random_state=np.random.default_rng(9),
        ).confidence_interval  # fmt: skip
        assert (got.low, got.high) == pytest.approx(
            (float(np.squeeze(want.low)), float(np.squeeze(want.high)))
        )


def test_several_methods_share_one_set_of_resamples():
    rng = np.random.default_rng(1)
    values = rng.normal(size=30)

    def statistic(W):
        return np.stack([W @ values / W.sum(axis=1), W @ values**2 / W.sum(axis=1)])

    low, high, reps = bootstrap_interval(statistic, 30, n_boot=400, seed=2, method=["BCa", "basic"])
    low_a, high_a, reps_a = bootstrap_interval(statistic, 30, n_boot=400, seed=2, method="BCa")
    low_b, high_b, _ = bootstrap_interval(statistic, 30, n_boot=400, seed=2, method="basic")
    assert np.allclose(reps, reps_a)
    assert (low[0], high[0]) == pytest.approx((low_a[0], high_a[0]))
    assert (low[1], high[1]) == pytest.approx((low_b[1], high_b[1]))
    with pytest.raises(ValueError, match="unknown bootstrap interval"):
        bootstrap_interval(statistic, 30, n_boot=10, method="studentized")


def test_the_t_interval_is_the_estimate_plus_minus_t_times_the_bootstrap_standard_error():
    rng = np.random.default_rng(5)
    systems, topics = 8, 20
    a = rng.normal(size=(systems, 1)) + rng.normal(size=(systems, topics))
    b = a + rng.normal(scale=1.5, size=(systems, topics))
    x = {f"s{i}": {f"q{t:02d}": a[i, t] for t in range(topics)} for i in range(systems)}
    y = {f"s{i}": {f"q{t:02d}": b[i, t] for t in range(topics)} for i in range(systems)}

    def tau(idx, axis=-1):
        idx = np.atleast_2d(idx)
        return kendall_tau_b_batch(a[:, idx].mean(axis=2), b[:, idx].mean(axis=2))

    got = bootstrap_ranking_agreement(x, y, "kendall", n_boot=300, seed=9)
    assert got.method == "t" and got.excludes_estimate_because is None
    reps = stats.bootstrap(
        (np.arange(topics),), tau, vectorized=True, n_resamples=300, method="percentile",
        random_state=np.random.default_rng(9),
    ).bootstrap_distribution  # fmt: skip
    half = stats.t.ppf(0.975, topics - 1) * np.std(reps, ddof=1) * np.sqrt(topics / (topics - 1))
    assert got.value == pytest.approx(stats.kendalltau(a.mean(axis=1), b.mean(axis=1)).statistic)
    assert (got.low, got.high) == pytest.approx((got.value - half, min(got.value + half, 1.0)))  # clipped


def test_an_interval_that_misses_its_estimate_says_why():
    # close systems: the replicates' tau is well below the estimate, and the basic interval,
    # which corrects for that, lies above it; the default t interval holds the estimate
    rng = np.random.default_rng(0)
    systems, topics = 40, 30
    true = np.sort(rng.normal(size=systems))
    a = true[:, None] + rng.normal(scale=1.5, size=(systems, topics))
    b = true[:, None] + rng.normal(scale=1.5, size=(systems, topics))
    x = {f"s{i}": {f"q{t:02d}": a[i, t] for t in range(topics)} for i in range(systems)}
    y = {f"s{i}": {f"q{t:02d}": b[i, t] for t in range(topics)} for i in range(systems)}
    basic = bootstrap_ranking_agreement(x, y, "kendall", n_boot=300, seed=1, interval="basic")
    assert not basic.low <= basic.value <= basic.high
    assert basic.excludes_estimate_because is not None
    assert "below its basic interval" in basic.excludes_estimate_because
    t = bootstrap_ranking_agreement(x, y, "kendall", n_boot=300, seed=1)
    assert t.low <= t.value <= t.high and t.excludes_estimate_because is None


@pytest.mark.parametrize("seed", range(6))
def test_the_default_interval_always_holds_its_estimate(seed):
    rng = np.random.default_rng(seed)
    systems, topics = int(rng.integers(3, 30)), int(rng.integers(2, 40))
    a = rng.normal(size=(systems, 1)) * rng.uniform(0, 2) + rng.normal(size=(systems, topics))
    b = a * rng.uniform(-1, 1) + rng.normal(size=(systems, topics))
    x = {f"s{i}": {f"q{t}": a[i, t] for t in range(topics)} for i in range(systems)}
    y = {f"s{i}": {f"q{t}": b[i, t] for t in range(topics)} for i in range(systems)}
    for method in ("kendall", "tau_ap", "tau_ap_b", "rbo", "spearman"):
        iv = bootstrap_ranking_agreement(x, y, method, n_boot=60, seed=seed)
        assert iv.low <= iv.value <= iv.high, (method, iv)


def test_t_shares_the_resamples_with_the_other_methods():
    rng = np.random.default_rng(1)
    values = rng.normal(size=30)

    def statistic(W):
        return np.stack([W @ values / W.sum(axis=1), W @ values**2 / W.sum(axis=1)])

    low, high, reps = bootstrap_interval(statistic, 30, n_boot=400, seed=2, method=["t", "basic"])
    _, _, reps_b = bootstrap_interval(statistic, 30, n_boot=400, seed=2, method="basic")
    assert np.allclose(reps, reps_b)
    half = stats.t.ppf(0.975, 29) * reps[0].std(ddof=1) * np.sqrt(30 / 29)
    assert (low[0], high[0]) == pytest.approx((values.mean() - half, values.mean() + half))


def test_the_vectorised_spearman_and_pearson_equal_scipys_column_by_column():
    from reljudge.metrics.ranking import pearson_batch, spearman_batch

    rng = np.random.default_rng(5)
    x = rng.integers(0, 4, size=(9, 30)).astype(float)  # ties in every column
    y = x + rng.integers(0, 3, size=(9, 30))
    x[:, 0] = 1.0  # a constant column: NaN, as scipy's
    with np.errstate(invalid="ignore"), pytest.warns(stats.ConstantInputWarning):
        expected_s = [stats.spearmanr(x[:, b], y[:, b]).statistic for b in range(30)]
    assert spearman_batch(x, y) == pytest.approx(expected_s, nan_ok=True)
    with pytest.warns(stats.ConstantInputWarning):
        expected_p = [stats.pearsonr(x[:, b], y[:, b]).statistic for b in range(30)]
    assert pearson_batch(x, y) == pytest.approx(expected_p, nan_ok=True)
