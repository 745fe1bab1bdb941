"""Speed of the sparse/biased-label analyses on TREC DL 2021 (63 runs, 53 topics, human qrels):
``python bench/bench_collections.py`` (needs ../shared/data).

Each analysis is timed from in-memory runs and qrels (reading the 63 runs is timed apart), the
first call of a process included (it imports scipy / ir_measures):

- DO/HSA (``judge histogram``): rank values, judged non-relevant, 20 bins, AP(rel=2), P(rel=2)@10
  and nDCG@10 — target < 10 s;
- simulated pooling bias (``judge pool-bias``) with the example run types, 10 repetitions,
  RR(rel=2)@10 and nDCG@10 — target < 5 s;
- sparsified qrels (``judge sparsify``), N = 1, 5, 10, 10 seeds, nDCG@10 — target < 10 s;
- FD variants (``judge fd --variants paper``): FD@1, FD@1-URR, FD@10, FD@10-URR and their τ
  matrix, at most 1 relevant passage per topic, with random 384-dimensional vectors standing in
  for an encoder's (the encoding itself is excluded from the target) — target < 10 s;
- the figures of ``--plot`` are timed apart (no target).
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(os.environ.get("RELJUDGE_SHARED_DATA", ROOT.parent / "shared" / "data"))
TYPES = ROOT / "examples" / "dl21-run-types.tsv"


def timed(label: str, fn, target: float | None = None):
    t = time.perf_counter()
    value = fn()
    took = time.perf_counter() - t
    verdict = (
        "" if target is None else ("  ok" if took < target else "  MISSED") + f" (target < {target:g} s)"
    )
    print(f"{label:<58} {took:7.2f} s{verdict}")
    return value


def fd_variants(qrels, runs) -> list[dict]:  # type: ignore[no-untyped-def]
    import numpy as np

    from reljudge.analyses.fd.per_run import fd_runs
    from reljudge.analyses.fd.variants import PAPER_VARIANTS, tau_matrix, variant_label
    from reljudge.vectors.embedding_source import PrecomputedEmbeddings

    ids = sorted(
        {d for x in qrels.values() for d in x} | {d for r in runs.values() for x in r.values() for d in x}
    )
    source = PrecomputedEmbeddings(ids, np.random.default_rng(0).normal(size=(len(ids), 384)))
    columns = {}
    for k, urr in PAPER_VARIANTS:
        report = fd_runs(qrels, runs, source, k=k, unjudged_only=urr, max_per_topic=1)
        columns[variant_label(k, urr)] = {n: r.fd for n, r in report.runs.items()}
    columns["nDCG@10"] = report.human_measure
    return tau_matrix(columns)


def main() -> int:
    from reljudge.io.runinfo import read_run_info
    from reljudge.io.trec import read_qrels, read_runs_dir

    dl21 = DATA / "trec-dl21"
    if not dl21.exists():
        print("shared data not found; skipping")
        return 0
    qrels = timed(
        "read qrels + 63 runs (.gz)", lambda: (read_qrels(dl21 / "qrels.txt"), read_runs_dir(dl21 / "runs"))
    )
    qrels, runs = qrels
    info = read_run_info(TYPES)

    from reljudge.analyses.histogram.do_hsa import do_hsa_runs
    from reljudge.analyses.pool_bias.simulation import simulate
    from reljudge.analyses.sparsify.sparse_qrels import sparsified_agreement

    hist = timed(
        "DO/HSA: 63 runs, 3 measures, correlations",
        lambda: do_hsa_runs(qrels, runs, measures=["AP(rel=2)", "P(rel=2)@10", "nDCG@10"]),
        10,
    )
    pool = timed(
        "pooling bias: 2 types x 10 reps x 2 measures", lambda: simulate(qrels, runs, info, reps=10), 5
    )
    sparse = timed(
        "sparsified qrels: N = 1, 5, 10 x 10 seeds", lambda: sparsified_agreement(qrels, runs, repeats=10), 10
    )
    timed("FD variants: 4 variants x 63 runs + tau matrix (384-d)", lambda: fd_variants(qrels, runs), 10)
    from reljudge.analyses.histogram.files import write_histogram_report
    from reljudge.analyses.pool_bias.files import write_pool_bias
    from reljudge.analyses.sparsify.files import write_sparsify

    with tempfile.TemporaryDirectory() as tmp:
        timed(
            "figures: histograms.png + slopes.png (63 panels each)",
            lambda: write_histogram_report(hist, tmp, plot=True),
        )
        timed("figures: relevant_found.png + scatter.png", lambda: write_pool_bias(pool, tmp, plot=True))
        timed("figure: sparsified.png", lambda: write_sparsify(sparse, tmp, plot=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
