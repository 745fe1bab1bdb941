"""The baselines of the thesis's Table 5.5 (§5.2). Pure.

- **Diversity**: the mean pairwise cosine of a grid's image vectors, over its k(k−1)/2 pairs
  (not clipped). A higher mean cosine is a *less* diverse grid, so it is reported as
  ``diversity = 1 − mean pairwise cosine``: higher = more diverse (a grid of one image repeated
  scores 0). `mean_pairwise_cosine` is the thesis's raw value.
- **FID**: the Fréchet distance (`reljudge.analyses.fd.frechet`, on the usual squared scale)
  between the Gaussian fit of a system's images (every cell of its grids over a set of prompts)
  and that of the prompts' target vectors. Lower is better. It is a corpus-level measure: one
  value per system and prompt set, so its preference between two systems is the same on every
  prompt of the set. NaN when either side has fewer than two vectors.
"""

from __future__ import annotations

import numpy as np

from reljudge.analyses.fd.frechet import frechet_distance
from reljudge.analyses.grids.measures import cosines


def mean_pairwise_cosine(images: np.ndarray) -> float:
    """The mean cosine over the grid's pairs of images (NaN for a grid of one image)."""
    x = np.atleast_2d(np.asarray(images, dtype=np.float64))
    k = x.shape[0]
    if k < 2:
        return float("nan")
    upper = np.triu_indices(k, 1)
    return float(cosines(x, x)[upper].mean())


def diversity(images: np.ndarray) -> float:
    """1 − the mean pairwise cosine (higher = more diverse)."""
    return 1.0 - mean_pairwise_cosine(images)


def fid(images: np.ndarray, targets: np.ndarray) -> float:
    """Fréchet distance between a system's image vectors and the target vectors (lower is better;
    NaN with fewer than two vectors on a side)."""
    x = np.atleast_2d(np.asarray(images, dtype=np.float64))
    t = np.atleast_2d(np.asarray(targets, dtype=np.float64))
    if x.shape[0] < 2 or t.shape[0] < 2:
        return float("nan")
    return frechet_distance(x, t)


__all__ = ["diversity", "fid", "mean_pairwise_cosine"]
