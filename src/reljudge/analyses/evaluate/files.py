"""The files of ``judge evaluate`` and ``judge plot-summary``.

``evaluation.json`` (`evaluation_data`) and one CSV per table (`table_rows`): one per
judge-quality measure of the registry (``alignment.csv``, ``kappa.csv``, ...: a row per judgment
set the measure has a row for), then ``ranking.csv``, ``qrels_ranking.csv``, ``compatibility.csv``
and ``measure.csv`` (with runs), ``systems.csv`` (with answers), ``scales.csv`` (what each set's
values mean, its cut and its off-scale labels); with ``--plot`` the figures
(`reljudge.analyses.evaluate.plots`). For ``judge plot-summary``, the points of several
``evaluation.json`` files read back (`read_points`) and ``alignment_vs_agreement.csv``/``.png``
written (`write_summary`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from reljudge.analyses.evaluate.alignment_vs_agreement import COLUMNS, summary_points
from reljudge.analyses.evaluate.comparison import Report
from reljudge.errors import InputError
from reljudge.io.lines import loads_json
from reljudge.io.tables import json_ready
from reljudge.metrics.registry import judgment_measures

__all__ = ["evaluation_data", "read_points", "table_rows", "write_outputs", "write_report", "write_summary"]


def evaluation_data(report: Report) -> dict:
    """The content of ``evaluation.json`` (JSON-ready: NaN as None)."""
    return json_ready(report.as_dict())


def table_rows(report: Report) -> dict[str, list[dict]]:
    """The CSV tables, by name: one per judge-quality measure (a row per set, with the topics it
    labels), ranking, compatibility, measure (a row per run: the topics its means are over and
    how many topics of the qrels it lacks)."""
    tables: dict[str, list[dict]] = {}
    for m in judgment_measures():
        rows = []
        for s in report.sets:
            outcome = s.measures.get(m.name)
            if outcome is not None and outcome.row is not None:
                rows.append({"set": s.name, "topics": s.topics, **outcome.row})
        tables[m.name] = rows
    ranking, compat, qrels_ranking = [], [], []
    for s in report.sets:
        if s.ranking:
            ranking.append({"set": s.name, **s.ranking})
        for measure, row in s.qrels_ranking.items():
            qrels_ranking.append({"set": s.name, "measure": measure, **row})
        for run, values in s.compatibility.items():
            compat.append(
                {
                    "set": s.name,
                    "run": run,
                    "compatibility": float(np.mean(list(values.values()))) if values else math.nan,
                    "topics": len(values),
                }
            )
    means = {m: report.mean_of(m) for m in report.measures} or {report.measure: report.mean_measure()}
    human = [
        {
            "run": r,
            **{m: means[m].get(r, math.nan) for m in means},
            "topics": len(report.human_measure[r]),
            "missing_topics": len(report.missing_topics.get(r, ())),
        }
        for r in report.mean_measure()
    ]
    tables.update(ranking=ranking, qrels_ranking=qrels_ranking, compatibility=compat, measure=human)
    tables["scales"] = [
        {
            "set": s.name,
            **{k: v for k, v in s.scale.as_dict().items() if k not in ("range", "off_scale")},
            "off_scale": s.scale.n_off_scale,
            "off_scale_values": " ".join(f"{v:g}:{n}" for v, n in sorted(s.scale.off_scale.items())),
        }
        for s in report.sets
        if s.scale is not None
    ]
    tables["systems"] = list(report.system_ranking.get("systems", []))
    return tables


def write_report(report: Report, out_dir: str | Path) -> list[Path]:
    """Write ``evaluation.json`` and one CSV per non-empty table into ``out_dir``; return the paths.

    Everything is rendered before the first file is written; each file is written atomically."""
    from reljudge.io.atomic import write_text_atomic
    from reljudge.io.tables import csv_text

    out_dir = Path(out_dir)
    texts = {out_dir / "evaluation.json": json.dumps(evaluation_data(report), indent=1) + "\n"}
    for name, rows in table_rows(report).items():
        if rows:
            texts[out_dir / f"{name}.csv"] = csv_text(rows)
    for path, text in texts.items():
        write_text_atomic(path, text)
    return list(texts)


def write_outputs(report: Report, out_dir: str | Path, *, plot: bool = False) -> list[Path]:
    """`write_report`, and with ``plot`` the figures (``alignment.png``; ``compatibility.png`` and
    ``alignment_vs_agreement.png``/``.csv`` when runs were evaluated); return the paths."""
    written = write_report(report, out_dir)
    if plot:
        from reljudge.analyses.evaluate.plots import plot_alignment, plot_compatibility

        written.append(plot_alignment(report, Path(out_dir) / "alignment.png"))
        if report.runs:
            written.append(plot_compatibility(report, Path(out_dir) / "compatibility.png"))
            label = str(report.settings.get("label") or "")
            written += write_summary(summary_points(evaluation_data(report), label), out_dir)
    return written


def read_points(paths: Sequence[str | Path]) -> list[dict[str, Any]]:
    """The points of several ``evaluation.json`` files (or directories holding one); each file's
    label is its ``settings.label`` (``judge evaluate --label``), else its directory's name."""
    rows: list[dict[str, Any]] = []
    for given in paths:
        path = Path(given)
        if path.is_dir():
            path = path / "evaluation.json"
        try:
            data = loads_json(path.read_bytes(), path)
        except OSError as err:
            raise InputError(f"cannot read an evaluation.json: {err}", path) from None
        if not isinstance(data, dict) or not isinstance(data.get("sets"), list):
            raise InputError("not a judge evaluate result (no 'sets' list)", path)
        label = (data.get("settings") or {}).get("label") or path.parent.name
        rows += summary_points(data, str(label))
    return rows


def write_summary(rows: Sequence[Mapping[str, Any]], out_dir: str | Path, *, plot: bool = True) -> list[Path]:
    """``alignment_vs_agreement.csv`` and (with ``plot``) ``.png`` in ``out_dir``."""
    from reljudge.io.atomic import write_text_atomic
    from reljudge.io.tables import csv_text

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = [out / "alignment_vs_agreement.csv"]
    write_text_atomic(written[0], csv_text([{k: r[k] for k in COLUMNS} for r in rows]))
    if plot:
        from reljudge.analyses.evaluate.plots import plot_alignment_vs_agreement

        written.append(plot_alignment_vs_agreement(rows, out / "alignment_vs_agreement.png"))
    return written
