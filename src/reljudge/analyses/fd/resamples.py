"""FD of many topic resamples at once, and the intervals over topics built on them.

**Resamples.** A resample gives each topic a weight (how often it is used: 0 or 1 when topics
are left out, a count for a bootstrap draw); the two sets of FD are the weighted topics'
reference and retrieved vectors. `fd_weighted` computes the FD of every resample from its topic
weights ``W`` (resamples × topics) without stacking the vectors again:

- means and traces of the covariances are weighted sums (matrix products with ``W``);
- ``Tr (Σ_X Σ_Y)^{1/2}`` is the sum of the square roots of the eigenvalues of
  ``Ã S_Y Ãᵀ / ((N_X − 1)(N_Y − 1))``, with ``Ã = D (X − 1 μ_Xᵀ)`` the weighted, centred rows of the
  smaller set (``D`` = square roots of the row weights) and ``S_Y`` the weighted scatter of the other.
  ``X S_Y Xᵀ`` is a weighted sum of per-topic matrices ``G_t G_tᵀ`` (``G = X Yᵀ``, ``G_t`` the columns
  of topic t) minus a rank-one term, so each resample costs a small matrix product and one
  eigenvalue problem of the size of the smaller set (53 × 53 for one reference passage per
  topic), batched over resamples. When both sets have more vectors than dimensions, the
  resamples' covariances are formed instead (d × d, in chunks).

The result equals `reljudge.analyses.fd.frechet.frechet_distance` of the stacked resample (up
to round-off; tests compare them).

**Intervals** (what ``judge fd --bootstrap`` prints). Drawing topics *with replacement* does not
suit FD: a topic drawn twice puts the same passages twice into both sets, which changes the
fitted covariances, so the bootstrap FD is shifted away from the FD it should vary around (on
DL21 every run's BCa interval missed its own FD). The resampling here never duplicates a topic:

- `jackknife_interval` (FD of one run): the delete-one-topic jackknife standard error,
  ``se² = (n − 1)/n · Σ_t (FD_(t) − mean)²``, and the normal interval ``FD ± z·se``;
- `half_sample_interval` (a statistic of many runs that is not smooth in the topics, such as
  Kendall τ between the measure and −FD): random subsets of m topics drawn without replacement
  (`half_samples`; m = ⌊n/2⌋, or more when half the topics would put the smaller set of FD on
  the other side of the dimension than all of them, `subsample_size`: FD behaves differently
  with fewer vectors than dimensions), the spread of the statistic over them rescaled to n
  topics (the delete-d jackknife, d = n − m: ``se² = m/(n − m) · var``), and the normal interval
  ``θ ± z·se``, clipped to the statistic's range.

Both are centred on the estimate, so they always hold it. They are about the *topic sampling*:
the value the run (or the pair of rankings) would get on another set of as many topics from the
same population, with the same k, reference rule and vectors. FD depends on the number of
topics (it is biased upward in small samples), so this is not an interval for the FD of an
infinite topic set. `bench/bench_fd_coverage.py` measures their coverage by simulation.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = [
    "fd_weighted",
    "half_sample_interval",
    "half_samples",
    "jackknife_interval",
    "leave_one_out",
    "subsample_size",
    "topic_rows",
]

#: how many replicates' d × d covariances are formed at once (the large-set route)
_CHUNK = 32


def topic_rows(blocks: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """The vectors of every topic stacked (n × d) and each row's topic index."""
    parts = [b for b in blocks if b.size]
    if not parts:
        return np.zeros((0, 0)), np.zeros(0, dtype=np.int64)
    rows = np.concatenate(parts).astype(np.float64)
    index = np.concatenate([np.full(len(b), t, dtype=np.int64) for t, b in enumerate(blocks) if b.size])
    return rows, index


def _trace_sqrt_small(
    small: np.ndarray, s_topic: np.ndarray, other: np.ndarray, o_topic: np.ndarray, W: np.ndarray
) -> np.ndarray:
    """Tr (Σ_S Σ_O)^{1/2} · sqrt((N_S − 1)(N_O − 1)) per replicate, through the smaller set S."""
    B, T = W.shape
    n = small.shape[0]
    G = small @ other.T  # n × m
    P = np.zeros((T, n, n))
    for t in range(T):
        cols = G[:, o_topic == t]
        if cols.size:
            P[t] = cols @ cols.T
    wo = W[:, o_topic]  # B × m
    No = wo.sum(axis=1)
    ws = W[:, s_topic]  # B × n
    Ns = ws.sum(axis=1)
    M = (W @ P.reshape(T, n * n)).reshape(B, n, n)  # Q0 = Σ_j w_j (S o_j)(S o_j)ᵀ
    s_mu_o = (wo @ G.T) / No[:, None]  # S μ_O, B × n
    # Q = Q0 − N_O (S μ_O)(S μ_O)ᵀ, centred at the weighted mean of S: C Q Cᵀ with
    # C = I − 1 (w_S / N_S)ᵀ, i.e. Q − a 1ᵀ − 1 aᵀ + c with a = Q w / N_S, c = wᵀ Q w / N_S²
    a = np.einsum("bij,bj->bi", M, ws) / Ns[:, None]
    a -= s_mu_o * (No * np.einsum("bi,bi->b", s_mu_o, ws) / Ns)[:, None]
    c = np.einsum("bi,bi->b", a, ws) / Ns
    M -= (No[:, None] * s_mu_o)[:, :, None] * s_mu_o[:, None, :]
    M -= a[:, :, None]
    M -= a[:, None, :]
    M += c[:, None, None]
    root = np.sqrt(ws)
    M *= root[:, :, None]
    M *= root[:, None, :]  # symmetric up to round-off; eigvalsh reads one triangle
    # rows of topics a replicate did not draw are zero: each replicate's eigenproblem is solved
    # on its drawn rows only (about 63 % of them), replicates grouped by that number
    drawn = ws > 0
    sizes = drawn.sum(axis=1)
    order = np.argsort(~drawn, axis=1, kind="stable")
    out = np.zeros(B)
    for size in np.unique(sizes):
        if size == 0:
            continue
        rows = np.flatnonzero(sizes == size)
        keep = order[rows, :size]
        block = np.take_along_axis(M[rows], keep[:, :, None], axis=1)
        block = np.take_along_axis(block, keep[:, None, :], axis=2)
        out[rows] = np.sqrt(np.clip(np.linalg.eigvalsh(block), 0.0, None)).sum(axis=1)
    return out


def _trace_sqrt_large(
    x: np.ndarray, x_topic: np.ndarray, y: np.ndarray, y_topic: np.ndarray, W: np.ndarray
) -> np.ndarray:
    """The same through the replicates' d × d scatter matrices (both sets larger than d)."""
    B, T = W.shape
    d = x.shape[1]

    def scatters(rows: np.ndarray, topic: np.ndarray) -> np.ndarray:
        out = np.zeros((T, d, d))
        for t in range(T):
            block = rows[topic == t]
            if block.size:
                out[t] = block.T @ block
        return out.reshape(T, d * d)

    sx, sy = scatters(x, x_topic), scatters(y, y_topic)
    result = np.empty(B)
    for start in range(0, B, _CHUNK):
        w = W[start : start + _CHUNK]
        covs = []
        for rows, topic, scatter in ((x, x_topic, sx), (y, y_topic, sy)):
            wr = w[:, topic]
            n = wr.sum(axis=1)
            mu = (wr @ rows) / n[:, None]
            s = (w @ scatter).reshape(len(w), d, d) - n[:, None, None] * mu[:, :, None] * mu[:, None, :]
            covs.append(s)
        vals, vecs = np.linalg.eigh(covs[0])
        root = (vecs * np.sqrt(np.clip(vals, 0.0, None))[:, None, :]) @ vecs.transpose(0, 2, 1)
        m = root @ covs[1] @ root
        m = (m + m.transpose(0, 2, 1)) / 2.0
        result[start : start + len(w)] = np.sqrt(np.clip(np.linalg.eigvalsh(m), 0.0, None)).sum(axis=1)
    return result


def fd_weighted(
    x: np.ndarray, x_topic: np.ndarray, y: np.ndarray, y_topic: np.ndarray, W: np.ndarray
) -> np.ndarray:
    """FD of every replicate (row of topic counts ``W``) between the reference rows ``x`` and the
    retrieved rows ``y`` (each with its topic index); NaN where a side has fewer than two vectors."""
    W = np.atleast_2d(np.asarray(W, dtype=np.float64))
    wx, wy = W[:, x_topic], W[:, y_topic]
    nx, ny = wx.sum(axis=1), wy.sum(axis=1)
    ok = (nx >= 2) & (ny >= 2)
    out = np.full(W.shape[0], np.nan)
    if not ok.any():
        return out
    W, wx, wy, nx, ny = W[ok], wx[ok], wy[ok], nx[ok], ny[ok]
    mx, my = (wx @ x) / nx[:, None], (wy @ y) / ny[:, None]
    trace_x = (wx @ np.einsum("ij,ij->i", x, x) - nx * np.einsum("ij,ij->i", mx, mx)) / (nx - 1)
    trace_y = (wy @ np.einsum("ij,ij->i", y, y) - ny * np.einsum("ij,ij->i", my, my)) / (ny - 1)
    d = x.shape[1]
    if min(len(x), len(y)) > d:
        root = _trace_sqrt_large(x, x_topic, y, y_topic, W) / np.sqrt((nx - 1) * (ny - 1))
    elif len(x) <= len(y):
        root = _trace_sqrt_small(x, x_topic, y, y_topic, W) / np.sqrt((nx - 1) * (ny - 1))
    else:
        root = _trace_sqrt_small(y, y_topic, x, x_topic, W) / np.sqrt((nx - 1) * (ny - 1))
    diff = mx - my
    fd = np.einsum("ij,ij->i", diff, diff) + trace_x + trace_y - 2.0 * root
    out[ok] = np.maximum(fd, 0.0)
    return out


def _z(level: float) -> float:
    from scipy.stats import norm

    return float(norm.ppf(0.5 + level / 2.0))


def leave_one_out(n_topics: int) -> np.ndarray:
    """The topic weights of the n delete-one-topic resamples (n × n, zero on the diagonal)."""
    return 1.0 - np.eye(n_topics)


def subsample_size(n_topics: int, n_smaller: int, dim: int) -> int:
    """Topics per subsample for `half_samples`: half of them, or more when the smaller set of FD has
    more vectors than ``dim`` dimensions and half the topics would leave it with fewer (at most
    n − 2, so that at least two topics are left out)."""
    m = n_topics // 2
    if n_topics >= 4 and n_smaller > dim and m * n_smaller / n_topics <= dim:
        m = min(int(np.floor(dim * n_topics / n_smaller)) + 1, n_topics - 2)
    return max(m, 1)


def half_samples(n_topics: int, n_draws: int, seed: int = 0, m: int | None = None) -> np.ndarray:
    """Topic weights (n_draws × n_topics, 0 or 1) of random subsets of ``m`` topics (default
    ⌊n/2⌋) drawn without replacement, one per row."""
    rng = np.random.default_rng(seed)
    m = n_topics // 2 if m is None else m
    W = np.zeros((n_draws, n_topics))
    for b in range(n_draws):
        W[b, rng.permutation(n_topics)[:m]] = 1.0
    return W


def jackknife_interval(
    estimate: float, deleted: np.ndarray, level: float = 0.95
) -> tuple[float, float, float]:
    """``(low, high, se)``: the normal interval around ``estimate`` with the delete-one jackknife
    standard error of the values ``deleted`` (the statistic without each topic in turn); NaN
    when fewer than two of them are finite."""
    values = np.asarray(deleted, float)
    values = values[np.isfinite(values)]
    n = values.size
    if n < 2 or not np.isfinite(estimate):
        return float("nan"), float("nan"), float("nan")
    se = float(np.sqrt((n - 1) / n * ((values - values.mean()) ** 2).sum()))
    half = _z(level) * se
    return estimate - half, estimate + half, se


def half_sample_interval(
    estimate: float,
    replicates: np.ndarray,
    n_topics: int,
    level: float = 0.95,
    *,
    bounds: tuple[float, float] = (-np.inf, np.inf),
    m: int | None = None,
) -> tuple[float, float, float]:
    """``(low, high, se)``: the normal interval around ``estimate`` with the delete-d jackknife
    standard error of ``replicates`` computed on subsets of ``m`` of the ``n_topics`` topics
    (`half_samples`, default m = ⌊n/2⌋), clipped to ``bounds`` (which hold the estimate); NaN
    when fewer than two are finite."""
    values = np.asarray(replicates, float)
    values = values[np.isfinite(values)]
    m = n_topics // 2 if m is None else m
    if values.size < 2 or not np.isfinite(estimate) or m < 1 or m >= n_topics:
        return float("nan"), float("nan"), float("nan")
    se = float(values.std(ddof=1) * np.sqrt(m / (n_topics - m)))
    half = _z(level) * se
    low, high = max(estimate - half, bounds[0]), min(estimate + half, bounds[1])
    return float(min(low, estimate)), float(max(high, estimate)), se
