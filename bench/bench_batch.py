"""``judge run --batch`` at scale: N UMBRELA requests (default 100,000) through the mock server's
/v1/files and /v1/batches, end to end (collect, split into waves of 50,000, upload, create, poll,
stream the output into the cache, record).

The mock server runs in its own process (`judge mock-server --batch-delay D`), so its work --
answering every line, the simulated completion delay -- is not the client's. Reported for the
judge process: wall time; the time it spent waiting for the provider (polling and sleeping
between polls, as the judge reports it: ``batch: ... s waiting for the provider``); the
client-side overhead, wall time minus that wait (target < 60 s); its CPU time; and its peak RSS
(``ru_maxrss`` from ``wait4``, target < 300 MB), and the mock server's peak RSS. The server's count of requests submitted twice
must be 0 and the records must number N. Synthetic topics and passages (`_common.make_dataset`).

Usage: python bench/bench_batch.py [N] [--delay S] [--model M]
(``--model litellm/openai/gpt-4o-mini``: the waves go through LiteLLM's batch API)
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import env, make_dataset, verdict


def start_mock(delay: float) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "reljudge", "mock-server", "--batch-delay", str(delay)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    url = proc.stdout.readline().strip().partition("=")[2]
    proc.stdout.readline()
    return proc, url


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("n", nargs="?", type=int, default=100_000)
    parser.add_argument("--delay", type=float, default=5.0, help="the mock's completion delay (s)")
    parser.add_argument("--poll", type=float, default=1.0)
    parser.add_argument(
        "--model", default="openai/gpt-4o-mini", help="litellm/openai/<m>: LiteLLM's batch API"
    )
    args = parser.parse_args()
    n = args.n
    with tempfile.TemporaryDirectory(prefix="bench-batch-") as tmp:
        root = Path(tmp)
        topics = max(1, n // 100)
        inputs = make_dataset(root / "data", topics, n // topics)
        mock, url = start_mock(args.delay)
        try:
            cmd = [
                sys.executable,
                "-m",
                "reljudge",
                "run",
                "--batch",
                "--batch-poll",
                str(args.poll),
                "--method",
                "umbrela",
                "--model",
                args.model,
                "--base-url",
                url,
                *inputs,
                "--output",
                str(root / "run"),
                "--cache",
                str(root / "cache.sqlite"),
                "--no-progress",
            ]
            start = time.perf_counter()
            with (root / "out.txt").open("w") as stdout, (root / "err.txt").open("w") as stderr:
                judge = subprocess.Popen(cmd, env=env(), stdout=stdout, stderr=stderr, text=True)
                _, status, usage = os.wait4(judge.pid, 0)  # this child's own rusage
            wall = time.perf_counter() - start
            mock_peak_mb = _peak_rss_mb(mock.pid)
        finally:
            mock.terminate()  # it prints its counts as it stops
            _, mock_err = mock.communicate(timeout=120)
        out, err = (root / "out.txt").read_text(), (root / "err.txt").read_text()
        code = os.waitstatus_to_exitcode(status)
        if code != 0:
            raise SystemExit(f"judge failed ({code}):\n{out}\n{err}")
        records = (root / "run" / "judgments.jsonl").read_bytes().count(b"\n")
        waited = float(re.search(r"([\d.]+) s waiting for the provider", err).group(1))  # type: ignore[union-attr]
        served = re.search(r"(\d+) batch requests \((\d+) submitted more than once\)", mock_err)
        print("\n".join(line for line in err.strip().splitlines() if not line.startswith("batches:")))
        print(out.strip())
        print(
            f"N = {n}: records {records}; mock: {served.group(1) if served else '?'} batch requests, "
            f"{served.group(2) if served else '?'} submitted more than once"
        )
        print(
            f"wall {wall:.1f} s; waiting for the provider {waited:.1f} s (mock delay {args.delay:g} s per batch)"
        )
        overhead = wall - waited
        print(f"client-side overhead: {overhead:.1f} s (target < 60 s: {verdict(overhead, 60)})")
        cpu, peak_mb = usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024
        print(
            f"judge CPU time {cpu:.1f} s; peak RSS {peak_mb:.0f} MB (target < 300 MB: {verdict(peak_mb, 300)})"
        )
        print(f"mock server peak RSS {mock_peak_mb:.0f} MB")


def _peak_rss_mb(pid: int) -> float:
    """The peak resident set of a running process (``VmHWM``), in MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


if __name__ == "__main__":
    main()
