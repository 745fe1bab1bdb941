"""Wall time (and peak RSS) of commands that only count or read: each in its own process.

1. ``judge run --method pairwise -o pairs=sampler --dataset trec-dl19 --dry-run`` (target < 10 s);
2. ``judge sweep examples/sweep.yaml --dry-run``: the published prompt-sensitivity study as a
   sweep, 480 cells (target < 5 s, the median of three runs);
3. the analysis of the published release, ``analyze_published(judgments.tar.gz)`` (what
   ``judge sweep --from-judgments`` runs; target < 10 s and < 300 MB), and the same with the 63
   DL21 runs (ranking stability).

Needs ../shared/data (RELJUDGE_SHARED_DATA). Usage: python bench/bench_dry_runs.py
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from _common import ROOT, env, measured, verdict

DATA = Path(os.environ.get("RELJUDGE_SHARED_DATA", ROOT.parent / "shared" / "data"))

ANALYSIS = """
import resource, sys, time
from pathlib import Path
from reljudge.sweep.api import analyze_published
data = Path(sys.argv[1])
runs = {"dl21": data / "trec-dl21" / "runs"} if sys.argv[2] == "runs" else None
start = time.perf_counter()
analysis = analyze_published(data / "prompt-sensitivity" / "judgments.tar.gz", runs=runs)
print(len(analysis.rows), time.perf_counter() - start)
"""


def measure_rss(cmd: list[str]) -> tuple[float, float, str]:
    """(wall seconds, the command's own peak RSS in MB, its output): `_common.measured`."""
    done, peak, wall = measured(cmd, cwd=ROOT, env=env(), capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{done.stderr}")
    return wall, peak, done.stdout


def main() -> list[tuple[str, float, float, str]]:
    if not (DATA / "trec-dl19").is_dir():
        print(f"skipped: {DATA} not found")
        return []
    judge = [sys.executable, "-m", "reljudge"]
    rows = []
    wall, peak, _ = measure_rss([*judge, "run", "--method", "pairwise", "-o", "pairs=sampler", "--model",
                                 "openai/mock", "--dataset", str(DATA / "trec-dl19"), "--dry-run"])  # fmt: skip
    print(f"pairwise sampler dry-run, TREC DL 2019: {wall:.1f} s, peak RSS {peak:.0f} MB")
    rows.append(("pairwise sampler dry-run DL19, s", wall, 10.0, verdict(wall, 10.0)))
    # the median of three: one run alone can lose a second to a cold page cache (a bench before
    # this one writes a 1 GB collection), which is the machine, not the dry run
    runs = [measure_rss([*judge, "sweep", "examples/sweep.yaml", "--dry-run"]) for _ in range(3)]
    wall, peak, out = sorted(runs, key=lambda r: r[0])[1]
    cells = next((line.split("=")[0].strip() for line in out.splitlines() if " cells = " in line), "?")
    shown = ", ".join(f"{r[0]:.1f}" for r in runs)
    print(f"{cells} --dry-run: {wall:.1f} s (median of {shown}), peak RSS {peak:.0f} MB")
    rows.append(("sweep --dry-run, 480 cells, s", wall, 5.0, verdict(wall, 5.0)))
    for runs in ("none", "runs"):
        wall, peak, out = measure_rss([sys.executable, "-c", ANALYSIS, str(DATA), runs])
        n, inner = out.split()
        label = "with the 63 DL21 runs" if runs == "runs" else "no runs"
        print(f"published-release analysis ({n} cells, {label}): {wall:.1f} s in all ({float(inner):.1f} s "
              f"analysing), peak RSS {peak:.0f} MB")  # fmt: skip
        if runs == "none":
            rows.append(("published analysis, s", wall, 10.0, verdict(wall, 10.0)))
            rows.append(("published analysis, peak RSS MB", peak, 300.0, verdict(peak, 300.0)))
    return rows


if __name__ == "__main__":
    main()
