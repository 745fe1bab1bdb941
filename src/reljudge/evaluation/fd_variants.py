"""``judge fd --variants`` / ``--plot``: several FD variants of the same runs in one command, the
τ matrix between them and the human measure (`reljudge.metrics.fd_variants`), the human
measure's bootstrap interval beside FD's, and the paper's figure.

Each variant is `reljudge.evaluation.fd.fd_paths` with its k and URR choice and the same
vectors: precomputed ones are read per variant; encoder vectors go through the embedding cache
(give ``--out`` or ``--embedding-cache``), so a passage is encoded once. Written files:
``fd_variants.json``, ``fd_variants.csv`` (one row per run: the measure with its interval, each
variant's FD with its interval), ``fd_matrix.csv`` (τ-b and p-value of every pair), and with
``plot`` ``fd_bootstrap.png`` (one panel for the measure, one per variant; runs in the order of
the official measure; 95% bars).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reljudge.metrics.fd import FDReport
from reljudge.metrics.fd_variants import measure_intervals, tau_matrix, variant_label


@dataclass
class FDVariantsReport:
    reports: dict[str, FDReport]  # variant label -> its FD report
    measure: str
    human: dict[str, float]  # run -> mean measure (as in fd.json)
    intervals: dict[str, dict[str, float]]  # run -> measure over the FD topics and its interval
    matrix: list[dict]
    settings: dict

    def rows(self) -> list[dict]:
        out = []
        for run in sorted(
            self.human, key=lambda r: -(self.human[r] if self.human[r] == self.human[r] else -1)
        ):
            row: dict = {"run": run, self.measure: self.human[run]}
            iv = self.intervals.get(run, {})
            row.update({"measure_fd_topics": iv.get("measure", math.nan)})
            row.update({k: iv.get(k, math.nan) for k in ("measure_ci_low", "measure_ci_high")})
            for label, rep in self.reports.items():
                r = rep.runs.get(run)
                d = r.as_dict() if r is not None else {}
                row[label] = d.get("fd", math.nan)
                row[f"{label}_ci_low"] = d.get("ci_low", math.nan)
                row[f"{label}_ci_high"] = d.get("ci_high", math.nan)
            out.append(row)
        return out


def fd_variants_paths(
    qrels: str | Path,
    runs: str | Path,
    variants: Sequence[tuple[int, bool]],
    *,
    measure: str = "ndcg_cut_10",
    n_boot: int = 0,
    level: float = 0.95,
    seed: int = 0,
    **fd_options,
) -> FDVariantsReport:
    """Every variant's FD report, the human measure's intervals and the τ matrix."""
    from reljudge.analyses.inputs import load_runs
    from reljudge.evaluation.fd import fd_paths
    from reljudge.io.trec import read_qrels
    from reljudge.metrics.measures import system_measures

    reports = {
        variant_label(k, urr): fd_paths(
            qrels, runs, k=k, unjudged_only=urr, measure=measure, n_boot=n_boot, seed=seed, **fd_options
        )
        for k, urr in variants
    }
    first = next(iter(reports.values()))
    per_topic = system_measures(read_qrels(qrels), load_runs(runs), measure)
    topics = {
        name: r.topics for name, r in first.runs.items()
    }  # the reference topics: the same in every variant
    intervals = measure_intervals(per_topic, topics, n_boot=n_boot, level=level, seed=seed)
    columns = {
        measure: first.human_measure,
        **{label: {n: r.fd for n, r in rep.runs.items()} for label, rep in reports.items()},
    }
    settings = {
        "variants": list(reports),
        "measure": measure,
        "n_boot": n_boot,
        "level": level,
        "seed": seed,
        "encoder": first.settings.get("encoder"),
        "max_per_topic": first.settings.get("max_per_topic"),
        "min_grade": first.settings.get("min_grade"),
        "topics": first.settings.get("topics"),
        "tau": "Kendall tau-b (scipy) with its two-sided p-value over the runs valued in both; FD is lower-better, "
        "so tau(measure, FD) < 0 means agreement",
        "measure_interval": "percentile bootstrap of the mean over each run's FD topics (scipy.stats.bootstrap)",
    }
    return FDVariantsReport(
        reports, measure, dict(first.human_measure), intervals, tau_matrix(columns), settings
    )


def format_fd_variants(report: FDVariantsReport) -> str:
    from reljudge.evaluation.report import format_table

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
        + "tau(measure, FD) < 0: the rankings agree (lower FD is better)"
    )


def fd_variants_data(report: FDVariantsReport) -> dict[str, Any]:
    """The content of ``fd_variants.json`` (what ``judge fd --variants --json`` prints)."""
    return {
        "settings": report.settings,
        "matrix": report.matrix,
        "runs": {r["run"]: r for r in report.rows()},
        "variants": {
            label: {"settings": rep.settings, "agreement": rep.agreement}
            for label, rep in report.reports.items()
        },
    }


def write_fd_variants(report: FDVariantsReport, out_dir: str | Path, *, plot: bool = False) -> list[Path]:
    from reljudge.io.tables import write_report_files

    data = fd_variants_data(report)
    fig = _figure(report) if plot else None
    written = write_report_files(
        out_dir, "fd_variants.json", data, {"fd_variants.csv": report.rows(), "fd_matrix.csv": report.matrix}
    )
    if fig is not None:
        from reljudge.io.figures import pyplot, save_figure

        written.append(save_figure(fig, Path(out_dir) / "fd_bootstrap.png"))
        pyplot().close(fig)
    return written


def _figure(report: FDVariantsReport):
    """Panel 1: the measure per run with its interval; one panel per FD variant with FD's."""
    import numpy as np

    from reljudge.io.figures import pyplot

    plt = pyplot()
    rows = report.rows()  # best first by the official measure
    runs = [r["run"] for r in rows]
    panels = [("measure_fd_topics", f"{report.measure} (mean over FD topics)")] + [
        (label, f"{label} (lower is better)") for label in report.reports
    ]
    fig, axes = plt.subplots(
        1,
        len(panels),
        figsize=(4.2 * len(panels), max(4.0, 0.16 * len(runs) + 1.5)),
        sharey=True,
        squeeze=False,
    )
    y = np.arange(len(runs))
    for ax, (key, title) in zip(axes[0], panels, strict=True):
        low_key, high_key = (
            ("measure_ci_low", "measure_ci_high")
            if key == "measure_fd_topics"
            else (f"{key}_ci_low", f"{key}_ci_high")
        )
        v = np.array([r[key] for r in rows], float)
        lo = np.array([r[low_key] for r in rows], float)
        hi = np.array([r[high_key] for r in rows], float)
        has = ~np.isnan(lo) & ~np.isnan(hi)
        # the interval as a line, not an error bar: FD's point value may lie outside its
        # percentile interval (FD is biased under resampling)
        ax.hlines(y[has], lo[has], hi[has], color="#7f8c8d", lw=1)
        ax.plot(v, y, "o", ms=3, color="#2c6fbb")
        ax.set_title(title, fontsize=10)
        ax.grid(axis="x", alpha=0.3)
    axes[0][0].set_yticks(y, runs, fontsize=7 if len(runs) > 30 else 9)
    axes[0][0].invert_yaxis()
    level = int(round(100 * report.settings["level"]))
    fig.suptitle(
        f"Runs by the official {report.measure} (best on top); bars: {level}% bootstrap intervals over topics ({report.settings['n_boot']} replicates)",
        fontsize=10,
    )
    fig.tight_layout()
    return fig
