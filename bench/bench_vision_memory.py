"""Peak memory of `judge run --method image-relevance` over many images.

A synthetic grids collection is written to a temporary directory (never kept): ``N`` images
(default 2,000), each a PNG of random pixels stored without compression (``KB`` kilobytes each,
default 100), in 2 x 2 grids of 5 systems (N / 20 prompts), with its images table. `judge run`
judges every (prompt, image) against the mock server (`judge mock-server --responder auto`, in
its own process), without a response cache. The peak resident set size of the `judge run` process
comes from ``VmHWM`` (bench/_peak.py).

What it shows: a run holds only what it read of each image (path, SHA-256, type, sizes), not its
bytes; the bytes are read again when a request is built. The target is a peak under 150 MB
(the interpreter with its libraries takes about 70-100 MB), however many image bytes the run
sends (N x KB: 200 MB by default). ``OLD_SRC=/path/to/an/older/src`` also measures that source
tree (``PYTHONPATH``), for a before/after comparison.

Usage: python bench/bench_vision_memory.py [N] [KB]
"""

from __future__ import annotations

import os
import struct
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path

from _common import env, measured, mock_server, verdict

TARGET_PEAK_MB = 150.0
SYSTEMS = ("A", "B", "C", "D", "E")
K = 4


def noise_png(side: int, seed: int) -> bytes:
    """An RGB PNG of ``side`` x ``side`` random pixels, stored (zlib level 0): about 3 side^2 bytes."""
    raw = b"".join(b"\0" + os.urandom(3 * side) for _ in range(side))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", side, side, 8, 2, 0, 0, 0)
    text = chunk(b"tEXt", b"seed\0" + str(seed).encode())  # (random pixels differ anyway)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + text
        + chunk(b"IDAT", zlib.compress(raw, 0))
        + chunk(b"IEND", b"")
    )


def make_collection(root: Path, n_images: int, kilobytes: int) -> list[str]:
    (root / "img").mkdir(parents=True, exist_ok=True)
    side = max(1, int((kilobytes * 1024 / 3) ** 0.5))
    prompts = [f"p{i}" for i in range(max(1, n_images // (len(SYSTEMS) * K)))]
    table, grids = ["image\tpath"], []
    n = 0
    for prompt in prompts:
        for system in SYSTEMS:
            for position in range(1, K + 1):
                image = f"{system}-{prompt}-{position}"
                (root / "img" / f"{image}.png").write_bytes(noise_png(side, n))
                table.append(f"{image}\timg/{image}.png")
                grids.append(f"{prompt}\t{system}\t{position}\t{image}")
                n += 1
    (root / "topics.tsv").write_text(
        "".join(f"{p}\ta picture number {p} of the benchmark\n" for p in prompts)
    )
    (root / "grids.tsv").write_text("\n".join(grids) + "\n")
    (root / "images.tsv").write_text("\n".join(table) + "\n")
    return ["--topics", str(root / "topics.tsv"), "--grids", str(root / "grids.tsv"),
            "--images", str(root / "images.tsv")]  # fmt: skip


def measure(args: list[str], url: str, out: Path, pythonpath: str | None = None) -> tuple[float, float]:
    """(peak RSS MB, wall seconds) of one `judge run`."""
    cmd = [sys.executable, "-m", "reljudge", "run", "--method", "image-relevance", "--model", "openai/mock",
           "--base-url", url, *args, "--output", str(out), "--no-cache", "--no-progress"]  # fmt: skip
    environment = env()
    if pythonpath:
        environment["PYTHONPATH"] = pythonpath
    done, peak, wall = measured(
        cmd, env=environment, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    if done.returncode != 0:
        raise SystemExit(f"judge run failed ({done.returncode}):\n{done.stderr}")
    return peak, wall


def main(n_images: int = 2000, kilobytes: int = 100) -> list[tuple[str, float, float, str]]:
    rows = []
    with tempfile.TemporaryDirectory() as tmp, mock_server(0.0, "auto") as urls:
        root = Path(tmp)
        start = time.perf_counter()
        args = make_collection(root / "data", n_images, kilobytes)
        files = list((root / "data" / "img").iterdir())
        total = sum(f.stat().st_size for f in files) / 1024 / 1024
        print(f"wrote {len(files):,} images, {total:.0f} MB, in {time.perf_counter() - start:.0f}s")
        trees = [("this tree", None)]
        if os.environ.get("OLD_SRC"):
            trees.append((f"OLD_SRC={os.environ['OLD_SRC']}", os.environ["OLD_SRC"]))
        for i, (name, path) in enumerate(trees):
            peak, wall = measure(args, urls["openai"], root / f"run{i}", path)
            print(
                f"judge run --method image-relevance, {len(files):,} images of {total:.0f} MB ({name}): "
                f"peak RSS {peak:.0f} MB, {wall:.1f}s"
            )
            if path is None:
                label = f"peak RSS MB, image-relevance over {len(files):,} images ({total:.0f} MB)"
                rows.append((label, peak, TARGET_PEAK_MB, verdict(peak, TARGET_PEAK_MB)))
    return rows


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:3]))
