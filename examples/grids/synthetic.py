"""Synthetic image grids whose answer is known (the worked example of docs/guides/image-grids.md).

Every prompt has a target direction t in ``dim`` dimensions and two target images near it. Three
systems answer each prompt with a grid of ``k`` images (2 × 4 by default), as vectors:

- **A**: diverse images near the target: t plus independent noise (cosine to t about 0.8);
- **B**: the same image repeated near the target: one image a little closer to t than A's,
  repeated with tiny noise (near-duplicates, each a distinct image id);
- **C**: diverse images far from the target: independent random vectors (cosine to t about 0).

So fluency (RBP, ERR) ranks A and B above C, the novelty-discounted measures rank A above B, and
Diversity ranks A and C above B. The human preferences are built from the order A > B > C:
A vs B "X much better" (−2), except every fifth prompt "the same" (0), A vs C −2, B vs C −1. The
prompts are split into two prompt sets, ``coco`` and ``prompts``. Salience: random per image.

Deterministic (seeded). ``python examples/grids/synthetic.py OUT`` writes OUT/grids.tsv,
OUT/embeddings.npy + OUT/embeddings.ids (grid and target images), OUT/targets.tsv,
OUT/salience.tsv and OUT/preferences.tsv; `generate` returns the same data in memory.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

SYSTEMS = ("A", "B", "C")


def generate(prompts: int = 24, k: int = 8, dim: int = 32, seed: int = 0) -> dict:
    """The synthetic data in memory: grids {(prompt, system): image ids}, vectors {image id:
    vector}, targets {prompt: target image ids}, salience {image id: value}, preferences
    [(prompt, system_x, system_y, pref, prompt_set)]."""
    rng = np.random.default_rng(seed)
    grids: dict[tuple[str, str], list[str]] = {}
    vectors: dict[str, np.ndarray] = {}
    targets: dict[str, list[str]] = {}
    preferences: list[tuple[str, str, str, int, str]] = []
    for n in range(prompts):
        prompt = f"p{n:02d}"
        t = rng.normal(size=dim)
        t /= np.linalg.norm(t)
        targets[prompt] = []
        for j in range(2):
            name = f"{prompt}-target{j}"
            vectors[name] = t + 0.2 * rng.normal(size=dim) / np.sqrt(dim)
            targets[prompt].append(name)
        one = t + 0.6 * rng.normal(size=dim) / np.sqrt(dim)
        for system in SYSTEMS:
            ids = []
            for i in range(k):
                name = f"{prompt}-{system}{i}"
                if system == "A":
                    vectors[name] = t + 0.8 * rng.normal(size=dim) / np.sqrt(dim)
                elif system == "B":
                    vectors[name] = one + 0.01 * rng.normal(size=dim) / np.sqrt(dim)
                else:
                    vectors[name] = rng.normal(size=dim) / np.sqrt(dim)
                ids.append(name)
            grids[(prompt, system)] = ids
        prompt_set = "coco" if n % 2 == 0 else "prompts"
        preferences += [
            (prompt, "A", "B", 0 if n % 5 == 4 else -2, prompt_set),
            (prompt, "A", "C", -2, prompt_set),
            (prompt, "B", "C", -1, prompt_set),
        ]
    salience = {name: float(rng.uniform(0.05, 1.0)) for key in sorted(grids) for name in grids[key]}
    return {
        "grids": grids,
        "vectors": vectors,
        "targets": targets,
        "salience": salience,
        "preferences": preferences,
    }


def write(out: Path, data: dict) -> None:
    """The data as the files ``judge grids`` reads."""
    out.mkdir(parents=True, exist_ok=True)
    lines = ["prompt\tsystem\tposition\timage"]
    for (prompt, system), ids in sorted(data["grids"].items()):
        lines += [f"{prompt}\t{system}\t{i}\t{image}" for i, image in enumerate(ids, start=1)]
    (out / "grids.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    names = sorted(data["vectors"])
    np.save(out / "embeddings.npy", np.array([data["vectors"][n] for n in names], dtype=np.float32))
    (out / "embeddings.ids").write_text("".join(f"{n}\n" for n in names), encoding="utf-8")
    (out / "targets.tsv").write_text(
        "".join(f"{p}\t{image}\n" for p, images in sorted(data["targets"].items()) for image in images),
        encoding="utf-8",
    )
    (out / "salience.tsv").write_text(
        "".join(f"{image}\t{value:.6f}\n" for image, value in sorted(data["salience"].items())),
        encoding="utf-8",
    )
    (out / "preferences.tsv").write_text(
        "prompt\tsystem_x\tsystem_y\tpref\tset\n"
        + "".join(f"{p}\t{x}\t{y}\t{pref}\t{s}\n" for p, x, y, pref, s in data["preferences"]),
        encoding="utf-8",
    )


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python examples/grids/synthetic.py OUT_DIR")
    write(Path(sys.argv[1]), generate())
    print(f"synthetic grids (systems A, B, C) -> {sys.argv[1]}")
