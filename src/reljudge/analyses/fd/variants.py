"""FD variants side by side (spec S3 b) and the bootstrap interval of the human measure (S3 a).

- A variant is FD@k over the top-k retrieved passages, or over the first k unjudged ones
  ("unlabeled retrieved results", URR): ``k=1``, ``k=1:urr``, ``k=10``, ``k=10:urr`` (the paper's
  four, `PAPER_VARIANTS`).
- `tau_matrix`: Kendall τ-b (scipy, with its two-sided p-value) between every pair of columns —
  the official measure and each FD variant — over the runs that have a value in both. FD is
  lower-better and enters as −FD (`oriented`), so τ(measure, FD) > 0 means agreement, as in
  ``fd.json`` (the paper's Table 4 correlates FD itself and prints the opposite sign); FD-vs-FD
  cells are unchanged by the orientation.
- `measure_intervals`: per run, the mean of the per-topic measure over the run's FD topics and
  its percentile bootstrap interval (``scipy.stats.bootstrap``, resampling |topics| topics with
  replacement; a topic the run does not score counts 0, as in `reljudge.analyses.fd.per_run.fd_runs`);
- `FDVariantsReport`: every variant's FD report, the measure's intervals and the τ matrix
  (`reljudge.analyses.fd.pipeline.fd_variants_paths` makes it), one row per run (`rows`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from reljudge.analyses.fd.per_run import FDReport
from reljudge.errors import InputError

PAPER_VARIANTS: tuple[tuple[int, bool], ...] = ((1, False), (1, True), (10, False), (10, True))


def parse_variants(text: str) -> list[tuple[int, bool]]:
    """``"k=1,k=1:urr,k=10,k=10:urr"`` (or ``paper`` for those four) → ``[(1, False), (1, True), ...]``."""
    if text.strip() == "paper":
        return list(PAPER_VARIANTS)
    out: list[tuple[int, bool]] = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        spec, _, flag = part.partition(":")
        key, _, value = spec.partition("=")
        if key.strip() != "k" or flag not in ("", "urr"):
            raise InputError(f"a variant is k=N or k=N:urr (e.g. k=10:urr), got {part!r}")
        try:
            k = int(value)
        except ValueError:
            raise InputError(f"a variant is k=N or k=N:urr with N an integer, got {part!r}") from None
        if k < 1:
            raise InputError(f"k must be at least 1 in variant {part!r}")
        variant = (k, flag == "urr")
        if variant in out:
            raise InputError(f"variant {part!r} is given twice")
        out.append(variant)
    if not out:
        raise InputError("no FD variant given (e.g. --variants k=1,k=1:urr,k=10,k=10:urr)")
    return out


def variant_label(k: int, urr: bool) -> str:
    return f"FD@{k}{'-URR' if urr else ''}"


def tau_matrix(columns: Mapping[str, Mapping[str, float]]) -> list[dict]:
    """Kendall τ-b and its p-value for every ordered pair of columns ``{label: {run: value}}``
    (NaN with fewer than three runs valued in both)."""
    from reljudge.metrics.ranking import agreement_test

    rows = []
    labels = list(columns)
    for a in labels:
        for b in labels:
            runs = [
                r for r in columns[a] if r in columns[b] and _finite(columns[a][r]) and _finite(columns[b][r])
            ]
            if len(runs) >= 3:
                tau, p = agreement_test(
                    np.array([columns[a][r] for r in runs]),
                    np.array([columns[b][r] for r in runs]),
                    "kendall",
                )
            else:
                tau, p = math.nan, math.nan
            rows.append({"a": a, "b": b, "tau_b": tau, "p_value": p, "runs": len(runs)})
    return rows


def oriented(
    columns: Mapping[str, Mapping[str, float]], lower_is_better: Sequence[str]
) -> dict[str, dict[str, float]]:
    """The columns with every ``lower_is_better`` one negated (FD → −FD), so that higher is better
    in all of them."""
    return {
        label: {run: (-v if label in lower_is_better else v) for run, v in values.items()}
        for label, values in columns.items()
    }


def _finite(v: float) -> bool:
    return v is not None and math.isfinite(v)


def measure_intervals(
    per_topic: Mapping[str, Mapping[str, float]],
    topics: Mapping[str, Sequence[str]],
    *,
    n_boot: int = 1000,
    level: float = 0.95,
    seed: int = 0,
) -> dict[str, dict[str, float]]:
    """``{run: {"measure": mean, "measure_ci_low": ..., "measure_ci_high": ...}}`` over each run's
    ``topics`` (see the module docstring); no interval (NaN) with ``n_boot`` 0 or one topic."""
    from scipy import stats

    out: dict[str, dict[str, float]] = {}
    rng = np.random.default_rng(seed)
    for run, qids in topics.items():
        values = np.array([per_topic.get(run, {}).get(q, 0.0) for q in qids], float)
        mean = float(values.mean()) if values.size else math.nan
        low = high = math.nan
        if n_boot > 0 and values.size >= 2 and np.ptp(values) > 0:
            res = stats.bootstrap(
                (values,),
                np.mean,
                n_resamples=n_boot,
                confidence_level=level,
                method="percentile",
                random_state=rng,
                vectorized=True,
            )
            low, high = float(res.confidence_interval.low), float(res.confidence_interval.high)
        elif n_boot > 0 and values.size >= 1:
            low = high = mean  # every topic has the same value: every resample has that mean
        out[run] = {"measure": mean, "measure_ci_low": low, "measure_ci_high": high}
    return out


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
