"""Peak memory of `judge run` on a few passages of a large collection (default 1024 MB).

A synthetic collection is written to a temporary directory (never kept): ``MB`` megabytes of
``docid<TAB>text`` lines, 3 topics with 10 judged passages spread over the file (start,
middle, end), one of them 40,000 characters long. `judge run` judges the 10 passages against
the mock server (in its own process) twice: the first run builds the corpus index (the one-time
cost: its wall time, and the index's size on disk), the second reuses it. The index lives in a
temporary ``RELJUDGE_INDEX_DIR``. The peak resident set size of the `judge run` process comes
from ``VmHWM`` (bench/_peak.py); the target is a peak under 150 MB (the interpreter with its libraries takes
about 70-100 MB).

``OLD_SRC=/path/to/an/older/src`` also measures that source tree (``PYTHONPATH``), for a
before/after comparison.

Usage: python bench/bench_corpus_memory.py [MB]
       python bench/bench_corpus_memory.py runs   # a 500 x 1000 run file read whole / top 10
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import env, measured, mock_server, verdict

TARGET_PEAK_MB = 150.0
N_PASSAGES = 10
LINE = "an unjudged passage of the synthetic collection, with enough words to look like a real one; " * 3


def make_collection(root: Path, megabytes: int) -> list[str]:
    root.mkdir(parents=True, exist_ok=True)
    topics = [f"q{t}" for t in range(3)]
    (root / "topics.tsv").write_text("".join(f"{q}\tquestion number {q} of the benchmark\n" for q in topics))
    judged = [(q, f"{q}-d{i}") for q in topics for i in range(3)] + [("q2", "q2-d3")]  # 10
    (root / "qrels.txt").write_text("".join(f"{q} 0 {d} {i % 4}\n" for i, (q, d) in enumerate(judged)))
    lines = megabytes * 1024 * 1024 // (len(LINE) + 12)
    places = {0: judged[:3], lines // 2: judged[3:6], lines - 1: judged[6:]}  # start, middle, end
    with (root / "passages.tsv").open("w", encoding="utf-8") as handle:
        for n in range(lines):
            for q, d in places.get(n, ()):
                text = "long " * 8000 if d == "q0-d1" else f"the judged passage {d} of topic {q}"
                handle.write(f"{d}\t{text}\n")
            handle.write(f"x{n}\t{LINE}\n")
    return ["--topics", str(root / "topics.tsv"), "--qrels", str(root / "qrels.txt"),
            "--corpus", str(root / "passages.tsv")]  # fmt: skip


def measure(args: list[str], url: str, out: Path, pythonpath: str | None = None) -> tuple[float, float, str]:
    """(peak RSS MB, wall seconds, stderr) of one `judge run`."""
    cmd = [sys.executable, "-m", "reljudge", "run", "--method", "binary", "--model", "openai/mock",
           "--base-url", url, *args, "--output", str(out), "--no-cache", "--no-progress"]  # fmt: skip
    environment = env()
    if pythonpath:
        environment["PYTHONPATH"] = pythonpath
    done, peak, wall = measured(
        cmd, env=environment, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    if done.returncode != 0:
        raise SystemExit(f"judge run failed ({done.returncode}):\n{done.stderr}")
    return peak, wall, done.stderr  # the command's own peak (bench/_peak.py)


def main(megabytes: int = 1024) -> list[tuple[str, float, float, str]]:
    rows = []
    with tempfile.TemporaryDirectory() as tmp, mock_server(0.0) as urls:
        root = Path(tmp)
        start = time.perf_counter()
        args = make_collection(root / "data", megabytes)
        size = (root / "data" / "passages.tsv").stat().st_size / 1024 / 1024
        print(f"wrote a {size:.0f} MB collection in {time.perf_counter() - start:.0f}s")
        os.environ["RELJUDGE_INDEX_DIR"] = str(root / "index")  # env() passes it on
        trees = [("this tree, index built", None), ("this tree, index reused", None)]
        if os.environ.get("OLD_SRC"):
            trees.append((f"OLD_SRC={os.environ['OLD_SRC']}", os.environ["OLD_SRC"]))
        for i, (name, path) in enumerate(trees):
            peak, wall, stderr = measure(args, urls["openai"], root / f"run{i}", path)
            print(
                f"judge run, {N_PASSAGES} passages of a {size:.0f} MB collection ({name}): "
                f"peak RSS {peak:.0f} MB, {wall:.1f}s"
            )
            if i == 0:
                index_mb = sum(f.stat().st_size for f in (root / "index").glob("*.sqlite")) / 1024 / 1024
                print(f"  the index: {index_mb:.0f} MB on disk")
            warned = [line for line in stderr.splitlines() if "longer than" in line]
            if warned:
                print(f"  {warned[0]}")
            if path is None:
                rows.append(
                    (
                        f"peak RSS MB, {N_PASSAGES} passages of {size:.0f} MB ({name})",
                        peak,
                        TARGET_PEAK_MB,
                        verdict(peak, TARGET_PEAK_MB),
                    )
                )
                rows.append((f"wall s, {name}", wall, float("nan"), "report"))
    return rows


def run_top_k(topics: int = 500, depth: int = 1000, k: int = 10) -> list[tuple[str, float, float, str]]:
    """Peak traced memory of reading a run file whole and keeping only each topic's top k (the
    ``run:FILE:K`` pool), in this process (tracemalloc)."""
    import random
    import tracemalloc

    from reljudge.io.trec import read_run

    rng = random.Random(0)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "big.run"
        with path.open("w") as handle:
            for t in range(topics):
                for r in range(depth):
                    handle.write(
                        f"q{t} Q0 doc{rng.randrange(10**7)}-{r} {r + 1} {depth - r + rng.random():.4f} big\n"
                    )
        size = path.stat().st_size / 1024 / 1024
        rows = []
        for label, top in (("whole", None), (f"top {k}", k)):
            tracemalloc.start()
            start = time.perf_counter()
            read_run(path, top_k=top)
            wall = time.perf_counter() - start
            peak = tracemalloc.get_traced_memory()[1] / 1024 / 1024
            tracemalloc.stop()
            print(
                f"read a {size:.0f} MB run ({topics * depth:,} lines), {label}: peak {peak:.0f} MB traced, {wall:.1f}s"
            )
            rows.append(
                (f"run file {size:.0f} MB read {label}, peak traced MB", peak, float("nan"), "report")
            )
    return rows


if __name__ == "__main__":
    if sys.argv[1:] == ["runs"]:
        run_top_k()
    else:
        main(int(sys.argv[1]) if len(sys.argv) > 1 else 1024)
