"""Bootstrap intervals: speed of the FD bootstrap and coverage of the τ interval.

1. FD bootstrap: ``fd_runs`` with 1,000 replicates on 63 synthetic runs × 53 topics in 384
   dimensions (the DL21 setting of the README: all-MiniLM-L6-v2, FD@10, one reference passage per
   topic): each run's FD interval by the delete-one-topic jackknife, τ-b between nDCG@10 and −FD
   over 1,000 random halves of the topics, every run on the same halves
   (`reljudge.analyses.fd.resamples`; their coverage: bench/bench_fd_coverage.py). ``OLD=1`` also times the former loop
   (one stacked FD per run × replicate) on 20 replicates and extrapolates.
2. Coverage of the 95 % interval of Kendall τ-b between two system rankings
   (`bootstrap_ranking_agreement`) on synthetic data whose true τ is known: ``S`` systems with
   true means under two measures (their τ-b is the true τ), per-topic scores = true mean + topic
   effect + system × topic noise; each of ``R`` simulated collections of ``T`` topics gives one
   interval; coverage = the share of intervals holding the true τ (BCa and percentile).

Usage: python bench/bench_bootstrap.py [fd|coverage] (default: both)
"""

from __future__ import annotations

import os
import sys
import time

import numpy as np

TARGET_FD_S = 10.0


def synthetic_fd(n_runs: int = 63, n_topics: int = 53, dim: int = 384, k: int = 10, seed: int = 0):
    from reljudge.vectors.embedding_source import PrecomputedEmbeddings

    rng = np.random.default_rng(seed)
    topics = [f"q{t}" for t in range(n_topics)]
    centres = rng.normal(size=(n_topics, dim))
    ids, vectors, qrels, runs = [], [], {}, {}
    for t, q in enumerate(topics):
        qrels[q] = {f"{q}-rel": 3}
        ids.append(f"{q}-rel")
        vectors.append(centres[t] + rng.normal(scale=0.5, size=dim))
        for j in range(40):  # candidate passages, closer to the topic for small j
            ids.append(f"{q}-d{j}")
            vectors.append(centres[t] * (1 - j / 40) + rng.normal(size=dim))
    for r in range(n_runs):
        quality = r / n_runs
        run = {}
        for q in topics:
            order = np.argsort(np.arange(40) * quality + rng.normal(scale=8, size=40))
            run[q] = {f"{q}-d{j}": float(40 - i) for i, j in enumerate(order)}
            qrels[q].update({f"{q}-d{j}": int(j < 5) for j in range(10)})
        runs[f"run{r}"] = run
    return qrels, runs, PrecomputedEmbeddings(ids, np.array(vectors))


def bench_fd() -> list[tuple[str, float, float, str]]:
    from reljudge.analyses.fd.per_run import fd_runs

    qrels, runs, source = synthetic_fd()
    start = time.perf_counter()
    report = fd_runs(qrels, runs, source, k=10, max_per_topic=1, n_boot=1000, seed=0)
    wall = time.perf_counter() - start
    tau = report.agreement
    print(
        f"FD intervals, jackknife + 1,000 half-samples x {len(runs)} runs x 53 topics, d=384: {wall:.1f} s "
        f"(target < {TARGET_FD_S:.0f} s); tau-b {tau['kendall_tau_b']:.3f} "
        f"[{tau.get('kendall_ci_low', float('nan')):.3f}, {tau.get('kendall_ci_high', float('nan')):.3f}]"
    )
    rows = [("FD bootstrap 1000 x 63 runs, s", wall, TARGET_FD_S, "ok" if wall < TARGET_FD_S else "MISSED")]
    if os.environ.get("OLD"):
        from reljudge.analyses.fd.frechet import frechet_distance
        from reljudge.analyses.fd.per_run import relevant_set

        reference = relevant_set(qrels, max_per_topic=1)
        topics = list(reference)
        rng = np.random.default_rng(0)
        start = time.perf_counter()
        for run in list(runs.values())[:5]:
            for _ in range(20):
                sample = [topics[i] for i in rng.integers(0, len(topics), len(topics))]
                x = source.lookup([reference[q][0] for q in sample])[0]
                top = [d for q in sample for d in sorted(run[q], key=run[q].get, reverse=True)[:10]]
                frechet_distance(x, source.lookup(top)[0])
        per = (time.perf_counter() - start) / 100
        print(
            f"  former loop: {per * 1000:.1f} ms per run x replicate -> {per * 63_000:.0f} s for 1,000 x 63"
        )
    return rows


def coverage(n_sims: int = 200, systems: int = 30, topics: int = 50, n_boot: int = 1000, seed: int = 1):
    """Per interval method: the share of 95 % intervals that hold the true τ-b; and the mean
    τ̂ − τ over the simulated collections."""
    from scipy import stats

    from reljudge.metrics.bootstrap import METHODS
    from reljudge.metrics.ranking import bootstrap_ranking_agreement

    rng = np.random.default_rng(seed)
    true_a = rng.normal(size=systems)
    true_b = 0.8 * true_a + 0.6 * rng.normal(size=systems)  # a second measure, partly agreeing
    true_tau = float(stats.kendalltau(true_a, true_b).statistic)
    hits = dict.fromkeys(METHODS, 0)
    widths = dict.fromkeys(METHODS, 0.0)
    bias = []
    for _ in range(n_sims):
        effect = rng.normal(size=topics)
        a = true_a[:, None] + effect + rng.normal(scale=2.0, size=(systems, topics))
        b = true_b[:, None] + effect + rng.normal(scale=2.0, size=(systems, topics))
        x = {f"s{i}": {f"q{t}": a[i, t] for t in range(topics)} for i in range(systems)}
        y = {f"s{i}": {f"q{t}": b[i, t] for t in range(topics)} for i in range(systems)}
        seed_i = int(rng.integers(1 << 30))
        for method in METHODS:  # the same resamples (seed) for each method
            ci = bootstrap_ranking_agreement(x, y, "kendall", n_boot=n_boot, seed=seed_i, interval=method)
            hits[method] += ci.low <= true_tau <= ci.high
            widths[method] += (ci.high - ci.low) / n_sims
        bias.append(ci.value - true_tau)
    return true_tau, {k: v / n_sims for k, v in hits.items()}, widths, float(np.mean(bias))


def bench_coverage() -> list[tuple[str, float, float, str]]:
    start = time.perf_counter()
    true_tau, cover, widths, bias = coverage()
    shown = ", ".join(f"{m} {cover[m]:.1%} (mean width {widths[m]:.3f})" for m in cover)
    print(
        f"tau-b 95% interval coverage on 200 synthetic collections (30 systems x 50 topics, true tau "
        f"{true_tau:.3f}; mean tau-hat - tau {bias:+.3f}): {shown} ({time.perf_counter() - start:.0f} s)"
    )
    return [(f"tau interval coverage at 95%, {m}", cover[m], 0.95, "report") for m in cover]


def main(parts: list[str] | None = None) -> list[tuple[str, float, float, str]]:
    parts = parts or ["fd", "coverage"]
    rows = []
    if "fd" in parts:
        rows += bench_fd()
    if "coverage" in parts:
        rows += bench_coverage()
    return rows


if __name__ == "__main__":
    main(sys.argv[1:] or None)
