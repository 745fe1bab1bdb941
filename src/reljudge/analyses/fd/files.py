"""``judge fd``'s outputs: the console tables and the report files.

- one variant: `format_fd_report` (FD per run, best first, and the agreement with the human
  measure), `fd_data` (the content of ``fd.json``, what ``--json`` prints) and `write_fd_report`
  (``fd.json`` with the missing passages listed, and ``fd.csv``);
- ``--variants``: `format_fd_variants` (the τ matrix), `fd_variants_data` and
  `write_fd_variants`: ``fd_variants.json``, ``fd_variants.csv`` (one row per run: the measure
  with its interval, each variant's FD with its interval), ``fd_matrix.csv`` (τ-b and p-value of
  every pair), and with ``plot`` ``fd_bootstrap.png`` (`reljudge.analyses.fd.plots`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from reljudge.analyses.fd.per_run import FDReport, coverage
from reljudge.analyses.fd.variants import FDVariantsReport
from reljudge.analyses.text_table import format_table
from reljudge.metrics.registry import ranking_measures


def _agreement_text(report: FDReport) -> str:
    """``: Kendall tau-b(measure, FD) = v [low, high], Spearman = v, ...`` for the registry's fd measures."""
    a = report.agreement
    measures = [m for m in ranking_measures("fd") if m.name in a]
    if not measures:
        return ""
    parts = []
    for i, m in enumerate(measures):
        text = (
            f"{m.label}({report.measure}, -FD) = {a[m.name]:.3f}"
            if i == 0
            else f"{m.label} = {a[m.name]:.3f}"
        )
        low, high = m.interval_columns
        if m.interval and low in a:
            text += f" [{a[low]:.3f}, {a[high]:.3f}]"
        parts.append(text)
    return f": {', '.join(parts)} (FD is lower-is-better, so each is computed with -FD: positive = agreement)"


def _controls_text(report: FDReport) -> str:
    """``controls (... the measure against -FD): real vectors tau-b v; random vectors v; ...``."""
    if not report.controls:
        return ""
    first = next((m for m in ranking_measures("fd") if m.name in report.agreement), None)
    if first is None:
        return ""
    names = {
        "random_vectors": "random vectors",
        "reference_excluded": "reference passages excluded from the runs",
    }
    parts = [f"real vectors {report.agreement[first.name]:.3f}"]
    for key, control in report.controls.items():
        value = control.get(first.name)
        text = f"{names.get(key, key)}: same as FD" if value is None else f"{names.get(key, key)} {value:.3f}"
        if value is not None and f"{first.name}_min" in control:
            text += (
                f" (mean of {control.get('draws')} draws, {control[f'{first.name}_min']:.3f} to "
                f"{control[f'{first.name}_max']:.3f})"
            )
        parts.append(text)
    return (
        f"\ncontrols, {first.label}({report.measure}, -FD): {'; '.join(parts)} "
        "(agreement that remains without semantics / without the reference passages; fd.json: controls)"
    )


def _fd_rows(report: FDReport) -> list[dict]:
    rows = []
    for name, r in report.runs.items():
        row = {"run": name, **r.as_dict(), report.measure: report.human_measure.get(name, float("nan"))}
        rows.append(row)
    rows.sort(key=lambda row: (row["fd"] != row["fd"], row["fd"]))
    return rows


def format_fd_report(report: FDReport) -> str:
    """A table of FD per run (best first) and the agreement with the human measure."""
    rows = _fd_rows(report)
    boot = any("ci_low" in r for r in rows)
    level = report.settings.get("level", 0.95)
    headers = [
        "run",
        "FD",
        *([f"{100 * level:g}% CI"] if boot else []),
        report.measure,
        "ref",
        "retrieved",
        "missing ref",
        "missing ret",
    ]
    table = []
    for r in rows:
        ci = (
            [f"[{r['ci_low']:.3f}, {r['ci_high']:.3f}]"]
            if boot and "ci_low" in r
            else (["-"] if boot else [])
        )
        table.append(
            [
                r["run"],
                r["fd"],
                *ci,
                r[report.measure],
                r["n_reference"],
                r["n_retrieved"],
                r["missing_reference"],
                r["missing_retrieved"],
            ]
        )
    s = report.settings
    head = (
        f"FD@{s['k']}{'-URR' if s['unjudged_only'] else ''} (encoder {s['encoder']}, relevant: grade >= {s['min_grade']:g}, "
        f"at most {s['max_per_topic'] or 'all'} per topic, {s['topics']} topics)"
    )
    tail = f"{report.agreement.get('runs', 0)} runs" + _agreement_text(report) + _controls_text(report)
    if report.settings.get("n_boot"):
        tail += (
            f"\nintervals over topics: FD +- z*se by the delete-one-topic jackknife; the agreement over "
            f"{s['n_boot']} random subsets of {s.get('subsample_topics')} of the {s['topics']} topics. They hold the "
            "estimate and describe another set of "
            f"{s['topics']} topics (fd.json: settings.intervals)"
        )
        note = s.get("intervals", {}).get("simulated_coverage")
        if note:
            tail += f"; {note}"
    cov = coverage(report.runs)
    ret_total = cov["retrieved_used"] + cov["retrieved_missing"]
    ref_total = cov["reference_used"] + cov["reference_missing"]
    if cov["retrieved_missing"] or cov["reference_missing"]:
        tail += (
            f"\ncoverage: {cov['retrieved_used']} of {ret_total} retrieved passages (all runs"
            f"{', ' + format(cov['retrieved_used'] / ret_total, '.1%') if ret_total else ''}) and "
            f"{cov['reference_used']} of {ref_total} reference passages had an embedding or text; "
            "the rest were left out of FD"
        )
    if report.agreement.get("runs", 0) == 0 and report.runs:
        tail += "\nno run has FD (fewer than two retrieved or reference passages with a vector)"
    return head + "\n" + format_table(headers, table) + "\n" + tail


def fd_data(report: FDReport) -> dict[str, Any]:
    """The content of ``fd.json`` (what ``judge fd --json`` prints)."""
    return {
        "settings": report.settings,
        "measure": report.measure,
        "agreement": report.agreement,
        "runs": {
            name: {
                **r.as_dict(),
                "missing_reference_ids": [list(x) for x in r.missing_reference],
                "missing_retrieved_ids": [list(x) for x in r.missing_retrieved],
            }
            for name, r in report.runs.items()
        },
        "human_measure": report.human_measure,
        "coverage": coverage(report.runs),
        **({"controls": report.controls} if report.controls else {}),
    }


def write_fd_report(report: FDReport, out_dir: str | Path) -> list[Path]:
    """Write ``fd.json`` (with the missing passages listed) and ``fd.csv``."""
    from reljudge.io.atomic import write_text_atomic
    from reljudge.io.tables import csv_text, json_ready

    out_dir = Path(out_dir)
    paths = [out_dir / "fd.json", out_dir / "fd.csv"]
    write_text_atomic(paths[0], json.dumps(json_ready(fd_data(report)), indent=1) + "\n")
    write_text_atomic(paths[1], csv_text(_fd_rows(report)))
    return paths


def format_fd_variants(report: FDVariantsReport) -> str:
    labels = [report.measure, *report.reports]
    cell = {(r["a"], r["b"]): r for r in report.matrix}
    rows = []
    for a in labels:
        row: list = [a]
        for b in labels:
            c = cell[(a, b)]
            row.append("1" if a == b else f"{c['tau_b']:.3f} (p={c['p_value']:.2g})")
        rows.append(row)
    head = f"Kendall tau-b between {report.measure} and the FD variants ({len(report.human)} runs; encoder {report.settings['encoder']})"
    return (
        head
        + "\n"
        + format_table(["", *labels], rows)
        + "\n"
        + "FD is lower-is-better and enters as -FD: tau(measure, FD) > 0 means the rankings agree"
    )


def fd_variants_data(report: FDVariantsReport) -> dict[str, Any]:
    """The content of ``fd_variants.json`` (what ``judge fd --variants --json`` prints)."""
    return {
        "settings": report.settings,
        "matrix": report.matrix,
        "runs": {r["run"]: r for r in report.rows()},
        "variants": {
            label: {
                "settings": rep.settings,
                "agreement": rep.agreement,
                **({"controls": rep.controls} if rep.controls else {}),
            }
            for label, rep in report.reports.items()
        },
    }


def write_fd_variants(report: FDVariantsReport, out_dir: str | Path, *, plot: bool = False) -> list[Path]:
    from reljudge.analyses.fd.plots import bootstrap_figure
    from reljudge.io.tables import write_report_files

    data = fd_variants_data(report)
    fig = bootstrap_figure(report) if plot else None
    written = write_report_files(
        out_dir, "fd_variants.json", data, {"fd_variants.csv": report.rows(), "fd_matrix.csv": report.matrix}
    )
    if fig is not None:
        from reljudge.io.figures import pyplot, save_figure

        written.append(save_figure(fig, Path(out_dir) / "fd_bootstrap.png"))
        pyplot().close(fig)
    return written
