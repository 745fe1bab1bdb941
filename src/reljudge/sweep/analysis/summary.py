"""Per-group summaries of the cell rows: mean, variance (sample, ddof=1, by default; or
population, ddof=0), standard deviation, min and max of the cell metric over the prompts of a model
(`summarize`, `nan_stats`); and the same over the values of all datasets pooled into one
distribution per (model, task, group) (`summarize_pooled`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from reljudge.sweep.analysis.conventions import METRIC


def nan_stats(values: Sequence[float], ddof: int = 1) -> dict[str, float]:
    arr = np.asarray([v for v in values if v == v], dtype=float)
    if arr.size == 0:
        return {"mean": math.nan, "var": math.nan, "std": math.nan, "min": math.nan, "max": math.nan}
    var = float(arr.var(ddof=ddof)) if arr.size > ddof else math.nan
    return {
        "mean": float(arr.mean()),
        "var": var,
        "std": math.sqrt(var) if var == var else math.nan,
        "min": float(arr.min()),
        "max": float(arr.max()),
    }


def summarize(rows: Sequence[dict[str, Any]], ddof: int = 1) -> list[dict[str, Any]]:
    """Per (dataset, task, model, group) and per (dataset, task, model) over all groups."""
    buckets: dict[tuple[str, str, str, str], list[dict[str, Any]]] = {}
    for row in rows:
        for group in (row["group"], "all"):
            buckets.setdefault((row["dataset"], row["task"], row["model"], group), []).append(row)
    out = []
    groups_order = sorted({r["group"] for r in rows})
    for (ds, task, model, group), members in sorted(
        buckets.items(), key=lambda kv: (kv[0][0], kv[0][1], kv[0][2], kv[0][3] == "all", kv[0][3])
    ):
        if group == "all" and len({m["group"] for m in members}) == 1 and len(groups_order) == 1:
            continue  # a single group: the "all" row would repeat it
        stats = nan_stats([m["value"] for m in members], ddof)
        entry: dict[str, Any] = {
            "dataset": ds,
            "task": task,
            "model": model,
            "group": group,
            "prompts": len(members),
            "metric": METRIC[task],
            **stats,
            "invalid_rate": nan_stats([m["invalid_rate"] for m in members])["mean"],
        }
        if task == "pairwise":
            entry["tie"] = nan_stats([m["tie"] for m in members])["mean"]
            entry["disagree"] = nan_stats([m["disagree"] for m in members])["mean"]
        elif task == "graded":
            entry["kappa_binary_mean"] = nan_stats([m.get("kappa_binary", math.nan) for m in members])["mean"]
        out.append(entry)
    return out


#: the columns of ``summary_pooled.csv``
POOLED_COLUMNS: tuple[str, ...] = ("model", "task", "group", "n_values", "mean", "var", "std", "min", "max")
_TASK_ORDER = {"binary": 0, "graded": 1, "pairwise": 2}


def summarize_pooled(
    rows: Sequence[dict[str, Any]], ddof: int = 1, groups: Sequence[str] = ("human", "llm")
) -> list[dict[str, Any]]:
    """One distribution per (model, task, group) over the cell values of every dataset and prompt
    of the group (e.g. 12 prompts × 2 datasets = 24 values), for the prompt ``groups`` (a single
    reference prompt such as UMBRELA is no distribution and is left out). ``n_values`` counts the
    finite values."""
    buckets: dict[tuple[str, str, str], list[float]] = {}
    for row in rows:
        if row["group"] in groups:
            buckets.setdefault((row["model"], row["task"], row["group"]), []).append(row["value"])
    out = []
    for (model, task, group), values in sorted(
        buckets.items(),
        key=lambda kv: (kv[0][0], _TASK_ORDER.get(kv[0][1], 9), kv[0][1], groups.index(kv[0][2])),
    ):
        finite = [v for v in values if v == v]
        out.append(
            {"model": model, "task": task, "group": group, "n_values": len(finite), **nan_stats(finite, ddof)}
        )
    return out
