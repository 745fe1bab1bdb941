"""Metrics: how far to trust LLM relevance labels. Pure computation on in-memory data: nothing
here reads or writes a file or calls a model (the analyses in `reljudge.analyses` do that).

Inputs are plain mappings ``{qid: {docid: score}}`` (human qrels, judgment sets, runs);
system-level values are ``{system: value}`` or ``{system: {qid: value}}``.

- label level: `human_alignment`, `preference_alignment` (Best/Acceptable/Unacceptable
  pairs), `cohen_kappa`, `krippendorff_alpha`, `confusion_matrix`, `paired_labels`, `binarize`,
  `kappa_block`;
- system level: `compatibility` / `Compatibility` (Clarke's RBO-based compatibility),
  `system_measures` / `per_topic_measure` / `mean_measure` (ir_measures), `ranking_agreement`,
  `bootstrap_ranking_agreement`, `tau_ap`, `tau_ap_b`, `rbo_ties`;
- the measure registry (`reljudge.metrics.registry`): `JudgmentMeasure` / `RankingMeasure`
  objects, `MEASURES`, `judgment_measures`, `ranking_measures`, `ranking_measure`.

The Fréchet distance is the FD analysis's (`reljudge.analyses.fd`), the similarity of answers the
answers analysis's (`reljudge.analyses.answers`), passage vectors `reljudge.vectors`'.

Heavy dependencies (scipy, ir_measures) are imported on use.
"""

from __future__ import annotations

from reljudge.metrics.agreement import (
    binarize,
    cohen_kappa,
    confusion_matrix,
    krippendorff_alpha,
    labels_matrix,
    paired_labels,
)
from reljudge.metrics.alignment import AlignmentResult, Counts, human_alignment, preference_alignment
from reljudge.metrics.base import JudgeLabels, JudgmentMeasure, Outcome, RankingMeasure
from reljudge.metrics.compatibility import (
    Compatibility,
    CompatibilityResult,
    compatibility,
    ideal_ranking,
    rbo_clarke,
    self_rbo,
    topic_compatibility,
)
from reljudge.metrics.kappa import kappa_block
from reljudge.metrics.measures import mean_measure, per_topic_measure, system_measures
from reljudge.metrics.ranking import (
    Interval,
    bootstrap_ranking_agreement,
    kendall_tau_b_batch,
    ranking_agreement,
    rbo_ties,
    tau_ap,
    tau_ap_b,
)
from reljudge.metrics.registry import MEASURES, judgment_measures, ranking_measure, ranking_measures

__all__ = [
    "MEASURES",
    "AlignmentResult",
    "Compatibility",
    "CompatibilityResult",
    "Counts",
    "Interval",
    "JudgeLabels",
    "JudgmentMeasure",
    "Outcome",
    "RankingMeasure",
    "binarize",
    "bootstrap_ranking_agreement",
    "cohen_kappa",
    "compatibility",
    "confusion_matrix",
    "human_alignment",
    "ideal_ranking",
    "judgment_measures",
    "kappa_block",
    "kendall_tau_b_batch",
    "krippendorff_alpha",
    "labels_matrix",
    "mean_measure",
    "paired_labels",
    "per_topic_measure",
    "preference_alignment",
    "ranking_agreement",
    "ranking_measure",
    "ranking_measures",
    "rbo_clarke",
    "rbo_ties",
    "self_rbo",
    "system_measures",
    "tau_ap",
    "tau_ap_b",
    "topic_compatibility",
]
