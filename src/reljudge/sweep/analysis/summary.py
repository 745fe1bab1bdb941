"""Per-group summaries of the cell rows: mean, sample variance (ddof=1), standard deviation,
min and max of the cell metric over the prompts of a model (`summarize`, `nan_stats`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from reljudge.sweep.analysis.conventions import METRIC


def nan_stats(values: Sequence[float]) -> dict[str, float]:
    arr = np.asarray([v for v in values if v == v], dtype=float)
    if arr.size == 0:
        return {"mean": math.nan, "var": math.nan, "std": math.nan, "min": math.nan, "max": math.nan}
    var = float(arr.var(ddof=1)) if arr.size > 1 else math.nan
    return {
        "mean": float(arr.mean()),
        "var": var,
        "std": math.sqrt(var) if var == var else math.nan,
        "min": float(arr.min()),
        "max": float(arr.max()),
    }


def summarize(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
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
        stats = nan_stats([m["value"] for m in members])
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
