"""Writing a sweep analysis: CSV and JSON tables, PNG plots and a Markdown report linking them.

Files in the output directory:

- ``cells.csv`` / ``cells.json``: one row per cell (κ or agree/tie/disagree, invalid rate, tokens, cost);
- ``summary.csv`` / ``summary.json``: per dataset × task × model × prompt group, mean / variance /
  std / min / max of the cell metric over prompts;
- ``summary_pooled.csv`` / ``summary_pooled.md`` (with ``Conventions.pool_datasets``): one
  distribution per model × task × prompt group over all datasets, as CSV (``model, task, group,
  n_values, mean, var, std, min, max``) and as a Markdown table laid out like the thesis's Table 4.5;
- ``alpha.json`` and ``alpha/<dataset>_<model>_<task>.csv``: Krippendorff's α between prompts;
- ``alpha.csv``, ``robustness.csv``, ``top_prompts.csv``, ``prompt_diversity*.csv``: the prompt
  analyses of `reljudge.sweep.prompt_report`;
- ``ranking.json`` (when runs were given): Kendall τ of each prompt's system ranking;
- ``plots/*.png`` (with matplotlib): metric heatmaps (prompt × model) and α matrices;
- ``report.md``: the tables, the conventions and links to all of the above.

Without matplotlib the plots are left out (a warning is logged and ``report.md`` says so); the
tables and the report are written all the same.
"""

from __future__ import annotations

import json
import logging
import math
from pathlib import Path
from typing import Any

from reljudge.io.atomic import write_text_atomic
from reljudge.io.tables import csv_text, json_ready
from reljudge.sweep.analysis import SweepAnalysis
from reljudge.sweep.grid import safe_name

logger = logging.getLogger(__name__)


def _f(value: Any, digits: int = 3) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "–"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def summary_markdown(analysis: SweepAnalysis) -> str:
    """The per model × prompt group table (Markdown)."""
    lines = [
        "| dataset | task | metric | model | group | prompts | mean | variance | std | min | max | invalid |",
        "|---|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for s in analysis.summary:
        lines.append(
            f"| {s['dataset']} | {s['task']} | {s['metric']} | {s['model']} | {s['group']} | {s['prompts']} | "
            f"{_f(s['mean'])} | {_f(s['var'], 4)} | {_f(s['std'])} | {_f(s['min'])} | {_f(s['max'])} | {_f(s['invalid_rate'] * 100, 2)}% |"
        )
    return "\n".join(lines)


_GROUP_LABEL = {"human": "Human", "llm": "LLM"}


def pooled_markdown(analysis: SweepAnalysis) -> str:
    """The pooled summary laid out like the thesis's Table 4.5: rows model × crafted-by, columns
    binary / graded / pairwise, each with mean and variance ("" without a pooled summary)."""
    if not analysis.pooled:
        return ""
    tasks = [t for t in ("binary", "graded", "pairwise") if any(r["task"] == t for r in analysis.pooled)]
    cell = {(r["model"], r["group"], r["task"]): r for r in analysis.pooled}
    variance = "var" if analysis.conventions.variance_ddof else "var (population)"
    head = "| model | crafted by | " + " | ".join(f"{t} mean | {t} {variance}" for t in tasks) + " | n |"
    lines = [head, "|---|---|" + "---:|---:|" * len(tasks) + "---:|"]
    models = list(dict.fromkeys(r["model"] for r in analysis.pooled))
    groups = list(dict.fromkeys(r["group"] for r in analysis.pooled))
    for model in models:
        for group in groups:
            found = [cell.get((model, group, t)) for t in tasks]
            if not any(found):
                continue
            values = " | ".join(f"{_f(c['mean'])} | {_f(c['var'])}" if c else "– | –" for c in found)
            n = "/".join(str(c["n_values"]) if c else "0" for c in found)
            lines.append(f"| {model} | {_GROUP_LABEL.get(group, group)} | {values} | {n} |")
    return "\n".join(lines)


def ranking_markdown(analysis: SweepAnalysis) -> str:
    """The ranking-stability table (Markdown): τ to the human ranking per dataset × task × model."""
    lines = [
        "| dataset | task | model | systems | prompts | mean τ to human | std | min | max | τ between prompts | judged | human labels, same items |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in sorted(analysis.rankings, key=lambda r: (r.dataset, r.task, r.model)):
        s = r.summary()
        lines.append(
            f"| {s['dataset']} | {s['task']} | {s['model']} | {s['systems']} | {s['prompts']} | {_f(s['tau_mean'])} | "
            f"{_f(s['tau_std'])} | {_f(s['tau_min'])} | {_f(s['tau_max'])} | {_f(s['tau_between_prompts'])} | "
            f"{_f(s['judged'] * 100, 1) + '%' if s['judged'] == s['judged'] else '–'} | {_f(s['tau_human_on_items'])} |"
        )
    return "\n".join(lines)


def write_report(
    analysis: SweepAnalysis,
    out_dir: str | Path,
    *,
    plots: bool = True,
    title: str = "Prompt-sensitivity sweep",
) -> list[Path]:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []

    def put(name: str, text: str) -> Path:
        path = out / name
        write_text_atomic(path, text)
        written.append(path)
        return path

    put("cells.csv", csv_text(analysis.rows))
    put("cells.json", json.dumps(json_ready(analysis.rows), indent=1) + "\n")
    put("summary.csv", csv_text(analysis.summary))
    put("summary.json", json.dumps(json_ready(analysis.summary), indent=1) + "\n")
    if analysis.pooled:
        from reljudge.sweep.analysis.summary import POOLED_COLUMNS

        put("summary_pooled.csv", csv_text([{k: r[k] for k in POOLED_COLUMNS} for r in analysis.pooled]))
        put("summary_pooled.md", pooled_markdown(analysis) + "\n")
    alpha_json = []
    for a in analysis.alphas:
        name = f"alpha/{safe_name(a.dataset)}_{safe_name(a.model)}_{a.task}.csv"
        rows = [
            {"prompt": p, **{q: a.matrix[i, j] for j, q in enumerate(a.prompts)}}
            for i, p in enumerate(a.prompts)
        ]
        put(name, csv_text(rows))
        alpha_json.append(
            {
                "dataset": a.dataset,
                "model": a.model,
                "task": a.task,
                "level": a.level,
                "alpha": a.overall,
                "units": a.units,
                "prompts": a.prompts,
                "matrix": name,
            }
        )
    if alpha_json:
        put("alpha.json", json.dumps(json_ready(alpha_json), indent=1) + "\n")
    from reljudge.sweep.prompt_report import prompt_tables

    for name, rows in prompt_tables(analysis).items():
        put(name, csv_text(rows))
    if analysis.rankings:
        put(
            "ranking.json",
            json.dumps(
                json_ready(
                    [
                        {
                            "dataset": r.dataset,
                            "model": r.model,
                            "task": r.task,
                            "measure": r.measure,
                            "systems": r.systems,
                            **r.summary(),
                            "tau_to_human": r.tau_to_human,
                            "judged_by_prompt": r.judged,
                            "tau_human_on_items_by_prompt": r.human_on_items,
                            "prompts": r.prompts,
                            "tau_matrix": r.matrix.tolist(),
                        }
                        for r in analysis.rankings
                    ]
                ),
                indent=1,
            )
            + "\n",
        )
    figures: list[tuple[str, str]] = []
    plots_missing: str | None = None
    if plots:
        from reljudge.errors import MissingExtraError
        from reljudge.sweep.plots import write_plots

        try:
            for path, caption in write_plots(analysis, out / "plots"):
                written.append(path)
                figures.append((str(path.relative_to(out)), caption))
        except MissingExtraError as err:
            plots_missing = str(err)
            logger.warning("no plots written: %s", err)
    put("report.md", _markdown(analysis, alpha_json, figures, title, plots_missing))
    return written


def _markdown(
    analysis: SweepAnalysis,
    alpha_json: list[dict[str, Any]],
    figures: list[tuple[str, str]],
    title: str,
    plots_missing: str | None = None,
) -> str:
    conv = analysis.conventions.as_dict()
    parts = [f"# {title}", ""]
    parts += ["## Conventions", ""] + [f"- **{k}**: {v}" for k, v in conv.items()] + [""]
    if analysis.notes:
        parts += ["## Notes", ""] + [f"- {n}" for n in analysis.notes] + [""]
    parts += [
        "## Agreement with human labels, per model and prompt group",
        "",
        "Metric per cell: κ for binary/graded, share of agreeing pairs for pairwise; mean and variance over the prompts of the group. "
        "Per-cell values: [cells.csv](cells.csv); this table: [summary.csv](summary.csv).",
        "",
        summary_markdown(analysis),
        "",
    ]
    if analysis.pooled:
        parts += [
            "## Datasets pooled, per model and prompt group (laid out like the thesis's Table 4.5)",
            "",
            "One distribution per model × task × group over the cell values of every dataset; n = values "
            "per task (binary/graded/pairwise). Data: [summary_pooled.csv](summary_pooled.csv).",
            "",
            pooled_markdown(analysis),
            "",
        ]
    if alpha_json:
        parts += [
            "## Agreement between prompts (Krippendorff's α)",
            "",
            "| dataset | task | model | level | prompts | items | α | matrix |",
            "|---|---|---|---|---:|---:|---:|---|",
        ]
        for a in alpha_json:
            parts.append(
                f"| {a['dataset']} | {a['task']} | {a['model']} | {a['level']} | {len(a['prompts'])} | {a['units']} | {_f(a['alpha'])} | [csv]({a['matrix']}) |"
            )
        parts.append("")
    from reljudge.sweep.prompt_report import prompt_markdown

    parts += prompt_markdown(analysis)
    if analysis.rankings:
        parts += [
            "## Stability of the system ranking",
            "",
            "Each prompt's labels as qrels (documents it did not label count as non-relevant), the runs "
            f"scored by {analysis.conventions.ranking_measure} under them, Kendall τ-b to the ranking "
            "under the human qrels: mean, sample std, min and max over the prompts; between prompts: "
            "mean τ over every two prompts; judged: mean share of the runs' top documents the prompt labelled; "
            "human labels, same items: τ of the human labels of just the items the prompts labelled "
            "(binarised for binary), the ceiling a perfect judge reaches on them.",
            "",
            ranking_markdown(analysis),
        ]
        parts += ["", "Details: [ranking.json](ranking.json)", ""]
    if plots_missing:
        parts += ["## Plots", "", f"Not written: {plots_missing}.", ""]
    if figures:
        parts += ["## Plots", ""]
        for path, caption in figures:
            parts += [f"### {caption}", "", f"![{caption}]({path})", ""]
    return "\n".join(parts)
