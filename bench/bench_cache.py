"""A fully cached re-run of N judgments (default 10,000) through `judge run`'s code path.

The first run fills the response cache from the mock server; the second run, into a new run
directory, answers every item from the cache. Reported: judgments/s of the second run after
start-up (the time inside `run_job`, imports excluded). Target: > 5,000 judgments/s.

Usage: python bench/bench_cache.py [N]
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from _common import make_dataset, mock_server, verdict

from reljudge.run import RunConfig, run_job


def main(n: int = 10_000) -> list[tuple[str, float, float, str]]:
    topics = max(1, n // 100)
    with tempfile.TemporaryDirectory() as tmp, mock_server(0.0) as urls:
        root = Path(tmp)
        args = make_dataset(root / "data", topics, n // topics)
        files = dict(zip(("topics", "qrels", "corpus"), (Path(a) for a in args[1::2]), strict=True))

        def config(out: str) -> RunConfig:
            return RunConfig(
                method="binary",
                model="ollama/mock",
                base_url=urls["ollama"],
                output=root / out,
                cache_path=root / "cache.sqlite",
                concurrency=32,
                progress=False,
                **files,
            )

        start = time.perf_counter()
        first = run_job(config("fill"))
        fill = time.perf_counter() - start
        start = time.perf_counter()
        second = run_job(config("cached"))
        cached = time.perf_counter() - start
    assert first.records == second.records == n and second.cache_hits == n and second.usage.calls == 0
    rate = n / cached
    print(f"fill run: {n} judgments from the mock server in {fill:.1f}s ({n / fill:.0f}/s)")
    print(
        f"fully cached re-run: {n} judgments in {cached:.2f}s = {rate:.0f} judgments/s "
        f"(target > 5000) {verdict(rate, 5000, lower_is_better=False)}"
    )
    return [(f"cached re-run judgments/s (N={n})", rate, 5000, verdict(rate, 5000, lower_is_better=False))]


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 10_000)
