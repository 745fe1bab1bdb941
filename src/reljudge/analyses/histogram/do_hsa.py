"""Distributional Overlap (DO) and Histogram Slope Analysis (HSA) of Krstovski et al. (KRS),
spec S4: how well a system's values separate relevant from non-relevant documents, without
a standard measure.

Per system, the values of the relevant documents (grade ≥ ``threshold``) and of the
non-relevant ones are pooled over all topics into two histograms H_R and H_NR of ``bins``
equal-width bins on [0, 1] (the last bin closed on the right). The supported bins B′ are
those where both counts are positive.

- **DO** = Σ_{b∈B′} ln min(h^r_b, h^nr_b) (natural log; 0 when B′ is empty). Lower is better.
  DO grows with the sample sizes.
- **HSA** = the OLS slope of O_b = ln(h^r_b / h^nr_b) on the bin centre b over B′ (NaN when
  |B′| < 2). Higher is better.

Values (`run_values`):

- ``rank`` (KRS §5.3, the default for TREC runs): v = 1 − (r − 1)/(N_q − 1) with r the 1-based
  rank in trec_eval order (score descending, ties by docid descending) and N_q the length of the
  topic's list (a one-document list gives 1.0);
- ``score``: the run's scores, min–max normalised over the union of the system's relevant and
  non-relevant values, over all topics (``normalise="global"``, default) or per topic
  (``"query"``); a constant set of values maps to 1.0.

Only retrieved documents have a value. The non-relevant set (``nonrel``): ``judged`` (judged
with grade < threshold; the default for runs), ``unjudged`` (retrieved and never judged),
``all`` (every retrieved document that is not relevant), or ``sample:M`` (a seeded sample of
M per topic from ``all``). Topics without any relevant judgment are skipped and counted.
Meta-evaluation (`do_hsa_runs`): Pearson R and Spearman ρ with p-values between DO, HSA and
each standard measure across the systems.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from reljudge.errors import InputError

Scores = Mapping[str, Mapping[str, float]]
VALUES = ("rank", "score")
NORMALISE = ("global", "query")


@dataclass(frozen=True)
class Histograms:
    centres: np.ndarray
    relevant: np.ndarray
    nonrelevant: np.ndarray

    @property
    def supported(self) -> np.ndarray:
        """Mask of the bins where both counts are positive (B′)."""
        return (self.relevant > 0) & (self.nonrelevant > 0)


def histograms(values_r: Sequence[float], values_nr: Sequence[float], bins: int = 20) -> Histograms:
    """H_R and H_NR on ``bins`` equal-width bins of [0, 1] (last bin closed; values outside
    [0, 1] are an error)."""
    if bins < 1:
        raise ValueError("bins must be at least 1")
    r = np.asarray(values_r, float)
    nr = np.asarray(values_nr, float)
    for v in (r, nr):
        if v.size and (np.isnan(v).any() or v.min() < 0.0 or v.max() > 1.0):
            raise ValueError("histogram values must lie in [0, 1]; normalise them first")
    edges = np.linspace(0.0, 1.0, bins + 1)
    h_r, _ = np.histogram(r, bins=edges)
    h_nr, _ = np.histogram(nr, bins=edges)
    return Histograms((edges[:-1] + edges[1:]) / 2.0, h_r, h_nr)


def distributional_overlap(h: Histograms) -> float:
    """DO = Σ over supported bins of ln min(h_r, h_nr); 0 when no bin is supported."""
    s = h.supported
    if not s.any():
        return 0.0
    return float(np.log(np.minimum(h.relevant[s], h.nonrelevant[s])).sum())


def histogram_slope(h: Histograms) -> tuple[float, float]:
    """(HSA slope β̂, intercept α̂) of the OLS fit ln(h_r/h_nr) = α + β·b over the supported
    bins; NaN, NaN with fewer than two."""
    s = h.supported
    if s.sum() < 2:
        return float("nan"), float("nan")
    b = h.centres[s]
    o = np.log(h.relevant[s] / h.nonrelevant[s])
    db = b - b.mean()
    beta = float((db * (o - o.mean())).sum() / (db * db).sum())
    return beta, float(o.mean() - beta * b.mean())


@dataclass
class DOHSA:
    do: float
    hsa: float
    intercept: float
    histograms: Histograms
    n_rel: int
    n_nonrel: int

    @property
    def n_supported(self) -> int:
        return int(self.histograms.supported.sum())


def do_hsa(values_r: Sequence[float], values_nr: Sequence[float], bins: int = 20) -> DOHSA:
    """DO and HSA of one system's relevant and non-relevant values (in [0, 1])."""
    h = histograms(values_r, values_nr, bins)
    beta, alpha = histogram_slope(h)
    return DOHSA(distributional_overlap(h), beta, alpha, h, len(values_r), len(values_nr))


def parse_nonrel(nonrel: str) -> tuple[str, int | None]:
    """``judged``/``unjudged``/``all`` or ``sample:M`` → (kind, M)."""
    if nonrel in ("judged", "unjudged", "all"):
        return nonrel, None
    if nonrel.startswith("sample:"):
        try:
            m = int(nonrel.split(":", 1)[1])
        except ValueError:
            m = 0
        if m >= 1:
            return "sample", m
    raise InputError(f"--nonrel must be judged, unjudged, all or sample:M (M >= 1), got {nonrel!r}")


def _ranked(docs: Mapping[str, float]) -> list[str]:
    return sorted(docs, key=lambda d: (docs[d], d), reverse=True)


def run_values(
    qrels: Scores,
    run: Scores,
    *,
    values: str = "rank",
    nonrel: str = "judged",
    threshold: float = 2,
    normalise: str = "global",
    seed: int = 0,
) -> tuple[list[float], list[float], list[str]]:
    """(V_R, V_NR, topics used) of one run (see the module docstring)."""
    if values not in VALUES:
        raise InputError(f"--values must be one of {', '.join(VALUES)}, got {values!r}")
    if normalise not in NORMALISE:
        raise InputError(f"--normalise must be one of {', '.join(NORMALISE)}, got {normalise!r}")
    kind, m = parse_nonrel(nonrel)
    rel_parts: list[np.ndarray] = []
    nonrel_parts: list[np.ndarray] = []
    used: list[str] = []
    for qid, docs in run.items():
        judged = qrels.get(qid, {})
        if not docs or not any(g >= threshold for g in judged.values()):
            continue
        ranked = _ranked(docs)
        n = len(ranked)
        if values == "rank":
            v = np.ones(n) if n == 1 else 1.0 - np.arange(n) / (n - 1)
        else:
            v = np.array([docs[d] for d in ranked], float)
        is_rel = np.array([judged.get(d, -math.inf) >= threshold for d in ranked])
        if kind == "judged":
            is_nr = np.array([d in judged and judged[d] < threshold for d in ranked])
        elif kind == "unjudged":
            is_nr = np.array([d not in judged for d in ranked])
        else:
            is_nr = ~is_rel
            if kind == "sample" and m is not None and is_nr.sum() > m:
                idx = np.flatnonzero(is_nr)
                keep = random.Random(f"{seed}:{qid}").sample(sorted(idx.tolist()), m)
                is_nr = np.zeros(n, bool)
                is_nr[keep] = True
        if values == "score" and normalise == "query":
            v = _minmax(v, is_rel | is_nr)
        rel_parts.append(v[is_rel])
        nonrel_parts.append(v[is_nr])
        used.append(qid)
    r = np.concatenate(rel_parts) if rel_parts else np.zeros(0)
    nr = np.concatenate(nonrel_parts) if nonrel_parts else np.zeros(0)
    if values == "score" and normalise == "global":
        both = _minmax(np.concatenate([r, nr]), None)
        r, nr = both[: r.size], both[r.size :]
    return r.tolist(), nr.tolist(), used


def _minmax(v: np.ndarray, mask: np.ndarray | None) -> np.ndarray:
    pick = v if mask is None else v[mask]
    if not pick.size:
        return v
    lo, hi = float(pick.min()), float(pick.max())
    if hi == lo:
        return np.ones_like(v)
    return np.clip((v - lo) / (hi - lo), 0.0, 1.0)


@dataclass
class HistogramReport:
    systems: dict[str, DOHSA]
    measures: dict[str, dict[str, float]]  # measure -> system -> mean value
    correlations: list[dict] = field(default_factory=list)
    settings: dict = field(default_factory=dict)

    def rows(self) -> list[dict]:
        out = []
        for name, r in self.systems.items():
            row = {
                "system": name,
                "DO": r.do,
                "HSA": r.hsa,
                "supported_bins": r.n_supported,
                "n_rel": r.n_rel,
                "n_nonrel": r.n_nonrel,
            }
            row.update({m: v.get(name, float("nan")) for m, v in self.measures.items()})
            out.append(row)
        return out


def correlations(
    metric_values: Mapping[str, Mapping[str, float]], measures: Mapping[str, Mapping[str, float]]
) -> list[dict]:
    """Pearson R and Spearman ρ with p-values between each metric (DO, HSA) and each measure
    across the systems with finite values in both (NaN with fewer than three)."""
    from reljudge.metrics.ranking import agreement_test

    rows = []
    for metric, mv in metric_values.items():
        for measure, sv in measures.items():
            systems = [s for s in mv if s in sv and np.isfinite(mv[s]) and np.isfinite(sv[s])]
            x = np.array([mv[s] for s in systems])
            y = np.array([sv[s] for s in systems])
            row: dict = {"metric": metric, "measure": measure, "systems": len(systems)}
            for method in ("pearson", "spearman"):
                stat, p = agreement_test(x, y, method) if len(systems) >= 3 else (math.nan, math.nan)
                row[method] = stat
                row[f"{method}_p"] = p
            rows.append(row)
    return rows


def do_hsa_runs(
    qrels: Scores,
    runs: Mapping[str, Scores],
    *,
    values: str = "rank",
    nonrel: str = "judged",
    threshold: float = 2,
    bins: int = 20,
    normalise: str = "global",
    measures: Sequence[str] = ("AP(rel=2)", "P(rel=2)@10", "nDCG@10"),
    seed: int = 0,
) -> HistogramReport:
    """DO and HSA of every run, the runs' mean ``measures`` (trec_eval conventions, full qrels)
    and the correlations between them (see the module docstring)."""
    from reljudge.metrics.measures import system_measures

    if bins < 1:
        raise InputError(f"--bins must be at least 1, got {bins}")
    if not runs:
        raise InputError("no runs to analyse")
    systems: dict[str, DOHSA] = {}
    topics_used: set[str] = set()
    for name, run in runs.items():
        v_r, v_nr, used = run_values(
            qrels, run, values=values, nonrel=nonrel, threshold=threshold, normalise=normalise, seed=seed
        )
        topics_used.update(used)
        systems[name] = do_hsa(v_r, v_nr, bins)
    means: dict[str, dict[str, float]] = {}
    for measure in measures:
        per_topic = system_measures(qrels, runs, measure)
        means[measure] = {
            n: float(np.mean(list(v.values()))) if v else math.nan for n, v in per_topic.items()
        }
    metric_values = {
        "DO": {n: r.do for n, r in systems.items()},
        "HSA": {n: r.hsa for n, r in systems.items()},
    }
    no_rel = sorted(q for q, docs in qrels.items() if not any(g >= threshold for g in docs.values()))
    settings = {
        "values": values,
        "nonrel": nonrel,
        "threshold": threshold,
        "bins": bins,
        "normalise": normalise if values == "score" else "rank: 1 - (r-1)/(N_q-1)",
        "log": "natural",
        "seed": seed,
        "systems": len(runs),
        "topics_used": len(topics_used),
        "topics_without_relevant": no_rel,
        "measures": list(measures),
        "measure_conventions": "trec_eval (ir_measures), full qrels, mean over each run's scored topics",
    }
    return HistogramReport(systems, means, correlations(metric_values, means), settings)
