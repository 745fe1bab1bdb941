"""The prompt analyses of a sweep analysis as tables and report sections (spec S9):

- ``alpha.csv``: per dataset × model × task, α over all prompts, over each group's prompts, and
  the mean pairwise α within each group and across groups;
- ``robustness.csv``: Kendall τ-b and Spearman ρ between the per-prompt metrics of two models;
- ``top_prompts.csv``: the prompts in the top third for every model, per dataset × task;
- ``prompt_diversity.csv`` / ``prompt_diversity_summary.csv``: unique terms per prompt text,
  and their distribution per group × message.
"""

from __future__ import annotations

import math
from typing import Any

from reljudge.sweep.analysis import SweepAnalysis


def _f(value: Any, digits: int = 3) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "–"
    return f"{value:.{digits}f}" if isinstance(value, float) else str(value)


def alpha_rows(analysis: SweepAnalysis) -> list[dict[str, Any]]:
    out = []
    for a in analysis.alphas:
        row: dict[str, Any] = {
            "dataset": a.dataset,
            "model": a.model,
            "task": a.task,
            "level": a.level,
            "prompts": len(a.prompts),
            "alpha_all": a.overall,
        }
        row.update({f"alpha_{g}": v for g, v in sorted(a.by_group.items())})
        row.update({f"mean_pairwise_{k.replace('|', '_x_')}": v for k, v in sorted(a.pairwise_mean.items())})
        out.append(row)
    return out


def prompt_tables(analysis: SweepAnalysis) -> dict[str, list[dict[str, Any]]]:
    """File name -> rows, for the tables that have rows."""
    tables = {
        "alpha.csv": alpha_rows(analysis),
        "robustness.csv": analysis.robustness,
        "top_prompts.csv": analysis.top_prompts,
        "prompt_diversity.csv": analysis.diversity,
        "prompt_diversity_summary.csv": analysis.diversity_summary,
    }
    return {name: rows for name, rows in tables.items() if rows}


def prompt_markdown(analysis: SweepAnalysis) -> list[str]:
    """Report sections for the prompt analyses that have results."""
    parts: list[str] = []
    alphas = alpha_rows(analysis)
    if alphas and any(a.by_group for a in analysis.alphas):
        groups = sorted({g for a in analysis.alphas for g in a.by_group})
        pairs = sorted({k for a in analysis.alphas for k in a.pairwise_mean})
        parts += [
            "## Agreement between prompts within and across groups",
            "",
            "Krippendorff's α over the prompts of one group, and the mean of the pairwise α within a "
            "group and across groups ([alpha.csv](alpha.csv)).",
            "",
            "| dataset | task | model | α all | "
            + " | ".join(f"α {g}" for g in groups)
            + " | "
            + " | ".join(f"mean pairwise {k.replace('|', ' × ')}" for k in pairs)
            + " |",
            "|---|---|---|---:|" + "---:|" * (len(groups) + len(pairs)),
        ]
        for a in analysis.alphas:
            values = [_f(a.by_group.get(g)) for g in groups] + [_f(a.pairwise_mean.get(k)) for k in pairs]
            parts.append(
                f"| {a.dataset} | {a.task} | {a.model} | {_f(a.overall)} | " + " | ".join(values) + " |"
            )
        parts.append("")
    if analysis.robustness:
        top = {(t["dataset"], t["task"]): t["top_third_for_every_model"] for t in analysis.top_prompts}
        parts += [
            "## Do the models agree on which prompts work? (cross-model robustness)",
            "",
            "Kendall τ-b and Spearman ρ between two models' per-prompt metrics "
            "([robustness.csv](robustness.csv), [top_prompts.csv](top_prompts.csv)).",
            "",
            "| dataset | task | models | prompts | τ | ρ |",
            "|---|---|---|---:|---:|---:|",
        ]
        for r in analysis.robustness:
            parts.append(
                f"| {r['dataset']} | {r['task']} | {r['model_a']} – {r['model_b']} | {r['prompts']} | "
                f"{_f(r['kendall_tau'])} | {_f(r['spearman_rho'])} |"
            )
        parts += ["", "Prompts in the top third for every model:", ""]
        parts += [f"- {ds} {task}: {ids or 'none'}" for (ds, task), ids in sorted(top.items())]
        parts.append("")
    if analysis.diversity_summary:
        parts += [
            "## Lexical diversity of the prompts",
            "",
            "Unique terms per prompt text (placeholders removed, lowercased, `[a-z0-9']+` tokens), tasks "
            "pooled; vocabulary: unique terms of the group's texts together "
            "([prompt_diversity.csv](prompt_diversity.csv)).",
            "",
            "| group | message | texts | mean | median | q1 | q3 | vocabulary |",
            "|---|---|---:|---:|---:|---:|---:|---:|",
        ]
        for s in analysis.diversity_summary:
            parts.append(
                f"| {s['group']} | {s['message']} | {s['texts']} | {s['mean']:.1f} | {s['median']:.1f} | "
                f"{s['q1']:.1f} | {s['q3']:.1f} | {s['vocabulary']} |"
            )
        parts.append("")
    return parts
