"""Cross-model prompt robustness (spec S9c): for each (dataset, task), Kendall τ-b and Spearman ρ
between the per-prompt metric vectors of every two models (on the prompts both have a finite value
for), and the prompts in the top third of every model (`model_robustness`)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from itertools import combinations
from typing import Any


def _top_third(values: dict[str, float]) -> set[str]:
    """The prompts whose value is among the best ceil(n/3) of the model (ties at the cut kept)."""
    ordered = sorted(values.values(), reverse=True)
    if not ordered:
        return set()
    cut = ordered[math.ceil(len(ordered) / 3) - 1]
    return {p for p, v in values.items() if v >= cut}


def model_robustness(
    rows: Sequence[dict[str, Any]], groups: Sequence[str] | None = ("human", "llm")
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """``(pairs, top)``: one row per (dataset, task, model pair) with ``prompts``, ``kendall_tau``
    and ``spearman_rho``; one row per (dataset, task) with the prompts in the top third of every
    model. ``groups`` limits the prompts to those groups (None: all)."""
    from scipy import stats

    by: dict[tuple[str, str], dict[str, dict[str, float]]] = {}
    for row in rows:
        value = row.get("value")
        if groups is not None and row["group"] not in groups:
            continue
        if value is None or value != value:
            continue
        by.setdefault((row["dataset"], row["task"]), {}).setdefault(row["model"], {})[row["prompt"]] = value
    pairs: list[dict[str, Any]] = []
    top: list[dict[str, Any]] = []
    for (ds, task), models in sorted(by.items()):
        for a, b in combinations(sorted(models), 2):
            common = sorted(set(models[a]) & set(models[b]), key=lambda p: (len(p), p))
            x = [models[a][p] for p in common]
            y = [models[b][p] for p in common]
            tau = rho = math.nan
            if len(common) >= 3 and len(set(x)) > 1 and len(set(y)) > 1:
                tau = float(stats.kendalltau(x, y).statistic)
                rho = float(stats.spearmanr(x, y).statistic)
            pairs.append(
                {
                    "dataset": ds,
                    "task": task,
                    "model_a": a,
                    "model_b": b,
                    "prompts": len(common),
                    "kendall_tau": tau,
                    "spearman_rho": rho,
                }
            )
        thirds = [_top_third(v) for v in models.values()]
        shared = set.intersection(*thirds) if thirds else set()
        top.append(
            {
                "dataset": ds,
                "task": task,
                "models": len(models),
                "top_third_for_every_model": " ".join(sorted(shared, key=lambda p: (len(p), p))),
            }
        )
    return pairs, top
