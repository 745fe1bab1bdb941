"""Coverage of ``judge grids``'s agreement interval, by simulation (`reljudge.analyses.grids.agreement`).

What is simulated: a population of prompts. Each prompt carries 1 to 3 human preferences between
systems' grids (equally likely) and a measure agrees with each of them with the prompt's own
probability, drawn from Beta(a, b) with mean ``p`` (prompts differ: some are easy for the measure,
some hard; the preferences of one prompt share them). A *collection* is ``n`` prompts from the
population, and the agreement table of the collection is computed by `agreement_table`, the code
``judge grids --preferences`` runs (``t`` bootstrap interval over prompts, nominal 95 %).

What the interval is about: the agreement of another collection of as many prompts from the same
population; its target is the mean agreement over ``truth_n`` fresh collections (as for the other
bootstrap intervals of reljudge, `reljudge.metrics.bootstrap`). Coverage = the share of ``reps``
further collections whose interval holds the target, each computed from that collection alone.

Usage: python bench/bench_grids_agreement.py [--quick]    (about 4 minutes on a busy core; --quick: 30 s)
"""

from __future__ import annotations

import sys
import time

import numpy as np

#: Beta concentration of the per-prompt agreement probability (a + b)
CONCENTRATION = 4.0


def collection(rng: np.random.Generator, n: int, p: float):
    """Values and preferences of ``n`` prompts: the measure prefers X exactly when it agrees."""
    from reljudge.analyses.grids.agreement import GridPreference

    values: dict[tuple[str, str], float] = {}
    prefs = []
    chance = rng.beta(p * CONCENTRATION, (1 - p) * CONCENTRATION, size=n)
    for i in range(n):
        prompt = f"q{i}"
        for j in range(int(rng.integers(1, 4))):
            x, y = f"S{2 * j}", f"S{2 * j + 1}"
            agrees = rng.random() < chance[i]
            values[(prompt, x)], values[(prompt, y)] = (1.0, 0.0) if agrees else (0.0, 1.0)
            prefs.append(GridPreference(prompt, x, y, -1 if rng.random() < 0.5 else -2))
    return {"measure": values}, prefs


def scenario(n: int, p: float, reps: int, truth_n: int, n_boot: int, seed: int) -> dict:
    from reljudge.analyses.grids.agreement import agreement_table

    rng = np.random.default_rng(seed)
    truth = []
    for _ in range(truth_n):
        values, prefs = collection(rng, n, p)
        v = values["measure"]
        agree = [v[(q.prompt, q.system_x)] > v[(q.prompt, q.system_y)] for q in prefs]
        truth.append(np.mean(agree))
    target = float(np.mean(truth))
    hits, widths = 0, []
    for r in range(reps):
        values, prefs = collection(rng, n, p)
        row = agreement_table(values, prefs, n_boot=n_boot, seed=r)[0]
        hits += row["ci_low"] <= target <= row["ci_high"]
        widths.append(row["ci_high"] - row["ci_low"])
    return {
        "n": n,
        "p": p,
        "target": target,
        "coverage": hits / reps,
        "width": float(np.mean(widths)),
        "reps": reps,
    }


def main(quick: bool = False) -> list[dict]:
    reps, truth_n, n_boot = (100, 200, 300) if quick else (400, 1000, 1000)
    out = []
    for n in (20, 50, 200, 500):
        for p in (0.6, 0.9):
            start = time.perf_counter()
            row = scenario(n, p, reps, truth_n, n_boot, seed=1000 * n + int(100 * p))
            row["seconds"] = time.perf_counter() - start
            out.append(row)
            print(
                f"{n:4d} prompts, agreement {p:.1f}: coverage {row['coverage']:.3f} of nominal 0.95 "
                f"(mean width {row['width']:.3f}, {reps} collections, target {row['target']:.3f}, "
                f"{row['seconds']:.0f} s)",
                flush=True,
            )
    return out


if __name__ == "__main__":
    main(quick="--quick" in sys.argv)
