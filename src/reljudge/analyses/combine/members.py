"""The members of an ensemble (one judgment set per source) and how they agree: Krippendorff's α
between them, Cohen's κ of each (and of their consensus) against the human labels."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["Member", "alpha_between", "kappa_against"]


@dataclass
class Member:
    name: str
    source: str
    set_name: str
    scores: dict[str, dict[str, float]]
    invalid: int = 0
    sha256: str = ""

    @property
    def n_labels(self) -> int:
        return sum(len(d) for d in self.scores.values())


def alpha_between(values: Iterable[Sequence[float | None]]) -> dict[str, float]:
    """Krippendorff's α between the members over the items, each item's values in member order
    (None where a member has none): nominal, ordinal and interval for whole-number labels, interval
    only otherwise."""
    import numpy as np

    from reljudge.metrics.agreement import krippendorff_alpha

    rows = list(values)
    if not rows:
        return {}
    data = np.array([[math.nan if v is None else v for v in row] for row in rows], dtype=float).T
    integer = bool(np.all(np.isnan(data) | (data == np.round(data))))
    levels = ("nominal", "ordinal", "interval") if integer else ("interval",)
    return {level: krippendorff_alpha(data, level=level) for level in levels}  # type: ignore[arg-type]


def kappa_against(
    scores: dict[str, dict[str, float]], human: Any, scale: tuple[float, float] | None = None
) -> dict[str, Any]:
    """Cohen's κ of ``scores`` against the human labels (`reljudge.analyses.inputs.HumanLabels`):
    the judged pairs, binary and graded (unweighted) κ, the judge's threshold; float scores are cut
    on ``scale`` (`reljudge.metrics.kappa.scale_threshold`)."""
    from reljudge.metrics.base import JudgeLabels
    from reljudge.metrics.kappa import kappa_block

    labels = JudgeLabels(
        human.qrels, scores, None, None, human.unacceptable, human.human_threshold, judge_scale=scale
    )
    block, _ = kappa_block(labels)
    return {
        "pairs": block.get("pairs", 0),
        "binary": block.get("binary"),
        "graded": block.get("graded_unweighted"),
        "judge_threshold": block.get("judge_threshold"),
    }
