"""Speed of the metrics: `python bench/bench_metrics.py` (needs ../shared/data for part 1).

1. compatibility + Kendall tau-b (with a 1000-replicate bootstrap) for the 63 TREC DL 2021 runs
   x 53 topics x 7 published GPT-4o judgment sets, plus the human nDCG@10;
2. Fréchet distance of two 10,000 x 768 sets (and 265 x 768 vs 10,000 x 768, the n < p route);
3. Cohen's kappa and Krippendorff's alpha on 100,000 labels.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(os.environ.get("RELJUDGE_DATA_DIR", ROOT.parent / "shared" / "data"))
METHODS = [
    "binary",
    "umbrela",
    "exam-binary",
    "exam-graded-max",
    "exam-graded-mean",
    "nuggets-all",
    "preferences",
]


def timed(label: str, fn):
    t = time.perf_counter()
    value = fn()
    print(f"{label:<62} {time.perf_counter() - t:8.3f} s")
    return value


def bench_compatibility() -> None:
    from reljudge.analyses.evaluate.comparison import evaluate
    from reljudge.analyses.inputs import load_judgment_sets, load_runs
    from reljudge.io.trec import read_qrels

    if not (DATA / "trec-dl21").exists():
        print("shared data not found; skipping the DL21 benchmark")
        return
    qrels = timed("read human qrels", lambda: read_qrels(DATA / "trec-dl21" / "qrels.txt"))
    runs = timed("read 63 runs (.gz)", lambda: load_runs(DATA / "trec-dl21" / "runs"))
    paths = [DATA / "llm-judgments" / "gpt-4o" / f"{m}.dl21.qrels" for m in METHODS]
    sets = timed("read 7 judgment sets", lambda: load_judgment_sets(paths, missing_zero=["preferences*"]))
    report = timed(
        "evaluate: nDCG@10 + compat + tau-b (1000 boot) + alignment + kappa",
        lambda: evaluate(qrels, sets, runs, n_boot=1000),
    )
    for s in report.sets:
        print(f"  {s.name:<22} tau-b {s.ranking['kendall_tau_b']:.3f}")


def bench_fd() -> None:
    from reljudge.analyses.fd.frechet import frechet_distance

    rng = np.random.default_rng(0)
    x = rng.normal(size=(10_000, 768)).astype(np.float32)
    y = (rng.normal(size=(10_000, 768)) * 1.1 + 0.05).astype(np.float32)
    fd = timed("FD 10,000 x 768 vs 10,000 x 768", lambda: frechet_distance(x, y))
    print(f"  FD = {fd:.4f}")
    fd = timed("FD 265 x 768 vs 10,000 x 768 (n < p, exact Gram route)", lambda: frechet_distance(x[:265], y))
    print(f"  FD = {fd:.4f}")


def bench_agreement() -> None:
    from reljudge.metrics import cohen_kappa, krippendorff_alpha

    rng = np.random.default_rng(1)
    a = rng.integers(0, 4, 100_000)
    b = np.clip(a + rng.integers(-1, 2, 100_000), 0, 3)
    timed("Cohen's kappa (quadratic), 100,000 label pairs", lambda: cohen_kappa(a, b, weights="quadratic"))
    data = np.vstack([a, b, np.clip(a + rng.integers(-1, 2, 100_000), 0, 3)]).astype(float)
    data[rng.random(data.shape) < 0.1] = np.nan
    timed(
        "Krippendorff's alpha (ordinal), 3 raters x 100,000 units",
        lambda: krippendorff_alpha(data, level="ordinal"),
    )


if __name__ == "__main__":
    bench_compatibility()
    bench_fd()
    bench_agreement()
