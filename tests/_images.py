"""Tiny images written by hand for the vision tests (no binary fixtures): a valid PNG of any size
and colour (zlib), the headers of a GIF, a JPEG and a WebP, and a small grids collection --
prompts as topics, three systems' 2 x 2 grids of distinct PNGs, the images table."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path


def png(width: int = 4, height: int = 3, rgb: tuple[int, int, int] = (200, 30, 30)) -> bytes:
    """A valid RGB PNG of one colour."""
    raw = b"".join(b"\0" + bytes(rgb) * width for _ in range(height))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(raw))
        + chunk(b"IEND", b"")
    )


def gif(width: int, height: int) -> bytes:
    return b"GIF89a" + struct.pack("<HH", width, height) + b"\x00\x00\x00;"


def jpeg(width: int, height: int) -> bytes:
    """A JPEG's markers up to its frame header (enough for its type and size)."""
    app0 = b"\xff\xe0" + struct.pack(">H", 16) + b"JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00"
    sof = b"\xff\xc0" + struct.pack(">HBHHB", 11, 8, height, width, 1) + b"\x01\x11\x00"
    return b"\xff\xd8" + app0 + sof + b"\xff\xd9"


def webp(width: int, height: int) -> bytes:
    """A WebP's RIFF header with a VP8X chunk (its canvas size)."""
    body = b"WEBP" + b"VP8X" + struct.pack("<I", 10) + b"\x00\x00\x00\x00"
    body += (width - 1).to_bytes(3, "little") + (height - 1).to_bytes(3, "little")
    return b"RIFF" + struct.pack("<I", len(body)) + body


PROMPTS = {"p1": "a red fox in the snow", "p2": "a lighthouse at dusk"}
SYSTEMS = ("A", "B", "C")
K = 4


def grid_collection(root: Path) -> dict[str, Path]:
    """topics.tsv, grids.tsv and images.tsv (paths relative to it, under img/) in ``root``."""
    (root / "img").mkdir(parents=True, exist_ok=True)
    table, grids = ["image\tpath"], []
    for s, system in enumerate(SYSTEMS):
        for p, prompt in enumerate(PROMPTS):
            for position in range(1, K + 1):
                image = f"{system}-{prompt}-{position}"
                (root / "img" / f"{image}.png").write_bytes(png(4, 3, (60 * s, 40 * position, 90 * p)))
                table.append(f"{image}\timg/{image}.png")
                grids.append(f"{prompt}\t{system}\t{position}\t{image}")
    files = {"topics": root / "topics.tsv", "grids": root / "grids.tsv", "images": root / "images.tsv"}
    files["topics"].write_text("".join(f"{q}\t{t}\n" for q, t in PROMPTS.items()))
    files["grids"].write_text("\n".join(grids) + "\n")
    files["images"].write_text("\n".join(table) + "\n")
    return files
