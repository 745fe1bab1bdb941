"""The conventions of a sweep analysis (`Conventions`): the binarisation threshold, the κ weights,
the α level per task, the human category of an unacceptable document, and the ranking measure and
agreement; `METRIC` names each task's cell metric.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from reljudge.metrics.registry import ranking_measure

Qrels = Mapping[str, Mapping[str, float]]
METRIC: dict[str, str] = {"binary": "kappa", "graded": "kappa", "pairwise": "agree"}


@dataclass(frozen=True)
class Conventions:
    threshold: float = 2
    kappa_weights: str | None = None
    alpha_level: Mapping[str, str] = field(
        default_factory=lambda: {"binary": "nominal", "graded": "ordinal", "pairwise": "nominal"}
    )
    unacceptable: float = 0
    ranking_measure: str = "nDCG@10"
    ranking_agreement: str = "kendall_tau_b"  # a ranking measure of `reljudge.metrics.registry`

    def as_dict(self) -> dict[str, Any]:
        return {
            "binary_threshold": f"human grade >= {self.threshold:g} is relevant",
            "kappa": "Cohen's kappa, "
            + (f"{self.kappa_weights} weights" if self.kappa_weights else "unweighted"),
            "graded_kappa": "over grades 0-3; kappa_binary: both sides binarised at the threshold",
            "pairwise": "agree/tie/disagree against Best/Acceptable/Unacceptable human categories per topic "
            f"(Unacceptable: grade <= {self.unacceptable:g}), pooled over pairs",
            "alpha_level": dict(self.alpha_level),
            "variance": "sample variance over prompts (ddof=1)",
            "ranking": f"{ranking_measure(self.ranking_agreement).label} of system rankings by {self.ranking_measure}",
        }
