"""``judge fd``'s intervals over topics: each run's FD by the delete-one-topic jackknife, the
agreement with the measure over random halves of the topics; neither duplicates a topic, and every
interval holds its estimate (on real-shaped synthetic collections and on random vectors)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from reljudge.analyses.fd.frechet import frechet_distance
from reljudge.analyses.fd.per_run import fd_at_k, fd_runs
from reljudge.analyses.fd.resamples import (
    half_sample_interval,
    half_samples,
    jackknife_interval,
    leave_one_out,
    subsample_size,
)
from reljudge.metrics.registry import ranking_measures
from reljudge.vectors.embedding_source import PrecomputedEmbeddings


def collection(n_topics=20, n_runs=8, dim=24, k=5, random_vectors=False, seed=0):
    """Topics with a centre; one judged relevant passage near it; runs that rank passages closer to
    the centre (and the relevant passage itself) higher the better they are. ``random_vectors``:
    every passage an independent random vector instead (no signal but shared passages)."""
    rng = np.random.default_rng(seed)
    ids, vectors, qrels, runs = [], [], {}, {}
    for t in range(n_topics):
        q = f"q{t}"
        centre = rng.normal(size=dim)
        qrels[q] = {f"{q}-rel": 3}
        ids.append(f"{q}-rel")
        vectors.append(centre + rng.normal(scale=0.5, size=dim))
        for j in range(20):
            ids.append(f"{q}-d{j}")
            vectors.append(centre * (1 - j / 20) + rng.normal(size=dim))
            qrels[q][f"{q}-d{j}"] = int(j < 3)
    if random_vectors:
        vectors = list(rng.normal(size=(len(ids), dim)))
    for r in range(n_runs):
        quality = r / n_runs
        run = {}
        for t in range(n_topics):
            q = f"q{t}"
            cands = [f"{q}-rel"] + [f"{q}-d{j}" for j in range(20)]
            noise = rng.normal(scale=6.0, size=len(cands))
            order = np.argsort(np.arange(len(cands)) * quality + noise)
            run[q] = {cands[j]: float(len(cands) - i) for i, j in enumerate(order)}
        runs[f"run{r}"] = run
    return qrels, runs, PrecomputedEmbeddings(ids, np.array(vectors))


def test_jackknife_interval_is_the_textbook_one_and_holds_the_estimate():
    rng = np.random.default_rng(0)
    deleted = rng.normal(10.0, 0.2, size=30)
    low, high, se = jackknife_interval(9.0, deleted, 0.95)
    n = len(deleted)
    assert se == pytest.approx(math.sqrt((n - 1) / n * ((deleted - deleted.mean()) ** 2).sum()))
    assert (low, high) == pytest.approx((9.0 - 1.959964 * se, 9.0 + 1.959964 * se), rel=1e-6)
    assert all(math.isnan(v) for v in jackknife_interval(1.0, np.array([1.0, np.nan])))


def test_half_sample_interval_rescales_and_clips_but_keeps_the_estimate():
    rng = np.random.default_rng(1)
    reps = rng.normal(0.9, 0.05, size=200)
    low, high, se = half_sample_interval(0.95, reps, 40, 0.95, bounds=(-1.0, 1.0))
    assert se == pytest.approx(reps.std(ddof=1) * math.sqrt(20 / 20))
    assert low == pytest.approx(0.95 - 1.959964 * se, rel=1e-6) and high == 1.0
    low, high, _ = half_sample_interval(1.0, reps, 41, 0.95, bounds=(-1.0, 1.0))
    assert low < 1.0 == high
    W = half_samples(41, 30, seed=2)
    assert W.shape == (30, 41) and set(np.unique(W)) == {0.0, 1.0} and (W.sum(axis=1) == 20).all()
    assert (leave_one_out(4) == 1 - np.eye(4)).all()


def test_subsamples_keep_fd_on_the_side_of_the_dimension_it_is_on():
    """FD behaves differently with fewer vectors than dimensions: 53 reference vectors in 32
    dimensions are subsampled with at least 33 topics, not 26; in 384 dimensions with half."""
    assert subsample_size(53, 53, 384) == 26
    assert subsample_size(53, 53, 32) == 33
    assert subsample_size(53, 3427, 384) == 26  # half of 3,427 is still more than 384
    assert subsample_size(53, 60, 58) == 51  # at most n - 2
    W = half_samples(53, 5, seed=1, m=33)
    assert (W.sum(axis=1) == 33).all()
    reps = np.random.default_rng(0).normal(size=100)
    _, _, se = half_sample_interval(0.0, reps, 53, m=33)
    assert se == pytest.approx(reps.std(ddof=1) * math.sqrt(33 / 20))


def test_jackknife_replicates_are_the_fd_without_each_topic():
    qrels, runs, source = collection(n_topics=8, n_runs=1)
    result = fd_at_k(qrels, runs["run0"], source, k=5, n_boot=1)
    topics = result.topics
    assert len(result.replicates) == len(topics) and result.interval is not None
    for t, value in zip(topics, result.replicates, strict=True):
        kept = [q for q in topics if q != t]
        x = source.lookup([f"{q}-rel" for q in kept])[0]
        run = runs["run0"]
        top = [d for q in kept for d in sorted(run[q], key=lambda d: (run[q][d], d), reverse=True)[:5]]
        assert value == pytest.approx(frechet_distance(x, source.lookup(top)[0]), rel=1e-7)


@pytest.mark.parametrize("random_vectors", [False, True])
def test_every_interval_holds_its_estimate(random_vectors):
    """What failed on DL21 (0 of 63 runs' bootstrap intervals held their FD, with real and with
    random vectors): every FD and agreement interval holds its estimate."""
    qrels, runs, source = collection(random_vectors=random_vectors, seed=3)
    report = fd_runs(qrels, runs, source, k=5, max_per_topic=1, n_boot=60, seed=4)
    for name, r in report.runs.items():
        assert r.interval is not None, name
        assert r.interval.low < r.fd < r.interval.high, (name, r.fd, r.interval)
        assert r.as_dict()["ci_method"] == "jackknife"
    a = report.agreement
    with_interval = [m for m in ranking_measures("fd") if m.interval]
    assert with_interval
    for m in with_interval:
        low, high = (a[c] for c in m.interval_columns)
        assert -1.0 <= low <= a[m.name] <= high <= 1.0
    assert "population" in report.settings["intervals"] and report.settings["level"] == 0.95


def test_intervals_are_printed_with_what_they_are():
    from reljudge.analyses.fd.files import fd_data, format_fd_report

    qrels, runs, source = collection(n_runs=4, seed=5)
    report = fd_runs(qrels, runs, source, k=5, max_per_topic=1, n_boot=20)
    text = format_fd_report(report)
    assert (
        "95% CI" in text
        and "delete-one-topic jackknife" in text
        and "20 random subsets of 10 of the 20 topics" in text
    )
    data = fd_data(report)
    assert data["settings"]["intervals"]["fd"].startswith("FD +- z*se")
    assert all(run["ci_low"] <= run["fd"] <= run["ci_high"] for run in data["runs"].values())


def test_the_simulated_coverage_printed_is_the_one_of_the_data_regime():
    from reljudge.analyses.fd.per_run import SIMULATED_COVERAGE, coverage_note

    assert SIMULATED_COVERAGE[True] in coverage_note(53, 384)
    assert SIMULATED_COVERAGE[False] in coverage_note(53, 32) and "conservative" in coverage_note(53, 32)
    assert coverage_note(53, None) == ""
    qrels, runs, source = collection(n_runs=3, dim=24, seed=6)  # 20 reference vectors, 24 dimensions
    report = fd_runs(qrels, runs, source, k=5, max_per_topic=1, n_boot=10)
    assert report.settings["dim"] == 24
    assert report.settings["intervals"]["simulated_coverage"] == coverage_note(20, 24)
    from reljudge.analyses.fd.files import format_fd_report

    assert coverage_note(20, 24) in format_fd_report(report)
