"""Evaluation: the application layer over `reljudge.metrics` behind ``judge evaluate``.

It reads the inputs (qrels, datasets, judgment sets, runs), runs the measure registry, and
writes and prints the reports; `reljudge.metrics` only computes.

- ``judge evaluate``: `evaluate_paths` (from paths) or `evaluate` (in-memory), then `summary`
  (console tables) and `write_outputs` (``evaluation.json``, the CSVs, ``--plot`` figures);
  inputs via `load_human_labels`, `load_judgment_sets`, `load_runs`, `sets_from_judgments`;
- figures: `plot_alignment`, `plot_compatibility`, and `pyplot` / `save_figure` for any figure.

``judge fd`` is `reljudge.analyses.fd`; passage vectors are `reljudge.vectors`.

Heavy dependencies (scipy, ir_measures, matplotlib) are imported on use.
"""

from __future__ import annotations

from reljudge.analyses.inputs import (
    HumanLabels,
    JudgmentSet,
    load_human_labels,
    load_judgment_sets,
    load_runs,
    sets_from_judgments,
)
from reljudge.errors import MissingExtraError
from reljudge.evaluation.evaluate import Report, SetReport, evaluate, evaluate_paths
from reljudge.evaluation.plots import plot_alignment, plot_compatibility
from reljudge.evaluation.report import format_table, summary, table_rows, write_outputs, write_report
from reljudge.io.figures import pyplot, save_figure

__all__ = [
    "HumanLabels",
    "JudgmentSet",
    "MissingExtraError",
    "Report",
    "SetReport",
    "evaluate",
    "evaluate_paths",
    "format_table",
    "load_human_labels",
    "load_judgment_sets",
    "load_runs",
    "plot_alignment",
    "plot_compatibility",
    "pyplot",
    "save_figure",
    "sets_from_judgments",
    "summary",
    "table_rows",
    "write_outputs",
    "write_report",
]
