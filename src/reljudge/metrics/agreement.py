"""Label-level agreement: Cohen's κ, Krippendorff's α and confusion matrices.

- `cohen_kappa` treats labels as ordered categories (sorted distinct values of both raters,
  or ``labels``); weights ``linear`` / ``quadratic`` use the category *positions*, as
  scikit-learn does.
- `krippendorff_alpha` takes a raters × units matrix with NaN for missing values and supports
  the nominal, ordinal and interval levels (Krippendorff 2011, coincidence-matrix form). Units
  with fewer than two values are not pairable and are ignored.
- `binarize` turns grades into 0/1 with a stated threshold (``label >= threshold`` is 1).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal

import numpy as np

Scores = Mapping[str, Mapping[str, float]]
KappaWeights = Literal["linear", "quadratic"] | None
AlphaLevel = Literal["nominal", "ordinal", "interval"]


def paired_labels(
    qrels: Scores, judgments: Scores, *, missing: float | None = None
) -> tuple[list[tuple[str, str]], np.ndarray, np.ndarray]:
    """The (qid, docid) pairs judged by both, with the human and the judge label arrays.

    ``missing`` fills a human-judged pair the judge left out (``None`` skips it).
    """
    keys: list[tuple[str, str]] = []
    human: list[float] = []
    judge: list[float] = []
    for qid, docs in qrels.items():
        scores = judgments.get(qid, {})
        for docid, grade in docs.items():
            s = scores.get(docid, missing)
            if s is None:
                continue
            keys.append((qid, docid))
            human.append(float(grade))
            judge.append(float(s))
    return keys, np.asarray(human, dtype=float), np.asarray(judge, dtype=float)


def binarize(labels: Sequence[float] | np.ndarray, threshold: float) -> np.ndarray:
    """1 where ``label >= threshold``, else 0."""
    return (np.asarray(labels, dtype=float) >= threshold).astype(int)


def confusion_matrix(
    a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray, labels: Sequence[float] | None = None
) -> tuple[list[float], np.ndarray]:
    """Counts ``m[i, j]`` of items with ``a == labels[i]`` and ``b == labels[j]``."""
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    if a.shape != b.shape:
        raise ValueError(f"label arrays differ in length: {a.size} vs {b.size}")
    cats = sorted(set(a.tolist()) | set(b.tolist())) if labels is None else [float(x) for x in labels]
    index = {c: i for i, c in enumerate(cats)}
    try:
        ia = np.fromiter((index[x] for x in a.tolist()), dtype=np.int64, count=a.size)
        ib = np.fromiter((index[x] for x in b.tolist()), dtype=np.int64, count=b.size)
    except KeyError as err:
        raise ValueError(f"label {err.args[0]!r} is not among labels {cats}") from None
    m = np.zeros((len(cats), len(cats)), dtype=np.int64)
    np.add.at(m, (ia, ib), 1)
    return cats, m


def cohen_kappa(
    a: Sequence[float] | np.ndarray,
    b: Sequence[float] | np.ndarray,
    *,
    weights: KappaWeights = None,
    labels: Sequence[float] | None = None,
) -> float:
    """Cohen's κ between two raters (unweighted, linear or quadratic weights).

    Returns NaN when there are no items; 1.0 when both raters use one and the same category
    throughout (perfect agreement with no chance variation), matching the limit of the formula.
    """
    cats, m = confusion_matrix(a, b, labels)
    n = m.sum()
    if n == 0:
        return float("nan")
    k = len(cats)
    i, j = np.indices((k, k))
    if weights is None:
        w = (i != j).astype(float)
    elif weights == "linear":
        w = np.abs(i - j).astype(float)
    elif weights == "quadratic":
        w = ((i - j) ** 2).astype(float)
    else:
        raise ValueError(f"weights must be None, 'linear' or 'quadratic', got {weights!r}")
    observed = m / n
    expected = np.outer(m.sum(axis=1), m.sum(axis=0)) / n / n
    denom = (w * expected).sum()
    if denom == 0:
        return 1.0 if (w * observed).sum() == 0 else float("nan")
    return float(1.0 - (w * observed).sum() / denom)


def krippendorff_alpha(
    reliability_data: Sequence[Sequence[float]] | np.ndarray, *, level: AlphaLevel = "nominal"
) -> float:
    """Krippendorff's α for a raters × units matrix (NaN = missing), any number of raters.

    Returns NaN when fewer than two pairable values exist or all values are identical.
    """
    data = np.asarray(reliability_data, dtype=float)
    if data.ndim != 2:
        raise ValueError("reliability data must be a 2-D array (raters × units)")
    present = ~np.isnan(data)
    flat = data[present]  # row-major: the order of np.nonzero(present)
    values, codes = _value_codes(flat)
    if values.size < 2:
        return float("nan")
    # n[u, c]: how many raters gave unit u the value c
    n_units = data.shape[1]
    _, unit_idx = np.nonzero(present)
    counts = np.bincount(unit_idx * values.size + codes, minlength=n_units * values.size)
    counts = counts.reshape(n_units, values.size).astype(float)
    m_u = counts.sum(axis=1)
    pairable = m_u >= 2
    counts = counts[pairable]
    m_u = m_u[pairable]
    if counts.shape[0] == 0:
        return float("nan")
    inv = 1.0 / (m_u - 1.0)
    # coincidence matrix o[c, k] = sum_u n_uc (n_uk - [c == k]) / (m_u - 1)
    o = (counts * inv[:, None]).T @ counts
    o[np.diag_indices_from(o)] -= (counts * inv[:, None]).sum(axis=0)
    return alpha_from_coincidences(o, values, level=level)


def alpha_from_coincidences(o: np.ndarray, values: np.ndarray, *, level: AlphaLevel = "nominal") -> float:
    """Krippendorff's α from its coincidence matrix ``o`` over the sorted category ``values``
    (categories nobody used may have zero rows). For two raters ``o`` is the contingency table
    plus its transpose, which makes many two-rater α cheap (`reljudge.sweep.analysis.alpha`)."""
    n_c = o.sum(axis=1)
    n = n_c.sum()
    if level == "nominal":
        delta = 1.0 - np.eye(values.size)
    elif level == "interval":
        delta = (values[:, None] - values[None, :]) ** 2
    elif level == "ordinal":
        cum = np.concatenate([[0.0], np.cumsum(n_c)])
        lo = np.minimum.outer(np.arange(values.size), np.arange(values.size))
        hi = np.maximum.outer(np.arange(values.size), np.arange(values.size))
        # sum of n_g for g between c and k inclusive, minus half of the two ends
        delta = (cum[hi + 1] - cum[lo] - (n_c[lo] + n_c[hi]) / 2.0) ** 2
    else:
        raise ValueError(f"level must be 'nominal', 'ordinal' or 'interval', got {level!r}")
    d_observed = (o * delta).sum()
    d_expected = (np.outer(n_c, n_c) * delta).sum() / (n - 1.0)
    if d_expected == 0:
        return float("nan")
    return float(1.0 - d_observed / d_expected)


def _value_codes(flat: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct values (sorted) and each value's index among them. Labels are small
    integers: then without sorting (a count per integer), else `np.unique`."""
    if not flat.size:
        return flat, np.zeros(0, dtype=np.int64)
    low, high = flat.min(), flat.max()
    if high - low < 65536 and np.array_equal(flat, np.floor(flat)):
        offset = (flat - low).astype(np.int64)
        seen = np.bincount(offset) > 0
        values = np.flatnonzero(seen).astype(float) + low
        return values, (np.cumsum(seen) - 1)[offset]
    values, codes = np.unique(flat, return_inverse=True)
    return values, codes.reshape(-1)


def labels_matrix(
    sets: Sequence[Scores], *, topics: Sequence[str] | None = None
) -> tuple[list[tuple[str, str]], np.ndarray]:
    """Stack several judgment sets into a raters × units matrix (NaN where a set has no label).

    Units are every (qid, docid) labelled by at least one set (restricted to ``topics``).
    """
    keep = set(topics) if topics is not None else None
    units: dict[tuple[str, str], int] = {}
    for s in sets:
        for qid, docs in s.items():
            if keep is not None and qid not in keep:
                continue
            for docid in docs:
                units.setdefault((qid, docid), len(units))
    data = np.full((len(sets), len(units)), np.nan)
    for r, s in enumerate(sets):
        for qid, docs in s.items():
            if keep is not None and qid not in keep:
                continue
            for docid, v in docs.items():
                data[r, units[(qid, docid)]] = float(v)
    return list(units), data
