"""Coverage of ``judge fd --bootstrap``'s intervals, by simulation (`reljudge.analyses.fd.resamples`).

What is simulated: a population of topics. Each topic has a centre (a random point in d
dimensions), one judged relevant passage (grade 3, the reference with ``--max-rel 1``) near it,
and 40 candidate passages further and further from it (the first three judged grade 2, the next
seven grade 1). A run ranks the relevant passage and the candidates by their position plus noise,
with less noise the better the run (12 runs). A *collection* is 53 topics drawn from the population
(the DL21 size), and every run is scored on it: FD@10 with one reference passage per topic and
nDCG@10, by `fd_runs` -- the code ``judge fd`` runs.

- ``real-shaped``: the vectors as above; ``random``: every passage an independent random vector
  (no semantics: only the relevant passage retrieved by a run is shared with the reference set).
- ``d = 384`` (fewer reference vectors than dimensions: the all-MiniLM-L6-v2 setting of DL21) and
  ``d = 32`` (more reference vectors than dimensions: the random 32-d vectors of the issue).

What the intervals are about, hence what they are checked against: another collection of as many
topics from the same population. The target of a run's FD interval is its expected FD over such
collections, and the target of the agreement interval the expected Kendall τ-b between nDCG@10 and
−FD over them (both: the mean over ``truth_n`` fresh collections). Coverage = the share of ``n``
further collections whose interval holds the target, each interval computed from that collection
alone (the jackknife for FD, ``halves`` random halves for τ). Also printed, not a target: how often
the τ interval holds τ between the runs' *expected* nDCG@10 and −FD, a different quantity (the
agreement of infinitely many topics, further from 0 than τ on 53 topics when runs are close).

Usage: python bench/bench_fd_coverage.py [--quick]    (about 15 minutes on one busy core; --quick: 1 minute, a smoke run)
"""

from __future__ import annotations

import sys
import time

import numpy as np

TOPICS, RUNS, CANDIDATES, K = 53, 12, 40, 10
TOLERANCE = 0.03  # the target: nominal 95 % within ±3 points


def population(dim: int, random_vectors: bool, seed: int):
    """A function drawing one collection: (qrels, runs, embedding source)."""
    from reljudge.vectors.embedding_source import PrecomputedEmbeddings

    rng = np.random.default_rng(seed)
    qualities = np.linspace(0.0, 1.0, RUNS)

    def draw():
        ids, vectors, qrels, runs = [], [], {}, {f"run{r:02d}": {} for r in range(RUNS)}
        for t in range(TOPICS):
            q = f"q{t}"
            centre = rng.normal(size=dim)
            ids.append(f"{q}-rel")
            vectors.append(centre + rng.normal(scale=0.5, size=dim))
            qrels[q] = {f"{q}-rel": 3}
            for j in range(CANDIDATES):
                ids.append(f"{q}-d{j}")
                vectors.append(centre * (1 - j / CANDIDATES) + rng.normal(size=dim))
                if j < 10:
                    qrels[q][f"{q}-d{j}"] = 2 if j < 3 else 1
            cands = [f"{q}-rel"] + [f"{q}-d{j}" for j in range(CANDIDATES)]
            for r, quality in enumerate(qualities):
                order = np.argsort(np.arange(len(cands)) * quality + rng.normal(scale=8.0, size=len(cands)))
                runs[f"run{r:02d}"][q] = {cands[j]: float(len(cands) - i) for i, j in enumerate(order[:20])}
        matrix = rng.normal(size=(len(ids), dim)) if random_vectors else np.array(vectors)
        return qrels, runs, PrecomputedEmbeddings(ids, matrix)

    return draw


def scenario(dim: int, random_vectors: bool, truth_n: int, n: int, halves: int, seed: int) -> dict:
    from scipy import stats

    from reljudge.analyses.fd.per_run import fd_runs

    draw = population(dim, random_vectors, seed)
    fds, ndcgs = [], []
    for _ in range(truth_n):
        report = fd_runs(*draw(), k=K, max_per_topic=1)
        names = sorted(report.runs)
        fds.append([report.runs[r].fd for r in names])
        ndcgs.append([report.human_measure[r] for r in names])
    true_fd = np.mean(fds, axis=0)
    true_tau = float(
        np.mean([stats.kendalltau(h, -np.array(f)).statistic for h, f in zip(ndcgs, fds, strict=True)])
    )
    tau_of_means = float(stats.kendalltau(np.mean(ndcgs, axis=0), -true_fd).statistic)
    fd_hits, tau_hits, means_hits, widths, holds = [], [], [], [], 0
    for _ in range(n):
        report = fd_runs(*draw(), k=K, max_per_topic=1, n_boot=halves, seed=int(_))
        for i, r in enumerate(sorted(report.runs)):
            iv = report.runs[r].interval
            fd_hits.append(iv.low <= true_fd[i] <= iv.high)
            widths.append((iv.high - iv.low) / true_fd[i])
            holds += iv.low <= report.runs[r].fd <= iv.high
        a = report.agreement
        tau_hits.append(a["kendall_ci_low"] <= true_tau <= a["kendall_ci_high"])
        means_hits.append(a["kendall_ci_low"] <= tau_of_means <= a["kendall_ci_high"])
        holds += a["kendall_ci_low"] <= a["kendall_tau_b"] <= a["kendall_ci_high"]
    return {
        "fd": float(np.mean(fd_hits)),
        "fd_intervals": len(fd_hits),
        "fd_rel_width": float(np.mean(widths)),
        "tau": float(np.mean(tau_hits)),
        "tau_intervals": len(tau_hits),
        "true_tau": true_tau,
        "tau_of_means": tau_of_means,
        "tau_means_coverage": float(np.mean(means_hits)),
        "hold_estimate": holds / (len(fd_hits) + len(tau_hits)),
    }


SCENARIOS = [(384, False), (384, True), (32, False), (32, True)]


def main(quick: bool = False) -> list[tuple[str, float, float, str]]:
    truth_n, n, halves = (20, 15, 50) if quick else (150, 150, 100)
    rows = []
    for dim, random_vectors in SCENARIOS:
        start = time.perf_counter()
        got = scenario(dim, random_vectors, truth_n, n, halves, seed=dim + random_vectors)
        label = f"{'random' if random_vectors else 'real-shaped'} d={dim}"
        print(
            f"{label}: FD interval coverage {got['fd']:.1%} of {got['fd_intervals']} (mean width "
            f"{got['fd_rel_width']:.1%} of FD); tau interval coverage {got['tau']:.1%} of {got['tau_intervals']} "
            f"(expected tau {got['true_tau']:.3f}; holds tau of the expected values, {got['tau_of_means']:.3f}, "
            f"{got['tau_means_coverage']:.0%}); intervals holding their estimate {got['hold_estimate']:.0%} "
            f"({time.perf_counter() - start:.0f} s)"
        )
        from reljudge.analyses.fd.per_run import SIMULATED_COVERAGE_RANGES

        printed = SIMULATED_COVERAGE_RANGES[dim > 53]  # judge fd prints these with its intervals
        for what, name in (("fd", "FD"), ("tau", "agreement")):
            low, high = printed[name]
            value = got[what]
            ok = (
                "ok"
                if abs(value - 0.95) <= TOLERANCE
                else "ok (printed)"
                if low - 0.01 <= value <= high + 0.01
                else "MISSED"
            )
            rows.append((f"FD {what} interval coverage at 95%, {label}", value, 0.95, ok))
    return rows


if __name__ == "__main__":
    main("--quick" in sys.argv)
