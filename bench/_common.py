"""Shared bits of the benchmarks: a mock LLM server in its own process (so that its CPU use is not
counted as the client's), a synthetic dataset of any size, and target checks."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@contextmanager
def mock_server(latency: float = 0.0, responder: str = "fixed:1", *extra: str) -> Iterator[dict[str, str]]:
    """``judge mock-server`` in a subprocess (``extra``: more of its options); yields
    {"openai": URL, "ollama": URL}."""
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "reljudge",
            "mock-server",
            "--latency",
            str(latency),
            "--responder",
            responder,
            *extra,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert proc.stdout is not None
        urls = {}
        for _ in range(2):
            name, _, url = proc.stdout.readline().strip().partition("=")
            urls[name.split("_")[0]] = url
        yield urls
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def make_dataset(root: Path, n_topics: int, docs_per_topic: int) -> list[str]:
    """topics.tsv, qrels.txt and passages.tsv under ``root``; returns the `judge run` input args."""
    root.mkdir(parents=True, exist_ok=True)
    with (
        open(root / "topics.tsv", "w") as t,
        open(root / "qrels.txt", "w") as q,
        open(root / "passages.tsv", "w") as p,
    ):
        for i in range(n_topics):
            t.write(f"q{i}\twhat is the meaning of topic number {i} in the benchmark\n")
            for k in range(docs_per_topic):
                q.write(f"q{i} 0 d{i}-{k} {k % 4}\n")
                p.write(
                    f"d{i}-{k}\tPassage {k} of topic {i}: a short text of about twenty words on the subject, "
                    "long enough to look like a real passage.\n"
                )
    return [
        "--topics",
        str(root / "topics.tsv"),
        "--qrels",
        str(root / "qrels.txt"),
        "--corpus",
        str(root / "passages.tsv"),
    ]


def verdict(value: float, target: float, *, lower_is_better: bool = True) -> str:
    ok = value <= target if lower_is_better else value >= target
    return "ok" if ok else "MISSED"


def env() -> dict[str, str]:
    return {**os.environ, "OPENAI_API_KEY": "sk-bench-not-a-key"}


def timer() -> float:
    return time.perf_counter()


def measured(cmd: list[str], **popen: object) -> tuple[subprocess.CompletedProcess, float, float]:
    """Run ``cmd`` (``[python, "-m", MODULE, ...]`` or ``[python, "-c", CODE, ...]``) through
    ``bench/_peak.py``: (the finished process, its own peak RSS in MB, wall seconds)."""
    import tempfile

    assert cmd[0] == sys.executable and cmd[1] in ("-m", "-c"), cmd
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "peak"
        start = time.perf_counter()
        done = subprocess.run([sys.executable, str(ROOT / "bench" / "_peak.py"), str(out), *cmd[1:]], **popen)  # type: ignore[call-overload]
        wall = time.perf_counter() - start
        peak = int(out.read_text()) / 1024 if out.exists() else float("nan")
    return done, peak, wall
