"""The κ/α measure of a pointwise judgment set: chance-corrected agreement with the human grades.

On the (qid, docid) pairs both label (`paired_labels`; a document the judge does not list
takes the set's ``missing`` score, or is skipped):

- **binary**: Cohen's κ and Krippendorff's α (nominal) with both sides binarised — human
  ``grade >= human_threshold``; judge ``>= judge_threshold``, or when that is None
  (`auto_threshold`) 1 for 0/1 labels, the human threshold for labels on the human integer
  scale, otherwise any positive score;
- **graded** (when the judge's labels are more than two values on the human integer scale):
  Cohen's κ unweighted, linear and quadratic over the union of both label sets, and α ordinal
  and interval. When the caller says the labels are grades on the human scale (``grade_scale``),
  a label outside it is read as the nearest end of the scale (a 5 among 0-3 grades as 3), so a
  few off-scale labels never remove the graded values; ``graded=False`` says they are not grades;
- the confusion matrices of both.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from reljudge.metrics.agreement import (
    binarize,
    cohen_kappa,
    confusion_matrix,
    krippendorff_alpha,
    paired_labels,
)
from reljudge.metrics.base import JudgeLabels, JudgmentMeasure, Outcome


def auto_threshold(
    values: np.ndarray,
    human_grades: np.ndarray,
    human_threshold: float,
    scale: tuple[float, float] | None = None,
) -> tuple[float, str]:
    """The judge-side binarisation threshold: 1 for 0/1 labels, the human threshold for labels
    on the human integer scale; for other (float) scores on the judge's own ``scale`` [lo, hi]
    (`scale_threshold`); otherwise any positive score (``> 0``)."""
    uniq = set(np.unique(values).tolist())
    if scale is not None and not all(float(v).is_integer() for v in uniq):
        return scale_threshold(scale, human_grades, human_threshold)
    if uniq <= {0.0, 1.0}:
        return 1.0, ">= 1"
    lo, hi = float(human_grades.min()), float(human_grades.max())
    if all(float(v).is_integer() and lo <= v <= hi for v in uniq):
        return human_threshold, f">= {human_threshold:g}"
    return float(np.nextafter(0.0, 1.0)), "> 0"


def scale_threshold(
    scale: tuple[float, float], human_grades: np.ndarray, human_threshold: float
) -> tuple[float, str]:
    """The cut of float scores on the judge's scale [lo, hi] (expected grades): on the human
    integer scale, half a grade below the human threshold (scores that round to a relevant
    grade); on any other scale, its middle (0.5 on 0-1)."""
    lo, hi = scale
    shown = f"(judge scale {lo:g}-{hi:g})"
    if human_grades.size and (lo, hi) == (float(human_grades.min()), float(human_grades.max())):
        cut = human_threshold - 0.5
    else:
        cut = (lo + hi) / 2
    return cut, f">= {cut:g} {shown}"


def binary_kappa(
    human: np.ndarray, judge: np.ndarray, human_threshold: float, judge_threshold: float
) -> float:
    """Cohen's κ with both sides binarised: human ``>= human_threshold``, judge ``>= judge_threshold``."""
    return cohen_kappa(binarize(human, human_threshold), binarize(judge, judge_threshold), labels=[0, 1])


def kappa_block(labels: JudgeLabels) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(kappa, confusion)``: the κ/α values with their thresholds, and the confusion matrices
    (see the module docstring); ``({"pairs": 0}, {})`` when no pair is labelled by both."""
    _, human, judge = paired_labels(labels.qrels, labels.scores, missing=labels.missing)
    if human.size == 0:
        return {"pairs": 0}, {}
    human_threshold = labels.human_threshold
    if labels.judge_threshold is None:
        thr, thr_text = auto_threshold(judge, human, human_threshold, labels.judge_scale)
    else:
        thr = labels.judge_threshold
        thr_text = labels.judge_threshold_text or f">= {labels.judge_threshold:g}"
    hb, jb = binarize(human, human_threshold), binarize(judge, thr)
    block: dict[str, Any] = {
        "pairs": int(human.size),
        "human_threshold": f">= {human_threshold:g}",
        "judge_threshold": thr_text,
        "binary": binary_kappa(human, judge, human_threshold, thr),
        "binary_alpha_nominal": krippendorff_alpha(np.vstack([hb, jb]).astype(float), level="nominal"),
    }
    cats, m = confusion_matrix(hb, jb, labels=[0, 1])
    confusion: dict[str, Any] = {"binary": {"labels": [int(c) for c in cats], "matrix": m.tolist()}}
    if labels.grade_scale is not None:  # grades: an off-scale label read as the nearest end
        judge = np.clip(judge, *labels.grade_scale)
        on_scale = labels.graded is not False
    else:
        lo, hi = float(human.min()), float(human.max())
        on_scale = labels.graded is not False and all(
            float(v).is_integer() and lo <= v <= hi for v in np.unique(judge).tolist()
        )
    if on_scale and np.unique(judge).size > 2:
        grades = sorted(set(np.unique(human).tolist()) | set(np.unique(judge).tolist()))
        for w in (None, "linear", "quadratic"):
            block[f"graded_{w or 'unweighted'}"] = cohen_kappa(human, judge, weights=w, labels=grades)
        block["graded_alpha_ordinal"] = krippendorff_alpha(np.vstack([human, judge]), level="ordinal")
        block["graded_alpha_interval"] = krippendorff_alpha(np.vstack([human, judge]), level="interval")
        cats, m = confusion_matrix(human, judge, labels=grades)
        confusion["graded"] = {"labels": [float(c) for c in cats], "matrix": m.tolist()}
    return block, confusion


def _kappa(labels: JudgeLabels) -> Outcome:
    block, confusion = kappa_block(labels)
    return Outcome(block, {"kappa": block, "confusion": confusion}, block)


KAPPA = JudgmentMeasure(
    name="kappa",
    description="Cohen's kappa and Krippendorff's alpha against the human grades, binary and graded",
    applies_to=frozenset({"pointwise"}),
    columns=(
        "pairs",
        "human_threshold",
        "judge_threshold",
        "binary",
        "binary_alpha_nominal",
        "graded_unweighted",
        "graded_linear",
        "graded_quadratic",
        "graded_alpha_ordinal",
        "graded_alpha_interval",
    ),
    empty={"kappa": {}, "confusion": {}},
    compute=_kappa,
)
