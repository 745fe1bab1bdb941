"""Prompt-sensitivity analysis of sweep cells: agreement with humans, spread across prompts,
agreement between prompts, and stability of the system ranking.

Conventions (all recorded in `SweepAnalysis.conventions` and the report):

- **binary** cells: Cohen's κ (unweighted) between the judge's 0/1 labels and the human grades
  binarised at ``threshold`` (grade >= threshold is relevant; TREC DL: 2, so grades 2-3);
- **graded** cells: Cohen's κ over the four grades 0-3 (unweighted unless ``kappa_weights``),
  and ``kappa_binary`` with both sides binarised at ``threshold``;
- **pairwise** cells: the shares of pairs where the judge agrees with the human categories
  (Best / Acceptable / Unacceptable per topic), ties, or disagrees, pooled over all pairs of
  the cell, and per comparison (BvA, BvU, AvU);
- labels outside the task's scale and failed calls are *invalid* (``invalid_rate``), never labels;
- per group (e.g. human- vs LLM-written prompts): mean, sample variance (ddof=1; population with
  ``variance_ddof=0``), standard deviation, min and max of the cell metric over the prompts of a
  model; with ``pool_datasets`` also over the values of all datasets at once (`summarize_pooled`);
- invalid labels are left out (``invalid="drop"``) or kept as a category of their own that agrees
  with nothing (``invalid="category"``);
- inter-prompt agreement: Krippendorff's α over all prompts of a (dataset, model, task), and
  the matrix of α between every two prompts (levels per task: binary nominal, graded ordinal,
  pairwise nominal over agree/tie/disagree), each on the items both prompts labelled;
- cross-model prompt robustness: Kendall τ-b and Spearman ρ between the per-prompt metrics of
  every two models of a (dataset, task), and the prompts in the top third for every model;
- ranking stability (when runs are given): systems scored by ``ranking_measure`` under each
  prompt's labels (unlabelled documents count as non-relevant) and under the human qrels;
  Kendall τ-b of each prompt's ranking to the human one, and between prompts.

The measures come from `reljudge.metrics`: the pairwise shares are the ``alignment`` measure's
counts, binary κ is the ``kappa`` measure's, and the ranking agreement is the registry's
ranking measure named by ``Conventions.ranking_agreement`` (default ``kendall_tau_b``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from reljudge.sweep.analysis.alpha import AlphaResult, inter_prompt_alpha
from reljudge.sweep.analysis.cells import cell_rows, pairwise_outcomes
from reljudge.sweep.analysis.conventions import METRIC, Conventions, Qrels
from reljudge.sweep.analysis.robustness import model_robustness
from reljudge.sweep.analysis.stability import (
    RankingResult,
    evaluation_depth,
    judged_share,
    prepare_runs,
    ranking_stability,
    system_scores,
)
from reljudge.sweep.analysis.summary import summarize, summarize_pooled
from reljudge.sweep.labels import CellLabels

__all__ = [
    "METRIC",
    "AlphaResult",
    "Conventions",
    "Qrels",
    "RankingResult",
    "SweepAnalysis",
    "analyze",
    "cell_rows",
    "evaluation_depth",
    "inter_prompt_alpha",
    "judged_share",
    "model_robustness",
    "pairwise_outcomes",
    "prepare_runs",
    "ranking_stability",
    "summarize",
    "summarize_pooled",
    "system_scores",
]


@dataclass
class SweepAnalysis:
    rows: list[dict[str, Any]]
    summary: list[dict[str, Any]]
    alphas: list[AlphaResult]
    rankings: list[RankingResult]
    conventions: Conventions
    notes: list[str] = field(default_factory=list)
    pooled: list[dict[str, Any]] = field(default_factory=list)  # with `Conventions.pool_datasets`
    #: cross-model prompt robustness (`model_robustness`): τ/ρ per model pair, top-third prompts
    robustness: list[dict[str, Any]] = field(default_factory=list)
    top_prompts: list[dict[str, Any]] = field(default_factory=list)
    #: lexical diversity of the prompt texts (`prompt_text.prompt_diversity`), when they are known
    diversity: list[dict[str, Any]] = field(default_factory=list)
    diversity_summary: list[dict[str, Any]] = field(default_factory=list)


def analyze(
    cells: Sequence[CellLabels],
    qrels: Mapping[str, Qrels],
    conv: Conventions | None = None,
    *,
    runs: Mapping[str, Mapping[str, Any]] | None = None,
    alpha: bool = True,
    notes: Sequence[str] = (),
) -> SweepAnalysis:
    """Everything the report shows, from cells and the human qrels of their datasets."""
    conv = conv or Conventions()
    missing = sorted({c.dataset for c in cells} - set(qrels))
    notes = list(notes)
    if missing:
        notes.append(
            f"no human qrels for dataset(s) {', '.join(missing)}: their pointwise cells have no kappa"
        )
    rows = cell_rows(cells, qrels, conv)
    alphas = inter_prompt_alpha(cells, conv) if alpha else []
    rankings = ranking_stability(cells, qrels, runs, conv) if runs else []
    pooled = summarize_pooled(rows, conv.variance_ddof) if conv.pool_datasets else []
    robustness, top = model_robustness(rows, groups=None)
    return SweepAnalysis(
        rows, summarize(rows, conv.variance_ddof), alphas, rankings, conv, notes, pooled, robustness, top
    )
