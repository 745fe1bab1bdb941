"""Sparsified qrels (spec S2; the sparse-label baseline of the FD paper, Table 3.6): how far does
a system ranking move when each topic keeps at most N relevant judgments?

For N and seed s:

1. per topic, at most N relevant documents (grade ≥ ``min_grade``, default 2): grade 3 first in a
   seeded random order, then grade 2 — exactly `reljudge.analyses.fd.per_run.relevant_set`, so FD's
   reference set and the sparsified qrels are the same documents;
2. the sparsified qrels Q_N: the selected documents with their grades, and
   - ``keep="none"`` (default): nothing else — every other judgment is dropped, as in MS MARCO's
     sparse labels; a topic without a relevant judgment disappears (it is not scored);
   - ``keep="nonrelevant"``: also every judgment with grade < ``min_grade`` (e.g. grade 1 of
     TREC DL passages, which still gains in nDCG);
3. every run's mean measure under Q_N (trec_eval conventions, ideal DCG from Q_N) and under
   the full qrels;
4. Kendall τ-b between the two rankings; repeated for seeds ``seed .. seed + repeats - 1``,
   reported as mean, std, min and max.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from reljudge.errors import InputError

Scores = Mapping[str, Mapping[str, float]]
KEEP = ("none", "nonrelevant")


def sparsify_qrels(
    qrels: Scores, n: int, *, keep: str = "none", min_grade: float = 2, seed: int = 0
) -> dict[str, dict[str, float]]:
    """Q_N (see the module docstring)."""
    from reljudge.analyses.fd.per_run import relevant_set

    if n < 1:
        raise InputError(f"N must be at least 1, got {n}")
    if keep not in KEEP:
        raise InputError(f"--keep must be one of {', '.join(KEEP)}, got {keep!r}")
    chosen = relevant_set(qrels, min_grade=min_grade, max_per_topic=n, seed=seed)
    out: dict[str, dict[str, float]] = {}
    for qid, docs in qrels.items():
        kept = {d: docs[d] for d in chosen.get(qid, [])}
        if keep == "nonrelevant":
            kept.update({d: g for d, g in docs.items() if g < min_grade})
        if kept:
            out[qid] = kept
    return out


@dataclass
class SparsifyReport:
    full: dict[str, float]  # run -> mean measure under the full qrels
    repetitions: list[dict] = field(default_factory=list)  # one row per (N, seed)
    summary: list[dict] = field(default_factory=list)  # one row per N
    settings: dict = field(default_factory=dict)


def _means(qrels: Scores, runs: Mapping[str, Scores], measure: str) -> dict[str, float]:
    from reljudge.metrics.measures import system_measures

    per_topic = system_measures(qrels, runs, measure)
    return {n: float(np.mean(list(v.values()))) if v else math.nan for n, v in per_topic.items()}


def sparsified_agreement(
    qrels: Scores,
    runs: Mapping[str, Scores],
    *,
    ns: Sequence[int] = (1, 5, 10),
    keep: str = "none",
    measure: str = "nDCG@10",
    min_grade: float = 2,
    repeats: int = 1,
    seed: int = 0,
) -> SparsifyReport:
    """τ-b between the run rankings under the full and the sparsified qrels (module docstring)."""
    from reljudge.metrics.measures import cut_runs
    from reljudge.metrics.ranking import kendall_tau_b_batch

    if repeats < 1:
        raise InputError(f"--repeats must be at least 1, got {repeats}")
    if len(runs) < 3:
        raise InputError(f"sparsified qrels need at least three runs to rank, got {len(runs)}")
    scored = cut_runs(runs, [measure])
    full = _means(qrels, scored, measure)
    report = SparsifyReport(full)
    no_rel = sorted(q for q, docs in qrels.items() if not any(g >= min_grade for g in docs.values()))
    for n in ns:
        taus = []
        for r in range(repeats):
            q_n = sparsify_qrels(qrels, n, keep=keep, min_grade=min_grade, seed=seed + r)
            est = _means(q_n, scored, measure)
            ok = [s for s in full if full[s] == full[s] and est.get(s, math.nan) == est.get(s, math.nan)]
            a = np.array([full[s] for s in ok])[:, None]
            b = np.array([est[s] for s in ok])[:, None]
            tau = float(kendall_tau_b_batch(a, b)[0]) if len(ok) >= 3 else math.nan
            taus.append(tau)
            report.repetitions.append(
                {
                    "n": n,
                    "seed": seed + r,
                    "tau": tau,
                    "runs": len(ok),
                    "topics": len(q_n),
                    "judgments": sum(len(d) for d in q_n.values()),
                    "relevant_kept": sum(1 for d in q_n.values() for g in d.values() if g >= min_grade),
                }
            )
        v = np.array([t for t in taus if t == t])
        report.summary.append(
            {
                "n": n,
                "tau_mean": float(v.mean()) if v.size else math.nan,
                "tau_std": float(v.std()) if v.size else math.nan,
                "tau_min": float(v.min()) if v.size else math.nan,
                "tau_max": float(v.max()) if v.size else math.nan,
                "repeats": repeats,
            }
        )
    report.settings = {
        "measure": measure,
        "ns": list(ns),
        "keep": keep,
        "min_grade": min_grade,
        "repeats": repeats,
        "seed": seed,
        "runs": len(runs),
        "selection": "per topic at most N relevant documents, highest grade first, seeded random order within a grade "
        "(analyses.fd.per_run.relevant_set)",
        "keep_meaning": "none: only the selected documents are judged; nonrelevant: also every judgment below min_grade",
        "topics_without_relevant": no_rel,
        "tau": "Kendall tau-b between the run means under the full and the sparsified qrels; NaN with fewer than 3 runs",
        "measure_conventions": "trec_eval (ir_measures), ideal DCG from the qrels used; mean over each run's scored topics",
    }
    return report
