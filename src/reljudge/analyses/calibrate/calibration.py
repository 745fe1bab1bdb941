"""Calibration of judge scores on a few human-labelled topics: the mapping from judge scores
(labels or expected relevance) to human grades, fitted on some topics and judged on the others.

- **binary**: the threshold on the judge's scores that maximises Cohen's κ against the human
  binary labels (``grade >= human_threshold``) on the fitting topics (`best_threshold`; the
  lowest such threshold when several tie);
- **graded** (ordinal cut-points): for each human grade k above the lowest, the threshold that
  best separates ``grade >= k`` (κ), made non-decreasing; a score maps to the lowest grade plus
  the number of cut-points it reaches (`apply_cuts`).

`cross_validate` repeats random splits of the topics (a share ``fit_fraction`` to fit, the rest
to judge) and reports, on the held-out topics, κ of the calibrated mapping and of the
uncalibrated default threshold (`reljudge.metrics.kappa.auto_threshold`), with the 2.5-97.5 %
range over the splits and of their paired difference. Pure computation: no files, no LLM.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from reljudge.metrics.agreement import binarize, cohen_kappa

__all__ = ["Split", "apply_cuts", "best_threshold", "cross_validate", "fit_cuts"]

Scores = Mapping[str, Mapping[str, float]]


def best_threshold(scores: np.ndarray, relevant: np.ndarray) -> tuple[float, float]:
    """(threshold, κ): the cut ``score >= threshold`` that maximises Cohen's κ with the 0/1
    ``relevant`` labels, among the distinct scores (the lowest on a tie)."""
    s = np.asarray(scores, dtype=float)
    y = np.asarray(relevant, dtype=int)
    n = s.size
    if n == 0:
        return float("nan"), float("nan")
    order = np.argsort(-s, kind="stable")
    s_sorted, y_sorted = s[order], y[order]
    tp_cum = np.cumsum(y_sorted)
    # the last index of each run of equal scores: predicting >= that score positive
    last = np.r_[np.nonzero(np.diff(s_sorted))[0], n - 1]
    tp = tp_cum[last].astype(float)
    predicted = (last + 1).astype(float)
    fp = predicted - tp
    pos = float(y.sum())
    fn = pos - tp
    tn = n - pos - fp
    denom = (tp + fp) * (fp + tn) + (tp + fn) * (fn + tn)
    with np.errstate(invalid="ignore", divide="ignore"):
        kappa = np.where(denom > 0, 2 * (tp * tn - fn * fp) / denom, 0.0)
    best = float(kappa.max())
    candidates = np.nonzero(kappa >= best - 1e-12)[0]
    pick = candidates[-1]  # the lowest threshold among the best (the sort is descending)
    return float(s_sorted[last[pick]]), best


def fit_cuts(scores: np.ndarray, grades: np.ndarray) -> tuple[float, list[float]]:
    """(lowest grade, cut-points): one non-decreasing threshold per higher human grade."""
    g = np.asarray(grades, dtype=float)
    levels = sorted(set(g.tolist()))
    cuts: list[float] = []
    for level in levels[1:]:
        thr, _ = best_threshold(scores, (g >= level).astype(int))
        cuts.append(max(thr, cuts[-1]) if cuts else thr)
    return levels[0], cuts


def apply_cuts(scores: np.ndarray, low: float, cuts: Sequence[float]) -> np.ndarray:
    s = np.asarray(scores, dtype=float)
    return low + sum(((s >= c).astype(float) for c in cuts), np.zeros_like(s))


@dataclass
class Split:
    """One random split: its fitting topics, the fitted mapping, and κ on the held-out topics."""

    fit_topics: list[str]
    threshold: float
    cuts: list[float]
    low: float
    calibrated: float  # binary κ, calibrated threshold
    default: float  # binary κ, default threshold
    graded_calibrated: float | None = None
    graded_default: float | None = None


@dataclass
class Calibration:
    splits: list[Split]
    default_threshold: str
    pairs: int
    topics: int
    summary: dict[str, Any] = field(default_factory=dict)


def _pairs(qrels: Scores, scores: Scores, topics: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    h: list[float] = []
    j: list[float] = []
    for qid in topics:
        judged = scores.get(qid, {})
        for docid, grade in qrels.get(qid, {}).items():
            if docid in judged:
                h.append(float(grade))
                j.append(float(judged[docid]))
    return np.array(h), np.array(j)


def _interval(values: Sequence[float]) -> dict[str, float]:
    v = np.array([x for x in values if x is not None and not np.isnan(x)], dtype=float)
    if v.size == 0:
        return {"mean": float("nan"), "low": float("nan"), "high": float("nan")}
    return {
        "mean": float(v.mean()),
        "low": float(np.percentile(v, 2.5)),
        "high": float(np.percentile(v, 97.5)),
    }


def cross_validate(
    qrels: Scores,
    scores: Scores,
    *,
    human_threshold: float = 2,
    fit_fraction: float = 0.2,
    repeats: int = 50,
    seed: int = 0,
) -> Calibration:
    """Calibrate on ``fit_fraction`` of the topics and judge on the rest, ``repeats`` times (see
    the module docstring). Topics are those both the human labels and the judge score."""
    from reljudge.metrics.kappa import auto_threshold

    if not 0 < fit_fraction < 1:
        raise ValueError(f"the fitting share of topics must be between 0 and 1, got {fit_fraction}")
    topics = sorted(q for q in qrels if any(d in scores.get(q, {}) for d in qrels[q]))
    if len(topics) < 2:
        raise ValueError("calibration needs at least two topics labelled by both the humans and the judge")
    n_fit = min(len(topics) - 1, max(1, round(fit_fraction * len(topics))))
    h_all, j_all = _pairs(qrels, scores, topics)
    default_thr, default_text = auto_threshold(j_all, h_all, human_threshold)
    lo, hi = float(h_all.min()), float(h_all.max())
    graded = np.unique(j_all).size > 2  # a binary judge has no grades to map
    on_scale = graded and all(float(v).is_integer() and lo <= v <= hi for v in np.unique(j_all).tolist())
    graded_labels = sorted(
        set(np.unique(h_all).tolist()) | (set(np.unique(j_all).tolist()) if on_scale else set())
    )
    rng = np.random.default_rng(seed)
    splits: list[Split] = []
    for _ in range(repeats):
        chosen = sorted(rng.choice(len(topics), size=n_fit, replace=False).tolist())
        fit = [topics[i] for i in chosen]
        rest = [t for i, t in enumerate(topics) if i not in set(chosen)]
        h_fit, j_fit = _pairs(qrels, scores, fit)
        h_test, j_test = _pairs(qrels, scores, rest)
        thr, _ = best_threshold(j_fit, binarize(h_fit, human_threshold))
        low, cuts = fit_cuts(j_fit, h_fit)
        hb = binarize(h_test, human_threshold)
        split = Split(
            fit,
            thr,
            cuts,
            low,
            cohen_kappa(hb, binarize(j_test, thr), labels=[0, 1]),
            cohen_kappa(hb, binarize(j_test, default_thr), labels=[0, 1]),
        )
        if graded:
            split.graded_calibrated = cohen_kappa(h_test, apply_cuts(j_test, low, cuts), labels=graded_labels)
        if on_scale:
            split.graded_default = cohen_kappa(h_test, j_test, labels=graded_labels)
        splits.append(split)
    result = Calibration(splits, default_text, int(h_all.size), len(topics))
    result.summary = {
        "fit_topics": n_fit,
        "held_out_topics": len(topics) - n_fit,
        "repeats": repeats,
        "default_threshold": default_text,
        "binary_calibrated": _interval([s.calibrated for s in splits]),
        "binary_default": _interval([s.default for s in splits]),
        "binary_gain": _interval([s.calibrated - s.default for s in splits]),
        "threshold": _interval([s.threshold for s in splits]),
        "graded_calibrated": _interval([s.graded_calibrated for s in splits]) if graded else None,  # type: ignore[misc]
        "graded_default": _interval([s.graded_default for s in splits]) if on_scale else None,  # type: ignore[misc]
    }
    return result
