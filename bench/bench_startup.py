"""Start-up time of `judge --help` (a fresh interpreter each time; median of 7). Target < 0.5 s.

Usage: python bench/bench_startup.py
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time

from _common import verdict


def main(repeats: int = 7) -> list[tuple[str, float, float, str]]:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "reljudge", "--help"], check=True, capture_output=True)
        times.append(time.perf_counter() - start)
    median = statistics.median(times)
    print(
        f"judge --help: median {median:.3f}s, min {min(times):.3f}s over {repeats} runs "
        f"(target < 0.5 s) {verdict(median, 0.5)}"
    )
    bare = []
    for _ in range(3):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        bare.append(time.perf_counter() - start)
    print(f"  (a bare python interpreter starts in {min(bare):.3f}s here)")
    return [("judge --help start-up s", median, 0.5, verdict(median, 0.5))]


if __name__ == "__main__":
    main()
