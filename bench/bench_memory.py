"""Peak memory of `judge run` as the number of judgments grows (default 10k, 50k, 100k).

Each size runs `judge run` in a subprocess against the mock server (ollama backend, no cache)
while its resident set size is sampled; reported are the peak RSS, the RSS at 10%/50%/100% of
the records, the RSS when the first record is written (inputs read: topics, qrels and the
corpus are held in memory by design), and the growth per 1,000 judgments of the peak and of
the peak above that start. Flat = streamed; growth = held in memory.

Usage: python bench/bench_memory.py [N ...]
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import env, make_dataset, mock_server


def _rss_kb(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except (FileNotFoundError, ProcessLookupError):
        pass
    return 0


def one(n: int, urls: dict[str, str], root: Path) -> dict[str, float]:
    topics = max(1, n // 100)
    args = make_dataset(root / f"data{n}", topics, n // topics)
    out = root / f"run{n}"
    cmd = [
        sys.executable,
        "-m",
        "reljudge",
        "run",
        "--method",
        "binary",
        "--model",
        "ollama/mock",
        "--base-url",
        urls["ollama"],
        *args,
        "--output",
        str(out),
        "--no-cache",
        "--no-progress",
        "--concurrency",
        "32",
    ]
    proc = subprocess.Popen(cmd, env=env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    samples: list[tuple[int, int]] = []  # (records written, rss kB)
    path = out / "judgments.jsonl"
    start = time.perf_counter()
    while proc.poll() is None:
        done = path.stat().st_size // 1 if path.exists() else 0
        samples.append((done, _rss_kb(proc.pid)))
        time.sleep(0.2)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(proc.stderr.read() if proc.stderr else "run failed")
    size = path.stat().st_size
    lines = path.read_bytes().count(b"\n")
    peak = max(r for _, r in samples)

    def at(share: float) -> int:
        return next((r for b, r in samples if b >= share * size), peak)

    start = next((r for b, r in samples if b > 0), peak)  # inputs read, judging begun

    return {
        "n": lines,
        "peak_mb": peak / 1024,
        "start_mb": start / 1024,
        "rss10": at(0.1) / 1024,
        "rss50": at(0.5) / 1024,
        "rss100": at(0.99) / 1024,
        "wall": wall,
    }


def main(sizes: list[int] | None = None) -> list[tuple[str, float, float, str]]:
    sizes = sizes or [10_000, 50_000, 100_000]
    rows = []
    results = []
    with tempfile.TemporaryDirectory() as tmp, mock_server(0.0) as urls:
        for n in sizes:
            r = one(n, urls, Path(tmp))
            results.append(r)
            print(
                f"judge run, {r['n']} judgments: peak RSS {r['peak_mb']:.0f} MB "
                f"(first record {r['start_mb']:.0f} MB, 10% {r['rss10']:.0f} MB, 50% {r['rss50']:.0f} MB, "
                f"100% {r['rss100']:.0f} MB), {r['wall']:.0f}s"
            )
            rows.append((f"peak RSS MB, {r['n']} judgments", r["peak_mb"], float("nan"), "report"))
    if len(results) > 1:
        a, b = results[0], results[-1]
        slope = (b["peak_mb"] - a["peak_mb"]) / ((b["n"] - a["n"]) / 1000)
        above = ((b["peak_mb"] - b["start_mb"]) - (a["peak_mb"] - a["start_mb"])) / ((b["n"] - a["n"]) / 1000)
        print(
            f"growth of the peak: {slope:.2f} MB per 1,000 judgments; of the peak above the RSS at the "
            f"first record (judging itself): {above:.2f} MB per 1,000 ({'flat' if above < 0.1 else 'NOT flat'})"
        )
        rows.append(("peak RSS growth MB / 1k judgments (all)", slope, float("nan"), "report"))
        rows.append(("peak RSS growth above inputs MB / 1k", above, 0.1, "ok" if above < 0.1 else "MISSED"))
    return rows


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or None)
