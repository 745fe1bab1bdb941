"""Fréchet distance between two sets of embeddings, each fitted with a Gaussian.

``FD(X, Y) = ‖μ_X − μ_Y‖² + Tr(Σ_X + Σ_Y − 2 (Σ_X Σ_Y)^{1/2})`` with sample means and
covariances (N − 1 denominator, as numpy.cov and pytorch-fid). The value is on the usual
squared scale (no square root is taken).

Numerics: no ``sqrtm`` is used. ``Tr (Σ_X Σ_Y)^{1/2}`` is the sum of the square roots of the
eigenvalues of Σ_X Σ_Y, which are real and non-negative (both matrices are PSD). It is
computed exactly in one of two ways:

- when either set has fewer vectors than dimensions (rank-deficient covariance), as the
  nuclear norm of ``A_X A_Yᵀ / sqrt((n_X − 1)(n_Y − 1))`` (A = centred data): the singular
  values of that small n_X × n_Y matrix are the square roots of the non-zero eigenvalues.
  This is exact, needs **no regularisation**, and costs O(n_X n_Y p);
- otherwise through the symmetric form ``Tr (Σ_X^{1/2} Σ_Y Σ_X^{1/2})^{1/2}`` with ``eigh``
  (eigenvalues clipped at 0 against round-off).

``eps > 0`` adds ``eps·I`` to both covariances (the pytorch-fid fallback uses 1e-6); the
default is 0 because the computation above is stable without it.
"""

from __future__ import annotations

import numpy as np


def gaussian_stats(vectors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean vector and sample covariance (N − 1 denominator) of an n × p array."""
    x = _as_matrix(vectors, "vectors")
    if x.shape[0] < 2:
        raise ValueError("need at least two vectors to estimate a covariance")
    mu = x.mean(axis=0)
    a = x - mu
    return mu, (a.T @ a) / (x.shape[0] - 1)


def _as_matrix(vectors: np.ndarray, what: str) -> np.ndarray:
    x = np.asarray(vectors, dtype=np.float64)
    if x.ndim == 1:
        x = x[:, None]
    if x.ndim != 2:
        raise ValueError(f"{what} must be an n × p array")
    if not np.isfinite(x).all():
        raise ValueError(f"{what} contain NaN or infinite values")
    return x


def _trace_sqrt_product_cov(s1: np.ndarray, s2: np.ndarray) -> float:
    w, v = np.linalg.eigh(s1)
    root = (v * np.sqrt(np.clip(w, 0.0, None))) @ v.T
    m = root @ s2 @ root
    m = (m + m.T) / 2.0
    return float(np.sqrt(np.clip(np.linalg.eigvalsh(m), 0.0, None)).sum())


def frechet_distance_stats(
    mu1: np.ndarray, sigma1: np.ndarray, mu2: np.ndarray, sigma2: np.ndarray, *, eps: float = 0.0
) -> float:
    """FD between two Gaussians given by mean and covariance."""
    mu1, mu2 = np.atleast_1d(mu1).astype(float), np.atleast_1d(mu2).astype(float)
    sigma1, sigma2 = np.atleast_2d(sigma1).astype(float), np.atleast_2d(sigma2).astype(float)
    if mu1.shape != mu2.shape or sigma1.shape != sigma2.shape or sigma1.shape != (mu1.size, mu1.size):
        raise ValueError("means and covariances have inconsistent shapes")
    if eps:
        sigma1 = sigma1 + eps * np.eye(mu1.size)
        sigma2 = sigma2 + eps * np.eye(mu1.size)
    diff = mu1 - mu2
    tr = _trace_sqrt_product_cov(sigma1, sigma2)
    return float(max(diff @ diff + np.trace(sigma1) + np.trace(sigma2) - 2.0 * tr, 0.0))


def frechet_distance(x: np.ndarray, y: np.ndarray, *, eps: float = 0.0) -> float:
    """FD between the Gaussian fits of two sets of vectors (n_x × p and n_y × p)."""
    x = _as_matrix(x, "first set")
    y = _as_matrix(y, "second set")
    if x.shape[1] != y.shape[1]:
        raise ValueError(f"dimension mismatch: {x.shape[1]} vs {y.shape[1]}")
    if x.shape[0] < 2 or y.shape[0] < 2:
        raise ValueError("each set needs at least two vectors")
    n1, p = x.shape
    n2 = y.shape[0]
    if eps or min(n1, n2) >= p:
        mu1, s1 = gaussian_stats(x)
        mu2, s2 = gaussian_stats(y)
        return frechet_distance_stats(mu1, s1, mu2, s2, eps=eps)
    mu1, mu2 = x.mean(axis=0), y.mean(axis=0)
    a1, a2 = x - mu1, y - mu2
    c1, c2 = n1 - 1.0, n2 - 1.0
    tr1 = float((a1 * a1).sum() / c1)
    tr2 = float((a2 * a2).sum() / c2)
    cross = a1 @ a2.T
    tr_sqrt = float(np.linalg.svd(cross, compute_uv=False).sum() / np.sqrt(c1 * c2))
    diff = mu1 - mu2
    return float(max(diff @ diff + tr1 + tr2 - 2.0 * tr_sqrt, 0.0))
