"""The conventions of a sweep analysis (`Conventions`): the binarisation threshold, the κ weights,
the α level per task, the human category of an unacceptable document, the ranking measure and
agreement, the variance (sample or population), whether datasets are pooled into one distribution,
what becomes of invalid labels and which prompts were left out; `METRIC` names each task's cell metric.
Named sets of these (`--preset`) are in `reljudge.sweep.analysis.presets`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from reljudge.metrics.agreement import KappaWeights
from reljudge.metrics.registry import ranking_measure

Qrels = Mapping[str, Mapping[str, float]]
METRIC: dict[str, str] = {"binary": "kappa", "graded": "kappa", "pairwise": "agree"}
INVALID_POLICIES: tuple[str, ...] = ("drop", "category")
#: the label an invalid pointwise answer gets when it is kept as its own category
INVALID_CATEGORY: float = -1.0


@dataclass(frozen=True)
class Conventions:
    threshold: float = 2
    kappa_weights: KappaWeights = None
    alpha_level: Mapping[str, str] = field(
        default_factory=lambda: {"binary": "nominal", "graded": "ordinal", "pairwise": "nominal"}
    )
    unacceptable: float = 0
    ranking_measure: str = "nDCG@10"
    ranking_agreement: str = "kendall_tau_b"  # a ranking measure of `reljudge.metrics.registry`
    variance_ddof: int = 1  # 1: sample variance over prompts; 0: population variance (np.var)
    pool_datasets: bool = False  # also summarise the values of all datasets as one distribution
    invalid: str = "drop"  # drop: invalid labels are left out; category: kept, as a category of their own
    excluded_prompts: tuple[str, ...] = ()  # prompt ids left out besides the authors' (recorded only)

    def __post_init__(self) -> None:
        if self.invalid not in INVALID_POLICIES:
            raise ValueError(f"invalid labels: {self.invalid!r} (expected {' or '.join(INVALID_POLICIES)})")
        if self.variance_ddof not in (0, 1):
            raise ValueError(f"variance_ddof must be 0 or 1, not {self.variance_ddof!r}")

    def as_dict(self) -> dict[str, Any]:
        return {
            "binary_threshold": f"human grade >= {self.threshold:g} is relevant",
            "kappa": "Cohen's kappa, "
            + (f"{self.kappa_weights} weights" if self.kappa_weights else "unweighted"),
            "graded_kappa": "over grades 0-3; kappa_binary: both sides binarised at the threshold",
            "pairwise": "agree/tie/disagree against Best/Acceptable/Unacceptable human categories per topic "
            f"(Unacceptable: grade <= {self.unacceptable:g}), pooled over pairs",
            "alpha_level": dict(self.alpha_level),
            "variance": "sample variance over prompts (ddof=1)"
            if self.variance_ddof
            else "population variance over prompts (ddof=0)",
            "datasets": "pooled: one distribution per (model, task, group) over the values of all datasets"
            if self.pool_datasets
            else "summarised per dataset",
            "invalid_labels": "kept as a category of their own (they count as disagreement)"
            if self.invalid == "category"
            else "left out (counted in invalid_rate)",
            "excluded_prompts": ", ".join(self.excluded_prompts) or "none besides the authors' exclusions",
            "ranking": f"{ranking_measure(self.ranking_agreement).label} of system rankings by {self.ranking_measure}",
        }
