"""Metrics: how far to trust LLM relevance labels. No LLM is called here.

Inputs are plain mappings ``{qid: {docid: score}}`` (human qrels, judgment sets, runs);
system-level values are ``{system: value}`` or ``{system: {qid: value}}``.

- label level: `human_alignment`, `preference_alignment` (Best/Acceptable/Unacceptable
  pairs), `cohen_kappa`, `krippendorff_alpha`, `confusion_matrix`, `paired_labels`, `binarize`;
- system level: `compatibility` / `Compatibility` (Clarke's RBO-based compatibility),
  `system_measures` / `per_topic_measure` / `mean_measure` (ir_measures), `ranking_agreement`,
  `bootstrap_ranking_agreement`, `tau_ap`;
- Fréchet distance: `frechet_distance`, `frechet_distance_stats`, `gaussian_stats`, `fd_at_k`,
  `fd_runs`, `relevant_set`, `retrieved_set`, `PrecomputedEmbeddings`,
  `SentenceTransformerEncoder`, `TextEmbeddings` (encoded passage texts, cached),
  `resolve_model` (a local model directory, an installed weights package or a hub id);
- orchestration for ``judge evaluate``: `evaluate`, `load_judgment_sets`, `load_runs`.

Heavy dependencies (scipy, ir_measures, matplotlib, sentence-transformers) are imported on use.
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
from reljudge.metrics.compatibility import (
    Compatibility,
    CompatibilityResult,
    compatibility,
    ideal_ranking,
    rbo_clarke,
    self_rbo,
    topic_compatibility,
)
from reljudge.metrics.encoders import (
    MissingExtraError,
    PrecomputedEmbeddings,
    SentenceTransformerEncoder,
    TextEmbeddings,
    resolve_model,
)
from reljudge.metrics.evaluate import JudgmentSet, Report, evaluate, load_judgment_sets, load_runs
from reljudge.metrics.fd import FDReport, FDResult, fd_at_k, fd_runs, relevant_set, retrieved_set
from reljudge.metrics.frechet import frechet_distance, frechet_distance_stats, gaussian_stats
from reljudge.metrics.measures import mean_measure, per_topic_measure, system_measures
from reljudge.metrics.ranking import (
    Interval,
    bootstrap_ranking_agreement,
    kendall_tau_b_batch,
    ranking_agreement,
    tau_ap,
)

__all__ = [
    "AlignmentResult",
    "Compatibility",
    "CompatibilityResult",
    "Counts",
    "FDReport",
    "FDResult",
    "Interval",
    "JudgmentSet",
    "MissingExtraError",
    "PrecomputedEmbeddings",
    "Report",
    "SentenceTransformerEncoder",
    "TextEmbeddings",
    "binarize",
    "bootstrap_ranking_agreement",
    "cohen_kappa",
    "compatibility",
    "confusion_matrix",
    "evaluate",
    "fd_at_k",
    "fd_runs",
    "frechet_distance",
    "frechet_distance_stats",
    "gaussian_stats",
    "human_alignment",
    "ideal_ranking",
    "kendall_tau_b_batch",
    "krippendorff_alpha",
    "labels_matrix",
    "load_judgment_sets",
    "load_runs",
    "mean_measure",
    "paired_labels",
    "per_topic_measure",
    "system_measures",
    "preference_alignment",
    "ranking_agreement",
    "rbo_clarke",
    "relevant_set",
    "resolve_model",
    "retrieved_set",
    "self_rbo",
    "tau_ap",
    "topic_compatibility",
]
