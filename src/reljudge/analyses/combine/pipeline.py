"""``judge combine``: an ensemble of judgment sets (prompts, models, runs) -> a consensus set.

Each source (a run directory, a judgments file, a qrels-like file, a glob) is one member
(`reljudge.analyses.combine.files.load_members`): its primary score set, or its
``<method>-expected`` set with ``scores="expected"``. Labels outside a given ``scale`` are invalid
(dropped and counted: the published releases keep some residue). The consensus is computed by
`reljudge.aggregation.consensus.combine_scores` (shared with the judges' repeated samples, which is
why this step is not a pure module of the folder); this module adds Krippendorff's α between the
members, the provenance of every member (path, set, SHA-256 of the file) and, with human labels,
Cohen's κ of every member and of the consensus (`reljudge.analyses.combine.members`), and the
text the command prints.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field
from typing import Any

from reljudge.aggregation.consensus import Consensus, combine_scores
from reljudge.analyses.combine.members import Member, alpha_between, kappa_against
from reljudge.errors import InputError

__all__ = ["CombineReport", "combine", "summary"]


@dataclass
class CombineReport:
    consensus: Consensus
    members: list[Member]
    alpha: dict[str, float]
    #: with human labels: name -> {"binary": κ, "graded": κ or None}; the consensus is "consensus"
    kappa: dict[str, dict[str, Any]] = field(default_factory=dict)
    human_threshold: float | None = None

    def median_member(self, key: str = "binary") -> float:
        values = [k[key] for n, k in self.kappa.items() if n != "consensus" and k.get(key) is not None]
        return statistics.median(values) if values else float("nan")

    def as_dict(self) -> dict[str, Any]:
        c = self.consensus
        return {
            "rule": c.rule,
            "items": len(c.agreement),
            "mean_agreement": c.mean_agreement,
            "unanimous": c.unanimous,
            "alpha": self.alpha,
            "members": [
                {
                    "name": m.name,
                    "source": m.source,
                    "set": m.set_name,
                    "sha256": m.sha256,
                    "labels": m.n_labels,
                    "invalid": m.invalid,
                }
                for m in self.members
            ],
            "kappa": self.kappa,
            "human_threshold": self.human_threshold,
            "median_member_kappa": {k: self.median_member(k) for k in ("binary", "graded")}
            if self.kappa
            else {},
        }


def combine(
    members: list[Member],
    rule: str = "majority",
    human: Any = None,
    scale: tuple[float, float] | None = None,
) -> CombineReport:
    """The consensus of ``members`` by ``rule``, α between them, and κ against ``human``
    (`reljudge.analyses.inputs.HumanLabels`) when given; float consensus scores (``mean``)
    are cut on the members' ``scale`` (`reljudge.metrics.kappa.scale_threshold`)."""
    try:
        consensus = combine_scores({m.name: m.scores for m in members}, rule)
    except ValueError as err:
        raise InputError(str(err)) from None
    report = CombineReport(consensus, members, alpha_between(consensus.values.values()))
    if human is not None:
        report.human_threshold = human.human_threshold
        for m in members:
            report.kappa[m.name] = kappa_against(m.scores, human)
        report.kappa["consensus"] = kappa_against(consensus.scores, human, scale)
    return report


def summary(report: CombineReport) -> str:
    """The text ``judge combine`` prints."""
    c = report.consensus
    lines = [
        f"consensus ({c.rule}, ties to the lowest label) of {len(report.members)} members over "
        f"{len(c.agreement)} items: mean agreement {c.mean_agreement:.3f}, unanimous {c.unanimous}",
        "Krippendorff's alpha between members: " + ", ".join(f"{k} {v:.3f}" for k, v in report.alpha.items()),
    ]
    invalid = sum(m.invalid for m in report.members)
    if invalid:
        lines.append(f"{invalid} labels outside the scale were left out (invalid)")
    if report.kappa:
        lines.append(
            f"Cohen's kappa against the human labels (relevant: grade >= {report.human_threshold:g})"
        )
        lines.append("member\tlabels\tkappa binary\tkappa graded")

        def fmt(v: Any) -> str:
            return "-" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:.3f}"

        for m in report.members:
            k = report.kappa[m.name]
            lines.append(f"{m.name}\t{m.n_labels}\t{fmt(k['binary'])}\t{fmt(k['graded'])}")
        k = report.kappa["consensus"]
        lines.append(
            f"median member\t\t{fmt(report.median_member('binary'))}\t{fmt(report.median_member('graded'))}"
        )
        lines.append(
            f"consensus\t{sum(len(d) for d in c.scores.values())}\t{fmt(k['binary'])}\t{fmt(k['graded'])}"
        )
    return "\n".join(lines)
