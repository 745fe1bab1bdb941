"""``judge answers similarity``'s outputs: its console tables, and the files it writes:
``similarity.json``, ``similarity.csv`` (one row per system or run), ``cross_grade.csv`` and, with
anchors, ``anchors.csv``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from reljudge.analyses.answers.common_scale import MEASURE


def _nan_last(value: Any) -> float:
    return -value if isinstance(value, (int, float)) and value == value else float("inf")


def format_similarity(data: dict[str, Any]) -> str:
    from reljudge.analyses.text_table import format_table

    rows = data["systems"]
    grade_cols = sorted({c for r in rows.values() for c in r if c.startswith("sim_grade_")}, reverse=True)
    table = [
        [
            name,
            r["kind"],
            r["score"],
            r[MEASURE],
            r["pairs"],
            r["missing_vectors"],
            r["no_result"],
            r["fd"],
            *(r.get(c, float("nan")) for c in grade_cols),
        ]  # fmt: skip
        for name, r in sorted(
            rows.items(), key=lambda kv: (kv[1]["kind"] != "answers", _nan_last(kv[1]["score"]))
        )
    ]
    head = f"similarity to judged passages (encoder {data['settings']['encoder']}; score: {data['settings']['score']})"
    columns = ["system", "kind", "score", MEASURE, "pairs", "no vector", "no result", "FD", *grade_cols]
    lines = [head, format_table(columns, table)]
    ag = data["common_scale"]["agreement"]
    if ag:
        lines.append(
            f"runs: Kendall tau-b(score, {MEASURE}) = {ag['tau_b']:.3f} (p = {ag['p']:.2g}, {ag['systems']} runs)"
        )
    cross = format_table(
        ["target vs grade", "n", "mean", "median"],
        [[r["grade"], r["n"], r["mean"], r["median"]] for r in data["cross_grade"]],
    )
    lines.append(cross)
    if data.get("anchors"):
        lines.append(format_anchors(data["anchors"]))
    return "\n".join(lines)


def format_anchors(section: Mapping[str, Any]) -> str:
    st = section["stability"]
    ranked = sorted(section["mean"].items(), key=lambda kv: -kv[1] if kv[1] == kv[1] else 9)
    head = "no-judgment anchors (mean over anchor runs of mean_q cos(answer, top-1 of the anchor)):"
    body = "\n".join(f"  {g}: {v:.3f}" for g, v in ranked)
    stab = (f"ordering stability over {st['pairs']} anchor pairs ({st['anchors']} anchors): "
            f"tau-b mean {st['mean_tau_b']:.3f}, min {st['min_tau_b']:.3f}, identical order "
            f"{st['identical_order_share']:.1%}")  # fmt: skip
    return "\n".join([head, body, stab])


def anchor_rows(section: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One CSV row per generator: its mean over anchors, then one column per anchor."""
    return [{"system": g, "mean": section["mean"][g], **by_m} for g, by_m in section["scores"].items()]


def write_similarity(data: dict[str, Any], out_dir: str | Path) -> list[Path]:
    from reljudge.io.atomic import write_text_atomic
    from reljudge.io.tables import csv_text, json_ready

    out_dir = Path(out_dir)
    paths = [out_dir / "similarity.json", out_dir / "similarity.csv", out_dir / "cross_grade.csv"]
    write_text_atomic(paths[0], json.dumps(json_ready(data), indent=1) + "\n")
    write_text_atomic(paths[1], csv_text([{"system": n, **r} for n, r in data["systems"].items()]))
    write_text_atomic(paths[2], csv_text(data["cross_grade"]))
    if data.get("anchors"):
        paths.append(out_dir / "anchors.csv")
        write_text_atomic(paths[-1], csv_text(anchor_rows(data["anchors"])))
    return paths
