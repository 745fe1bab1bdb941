"""The set-based measures of one image grid along trajectories (thesis §5.2). Pure.

A system answers a prompt with a grid of k images; a trajectory π is the order in which a user
inspects them (``π_i`` the image inspected i-th). Over trajectories given as an m × k array of
image indices (one trajectory per row), with γ the patience of the position-based model:

- relevance (Eq. 5.3): ``f(x) = ⟨φ(x̂), φ(x)⟩``, the cosine of the image's vector with a target
  image's vector, clipped to [0, 1]; with several targets the maximum over them (``"max"``,
  the default) or their mean (``"mean"``, of the clipped cosines) -- `relevance`;
- RBP (Eq. 5.1): ``RBP(π) = Σ_{i=1..k} f(π_i) γ^(i−1)``, without Moffat and Zobel's (1 − γ)
  factor (it changes only the scale);
- ERR (Eq. 5.2): ``ERR(π) = Σ_{i=1..k} f(π_i) γ^(i−1) Π_{j=1..i−1} (1 − g(π_j))``, the cascade
  model in which the user stops after image j with probability ``g(π_j)``; g = f by default (a
  monotone g can be given); not Chapelle's ERR (no 1/i, no (2^g − 1)/2^g_max);
- novelty discount (Eq. 5.4): ``δ(i, π) = 1 − max_{j=1..i−1} ⟨φ(π_i), φ(π_j)⟩`` with δ(1, π) = 1
  (an empty max); the cosines between images are clipped to [0, 1] as in Eq. 5.3, so δ ∈ [0, 1]
  (an image identical to an earlier one adds nothing). The discounted variants use
  ``f(π_i)·δ(i, π)`` in place of ``f(π_i)`` everywhere, the stopping probability of ERR included
  (``g(f·δ)``: a near-duplicate satisfies no more than it adds) -- the thesis does not say which.

`trajectory_values` computes all four (RBP, RBP_δ, ERR, ERR_δ) for many trajectories at once.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

#: γ, the probability of going on to the next image (position-based model), as in the thesis
DEFAULT_GAMMA = 0.9
#: how several targets of a prompt make one relevance
TARGET_AGGREGATES = ("max", "mean")
#: the stopping probability of the cascade model as a function of relevance (default: g = f)
StopFunction = Callable[[np.ndarray], np.ndarray]


def unit_rows(vectors: np.ndarray) -> np.ndarray:
    """The rows scaled to length 1 (a zero row stays zero: its cosine with anything is 0)."""
    x = np.asarray(vectors, dtype=np.float64)
    if x.ndim == 1:
        x = x[None, :]
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return np.divide(x, norms, out=np.zeros_like(x), where=norms > 0)


def cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Cosine of every row of ``a`` with every row of ``b`` (len(a) × len(b))."""
    return unit_rows(a) @ unit_rows(b).T


def relevance(images: np.ndarray, targets: np.ndarray, aggregate: str = "max") -> np.ndarray:
    """``f`` (Eq. 5.3) of each image (k × d) against the prompt's targets (t × d): the cosine
    clipped to [0, 1], the max (or mean) over the targets."""
    if aggregate not in TARGET_AGGREGATES:
        raise ValueError(f"unknown target aggregate {aggregate!r} (choose max or mean)")
    t = np.atleast_2d(np.asarray(targets, dtype=np.float64))
    if t.shape[0] == 0:
        raise ValueError("no target vectors")
    clipped = np.clip(cosines(images, t), 0.0, 1.0)
    return clipped.max(axis=1) if aggregate == "max" else clipped.mean(axis=1)


def similarity(images: np.ndarray) -> np.ndarray:
    """The images' cosines with each other (k × k), clipped to [0, 1] (for δ, Eq. 5.4)."""
    return np.clip(cosines(images, images), 0.0, 1.0)


def novelty_discount(sim: np.ndarray, orders: np.ndarray) -> np.ndarray:
    """δ(i, π) (Eq. 5.4) for each trajectory (row of ``orders``, m × k) and position i: 1 − the
    largest similarity of π_i to an image inspected before it; 1 at the first position."""
    orders = np.atleast_2d(orders)
    m, k = orders.shape
    rows = np.arange(m)
    out = np.ones((m, k))
    seen = np.full(
        (m, sim.shape[0]), -np.inf
    )  # seen[r, x]: max similarity of x to the images inspected so far
    for i in range(k):
        current = orders[:, i]
        if i:
            out[:, i] = 1.0 - seen[rows, current]
        np.maximum(seen, sim[current], out=seen)
    return out


def discounts(k: int, gamma: float) -> np.ndarray:
    """γ^(i−1) for i = 1..k."""
    if not 0.0 < gamma <= 1.0:
        raise ValueError(f"gamma must be in (0, 1], got {gamma}")
    return gamma ** np.arange(k, dtype=np.float64)


def rbp(gains: np.ndarray, gamma: float = DEFAULT_GAMMA) -> np.ndarray:
    """RBP (Eq. 5.1) of gains in inspection order (m × k, or one trajectory of k)."""
    g = np.atleast_2d(np.asarray(gains, dtype=np.float64))
    return g @ discounts(g.shape[1], gamma)


def err(gains: np.ndarray, gamma: float = DEFAULT_GAMMA, stop: StopFunction | None = None) -> np.ndarray:
    """ERR (Eq. 5.2) of gains in inspection order (m × k): the user reaches position i with
    probability γ^(i−1) Π_{j<i} (1 − g(gain_j)); g = identity unless ``stop`` is given."""
    g = np.atleast_2d(np.asarray(gains, dtype=np.float64))
    p_stop = np.clip(stop(g) if stop is not None else g, 0.0, 1.0)
    going_on = np.cumprod(1.0 - p_stop, axis=1)
    reach = np.concatenate([np.ones((g.shape[0], 1)), going_on[:, :-1]], axis=1)
    return (g * reach) @ discounts(g.shape[1], gamma)


def trajectory_values(
    rel: np.ndarray,
    sim: np.ndarray,
    orders: np.ndarray,
    gamma: float = DEFAULT_GAMMA,
    stop: StopFunction | None = None,
) -> dict[str, np.ndarray]:
    """RBP, RBP_δ, ERR and ERR_δ of each trajectory (rows of ``orders``, image indices) of a
    grid with relevance ``rel`` (k) and image similarities ``sim`` (k × k)."""
    orders = np.atleast_2d(np.asarray(orders, dtype=np.int64))
    gains = np.asarray(rel, dtype=np.float64)[orders]
    novel = gains * novelty_discount(sim, orders)
    return {
        "RBP": rbp(gains, gamma),
        "RBP_delta": rbp(novel, gamma),
        "ERR": err(gains, gamma, stop),
        "ERR_delta": err(novel, gamma, stop),
    }


__all__ = [
    "DEFAULT_GAMMA",
    "TARGET_AGGREGATES",
    "cosines",
    "discounts",
    "err",
    "novelty_discount",
    "rbp",
    "relevance",
    "similarity",
    "trajectory_values",
    "unit_rows",
]
