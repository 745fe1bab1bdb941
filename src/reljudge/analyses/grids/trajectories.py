"""Trajectories over a grid's images and their probabilities (thesis §5.2, "expected metric").
Pure.

The expected metric of a grid X is ``μ(X) = E_{π∼Pr(π)}[metric(π)]`` over the trajectories π
(orders of inspection of its k images). Three laws of π:

- **uniform** (the superscript u of Table 5.5): every order of the k images equally likely;
- **Plackett–Luce over salience**: the first image is drawn with probability proportional to its
  salience σ(x) (normalised to sum to 1 over the grid: the law does not change), the next among
  the rest the same way, and so on: ``Pr(π) = Π_i σ(π_i) / Σ_{j≥i} σ(π_j)``. Images of salience 0
  come after every image of positive salience, in uniformly random order among themselves (all
  0: uniform). Sampled with the Gumbel trick: π = the images sorted by ``log σ(x) + G_x``,
  descending, ``G_x`` independent standard Gumbel variables;
- **row-major**: the one trajectory 1, 2, ..., k (a ranked list read top-down; a grid read like
  text).

Sampling (`sample_orders`): ``samples`` trajectories per prompt (100 in the thesis) from a random
stream seeded by (seed, prompt id) alone (`prompt_stream`), the same Gumbel draws for every
system's grid of the prompt (common random numbers: two systems are compared on the same draws)
and for both laws, so results never depend on the order of the input. Exact expectation
(`exact_orders`, `order_probabilities`): all k! orders with their probabilities, for k <= 8
(40,320 orders); it is the reference the sampler is tested against.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import math

import numpy as np

#: trajectories sampled per prompt (the thesis's 100)
DEFAULT_SAMPLES = 100
#: the largest grid whose k! orders are enumerated for the exact expectation
MAX_EXACT_K = 8
LAWS = ("uniform", "salience", "row-major")
#: below every key of an image of positive salience (log σ >= -745 for a float64 σ > 0, Gumbel
#: draws within ±50): images of salience 0 come last
_ZERO_OFFSET = 1.0e6


def prompt_stream(seed: int, prompt: str) -> np.random.Generator:
    """The random stream of one prompt: seeded by (seed, prompt id) only."""
    digest = hashlib.sha256(f"{seed}\t{prompt}".encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:16], "little"))


def gumbel_noise(seed: int, prompt: str, samples: int, k: int) -> np.ndarray:
    """``samples`` × ``k`` standard Gumbel draws of the prompt's stream."""
    return prompt_stream(seed, prompt).gumbel(size=(samples, k))


def normalised(salience: np.ndarray) -> np.ndarray:
    """σ / Σσ (all zero: uniform weights); a negative or non-finite value is a ValueError."""
    s = np.asarray(salience, dtype=np.float64)
    if not np.isfinite(s).all() or (s < 0).any():
        raise ValueError("salience must be finite and >= 0")
    total = s.sum()
    return s / total if total > 0 else np.full(s.shape, 1.0 / s.size)


def sample_orders(noise: np.ndarray, law: str, salience: np.ndarray | None = None) -> np.ndarray:
    """Trajectories (rows of image indices) from Gumbel draws (m × k): uniform, Plackett–Luce
    over ``salience`` (the Gumbel trick), or row-major (one row)."""
    m, k = noise.shape
    if law == "row-major":
        return np.arange(k)[None, :]
    if law == "uniform":
        keys = noise
    elif law == "salience":
        if salience is None:
            raise ValueError("the salience law needs salience values")
        s = normalised(salience)
        with np.errstate(divide="ignore"):
            keys = np.where(s > 0, np.log(s) + noise, noise - _ZERO_OFFSET)
    else:
        raise ValueError(f"unknown trajectory law {law!r} (choose one of {', '.join(LAWS)})")
    return np.argsort(-keys, axis=1, kind="stable")


def exact_orders(k: int) -> np.ndarray:
    """All k! orders of k images (k! × k, read-only), for k <= `MAX_EXACT_K`."""
    if not 1 <= k <= MAX_EXACT_K:
        raise ValueError(f"the exact expectation enumerates k! orders, for k <= {MAX_EXACT_K} (k = {k})")
    return _all_orders(k)


@functools.lru_cache(maxsize=MAX_EXACT_K)
def _all_orders(k: int) -> np.ndarray:
    orders = np.array(list(itertools.permutations(range(k))), dtype=np.int64)
    orders.flags.writeable = False
    return orders


def order_probabilities(orders: np.ndarray, law: str, salience: np.ndarray | None = None) -> np.ndarray:
    """Pr(π) of each order (rows) under a law (module docstring); for the rows of `exact_orders`
    they sum to 1."""
    orders = np.atleast_2d(orders)
    m, k = orders.shape
    if law == "uniform":
        return np.full(m, 1.0 / math.factorial(k))
    if law == "row-major":
        return np.all(orders == np.arange(k), axis=1).astype(np.float64)
    if law != "salience":
        raise ValueError(f"unknown trajectory law {law!r}")
    if salience is None:
        raise ValueError("the salience law needs salience values")
    s = normalised(salience)[orders]  # m × k, in inspection order
    remaining = np.cumsum(s[:, ::-1], axis=1)[:, ::-1]  # Σ_{j>=i} σ(π_j)
    left = np.arange(k, 0, -1, dtype=np.float64)  # images not yet inspected
    factors = np.where(
        remaining > 0, np.divide(s, remaining, out=np.zeros_like(s), where=remaining > 0), 1.0 / left
    )
    return factors.prod(axis=1)


__all__ = [
    "DEFAULT_SAMPLES",
    "LAWS",
    "MAX_EXACT_K",
    "exact_orders",
    "gumbel_noise",
    "normalised",
    "order_probabilities",
    "prompt_stream",
    "sample_orders",
]
