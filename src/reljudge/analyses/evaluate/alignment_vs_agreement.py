"""Alignment against agreement (thesis Fig. 4.5, spec S8c): for each judgment set of one or more
``judge evaluate`` results, the macro "Agree" share (the mean of the BvU, AvU and BvA agree
fractions) against the Kendall τ-b of its system ranking with the human one: one point per set
(`summary_points`), labelled by its evaluation (``judge evaluate --label``, e.g. the dataset).
`reljudge.analyses.evaluate.files` reads and writes the points,
`reljudge.analyses.evaluate.plots.plot_alignment_vs_agreement` draws them (``judge plot-summary``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

__all__ = ["COLUMNS", "summary_points"]

COLUMNS: tuple[str, ...] = ("label", "set", "macro_agree", "kendall_tau_b")


def summary_points(evaluation: Mapping[str, Any], label: str) -> list[dict[str, Any]]:
    """One row per set of an ``evaluation.json`` content: ``label``, ``set``, ``macro_agree``,
    ``kendall_tau_b`` (NaN when the set was evaluated without runs)."""
    rows = []
    for entry in evaluation.get("sets", []):
        macro = (entry.get("alignment") or {}).get("macro") or {}
        tau = (entry.get("ranking_agreement") or {}).get("kendall_tau_b")
        agree = macro.get("agree_frac")
        rows.append(
            {
                "label": label,
                "set": entry.get("name", ""),
                "macro_agree": float(agree) if agree is not None else math.nan,
                "kendall_tau_b": float(tau) if tau is not None else math.nan,
            }
        )
    return rows
