"""All benchmarks in one command: ``python bench/run.py [--quick]``.

Prints each figure with its target, then a table; a MISSED target is a regression to fix, and
the table says which commit last met it (`_history`: a full run appends its figures to
``bench/history.jsonl``; commit that file with the change it measured). The exit code is 1 when
a target was missed. ``--quick`` uses smaller sizes (for a smoke check, not for the figures in the
docs; not recorded).
The metrics figures come from bench/bench_metrics.py (run as its own process).
"""

from __future__ import annotations

import math
import platform
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def machine() -> str:
    cpu = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    import os

    mem = ""
    try:
        total = int(Path("/proc/meminfo").read_text().split()[1])
        mem = f", {total / 1024 / 1024:.1f} GiB RAM"
    except (OSError, ValueError, IndexError):
        pass
    return f"{cpu}, {os.cpu_count()} CPUs{mem}, Python {platform.python_version()} on {platform.platform()}"


def main() -> int:
    quick = "--quick" in sys.argv
    import _history
    import bench_adaptive
    import bench_bootstrap
    import bench_cache
    import bench_client
    import bench_corpus_memory
    import bench_dry_runs
    import bench_fd_coverage
    import bench_hostile
    import bench_humans
    import bench_memory
    import bench_startup
    import bench_vision_memory

    load_before = _history.load()
    history = _history.entries()
    print(f"machine: {machine()}\nload: {load_before:.2f}\n")
    rows: list[tuple[str, float, float, str]] = []
    print("== start-up")
    rows += bench_startup.main()
    print("\n== LLM client")
    rows += bench_client.main(500 if quick else 2000)
    print("\n== cached re-run")
    rows += bench_cache.main(2000 if quick else 10_000)
    print("\n== memory")
    rows += bench_memory.main([2000, 6000] if quick else [10_000, 50_000, 100_000])
    print("\n== a few passages of a large collection")
    rows += bench_corpus_memory.main(50 if quick else 1024)
    rows += bench_corpus_memory.run_top_k(50 if quick else 500)
    print("\n== images: a vision judge over many image files")
    rows += bench_vision_memory.main(200 if quick else 2000)
    print("\n== dry-runs and the published-release analysis")
    rows += bench_dry_runs.main()
    print("\n== bootstraps")
    rows += bench_bootstrap.main(["fd"] if quick else None)
    print("\n== coverage of judge fd's intervals (simulation)")
    rows += bench_fd_coverage.main(quick)
    print("\n== humans where they matter: combined estimates and selection (simulation on DL19-21)")
    rows += bench_humans.main(quick)
    print("\n== rate limits: with and without rate headers, random 429s")
    rows += bench_adaptive.main(quick)
    print("\n== a provider not to be taken at its word: the cost cap and batch deadlines")
    rows += bench_hostile.main()
    print("\n== metrics (bench/bench_metrics.py)")
    metrics = subprocess.run([sys.executable, str(HERE / "bench_metrics.py")], text=True)
    print("\n== summary")
    width = max(len(r[0]) for r in rows)
    for name, value, target, status in rows:
        shown = "" if math.isnan(target) else f"{target:g}"
        since = f"  last met: {_history.last_met(name, history)}" if status == "MISSED" else ""
        print(f"{name:<{width}}  {value:>10.3f}  target {shown:>6}  {status}{since}")
    missed = [r for r in rows if r[3] == "MISSED"]
    print(
        f"\n{len(missed)} target(s) missed" + ("" if metrics.returncode == 0 else "; bench_metrics.py failed")
    )
    if not quick:
        entry = _history.record(rows, machine(), load_before)
        print(
            f"recorded in {_history.HISTORY.name} at {entry['commit']} (load {entry['load'][0]} -> {entry['load'][1]})"
        )
    return 1 if missed or metrics.returncode != 0 else 0


if __name__ == "__main__":
    raise SystemExit(main())
