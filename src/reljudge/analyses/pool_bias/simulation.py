"""Simulated pooling bias (Yilmaz et al., YIL; spec S5): is a test collection built from the runs
of one type fair to runs of another type?

**Procedure B** (`simulate`), for each pool type T and repetition r (a random generator seeded
with ``(seed, r)``):

1. permute the runs of type T; walk the permutation and, for each run picked, add every run
   of its group that has type T (group closure, same type only: YIL does not say whether a
   group's runs of the other type follow); stop once at least ⌈n_T / 2⌉ runs are pooled;
2. pool P_q = the union of the pooled runs' top-``depth`` documents (trec_eval order: score
   descending, ties by docid descending);
3. restrict the qrels to the pool (everything else is unjudged, i.e. non-relevant);
4. test systems = every run not pooled; estimated values = the measure under the restricted
   qrels; actual values = the measure under the qrels restricted to the depth-``depth`` pool
   of **all** runs (``actual="pool"``, YIL §3.2.2) or under the full qrels
   (``actual="official"``);
5. Kendall τ-b between actual and estimated values over the test systems of each type and over
   all of them (NaN with fewer than three), and — an extension, not from YIL — the mean signed
   error (estimated − actual) per type.

Reported over the repetitions: mean (what YIL prints), std, min and max.

**Procedure A** (`relevant_found`): for k = 1..K the number of relevant (grade ≥ ``threshold``)
(topic, document) pairs in the union of the top-k documents of all runs of each type.

Measures follow trec_eval (ir_measures): a run's value is its mean over its topics that have
judgments; a topic a run lacks is not scored.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from reljudge.errors import InputError

Scores = Mapping[str, Mapping[str, float]]
RunInfo = Mapping[str, tuple[str, str]]  # run -> (group, type)
Pool = dict[str, set[str]]


def ranked_lists(run: Scores, depth: int | None = None) -> dict[str, list[str]]:
    """Per topic, the docids in trec_eval order (score descending, ties by docid descending),
    cut at ``depth``."""
    return {q: sorted(docs, key=lambda d: (docs[d], d), reverse=True)[:depth] for q, docs in run.items()}


def depth_pool(
    ranked: Mapping[str, Mapping[str, Sequence[str]]], depth: int, names: Sequence[str] | None = None
) -> Pool:
    """P_q: the union of the top-``depth`` documents of the runs ``names`` (all by default);
    ``ranked`` maps run -> `ranked_lists`."""
    pool: Pool = {}
    for name in ranked if names is None else names:
        for q, docs in ranked[name].items():
            pool.setdefault(q, set()).update(docs[:depth])
    return pool


def restrict_qrels(qrels: Scores, pool: Mapping[str, set[str]]) -> dict[str, dict[str, float]]:
    """The judgments of pooled documents only (a topic with none left is dropped)."""
    out: dict[str, dict[str, float]] = {}
    for q, docs in qrels.items():
        keep = pool.get(q)
        if keep:
            kept = {d: g for d, g in docs.items() if d in keep}
            if kept:
                out[q] = kept
    return out


def check_run_info(runs: Sequence[str], info: RunInfo) -> list[str]:
    """The run types, checked: every run has a type, and every type has at least two runs
    (`InputError` otherwise). Returns the types in first-seen order."""
    missing = [r for r in runs if r not in info]
    if missing:
        more = f" and {len(missing) - 5} more" if len(missing) > 5 else ""
        raise InputError(
            f"{len(missing)} run(s) missing from the run-type file: {', '.join(missing[:5])}{more}"
        )
    types = list(dict.fromkeys(info[r][1] for r in runs))
    if len(types) < 2:
        raise InputError(
            f"the runs have only one type ({types[0] if types else 'none'}); pooling bias needs two"
        )
    for t in types:
        n = sum(1 for r in runs if info[r][1] == t)
        if n < 2:
            raise InputError(f"type {t!r} has {n} run; each type needs at least two runs to split")
    return types


def split_with_groups(
    runs: Sequence[str], info: RunInfo, run_type: str, rng: np.random.Generator
) -> list[str]:
    """The pooled half of the runs of ``run_type`` (see step 1 of the module docstring)."""
    of_type = [r for r in runs if info[r][1] == run_type]
    target = math.ceil(len(of_type) / 2)
    pooled: list[str] = []
    for i in rng.permutation(len(of_type)):
        if len(pooled) >= target:
            break
        run = of_type[i]
        if run in pooled:
            continue
        group = info[run][0]
        pooled.extend(r for r in of_type if info[r][0] == group and r not in pooled)
    return pooled


def _means(qrels: Scores, runs: Mapping[str, Scores], measures: Sequence[str]) -> dict[str, dict[str, float]]:
    from reljudge.metrics.measures import system_measures

    out = {}
    for m in measures:
        per_topic = system_measures(qrels, runs, m)
        out[m] = {n: float(np.mean(list(v.values()))) if v else math.nan for n, v in per_topic.items()}
    return out


def estimated_values(
    qrels: Scores,
    ranked: Mapping[str, Mapping[str, Sequence[str]]],
    runs: Mapping[str, Scores],
    pooled: Sequence[str],
    measures: Sequence[str],
    *,
    depth: int = 10,
    test: Sequence[str] | None = None,
) -> dict[str, dict[str, float]]:
    """The mean ``measures`` of the ``test`` runs (all by default) under the qrels restricted
    to the depth-``depth`` pool of the ``pooled`` runs: ``{measure: {run: value}}``."""
    names = list(runs) if test is None else test
    return _means(
        restrict_qrels(qrels, depth_pool(ranked, depth, pooled)), {n: runs[n] for n in names}, measures
    )


def _tau(a: Sequence[float], b: Sequence[float]) -> float:
    """Kendall τ-b (the vectorised form, equal to scipy's); NaN with fewer than three values."""
    from reljudge.metrics.ranking import kendall_tau_b_batch

    if len(a) < 3:
        return math.nan
    return float(kendall_tau_b_batch(np.asarray(a, float)[:, None], np.asarray(b, float)[:, None])[0])


@dataclass
class PoolBiasReport:
    types: list[str]
    measures: list[str]
    actual: dict[str, dict[str, float]]  # measure -> run -> actual value
    repetitions: list[dict] = field(default_factory=list)  # one row per (pool type, rep, measure, subset)
    summary: list[dict] = field(default_factory=list)  # mean/std/min/max over repetitions
    scatter: dict = field(default_factory=dict)  # (pool type, measure) -> first repetition's points
    relevant_found: dict[str, list[int]] = field(default_factory=dict)
    settings: dict = field(default_factory=dict)


def relevant_found(
    qrels: Scores,
    ranked: Mapping[str, Mapping[str, Sequence[str]]],
    info: RunInfo,
    types: Sequence[str],
    *,
    max_depth: int,
    threshold: float = 2,
) -> dict[str, list[int]]:
    """Procedure A: per type, the count of relevant (topic, doc) pairs found by depth k = 1..max_depth."""
    out: dict[str, list[int]] = {}
    for t in types:
        names = [r for r in ranked if info[r][1] == t]
        first_depth: dict[tuple[str, str], int] = {}
        for name in names:
            for q, docs in ranked[name].items():
                judged = qrels.get(q, {})
                for i, d in enumerate(docs[:max_depth]):
                    if judged.get(d, -math.inf) >= threshold:
                        key = (q, d)
                        if first_depth.get(key, max_depth + 1) > i + 1:
                            first_depth[key] = i + 1
        counts = np.bincount(np.array(list(first_depth.values()), int), minlength=max_depth + 1)[1:]
        out[t] = np.cumsum(counts).tolist()
    return out


def _stats(values: Sequence[float]) -> dict[str, float]:
    v = np.array([x for x in values if x == x], float)
    if not v.size:
        return {"mean": math.nan, "std": math.nan, "min": math.nan, "max": math.nan, "n": 0}
    return {
        "mean": float(v.mean()),
        "std": float(v.std(ddof=0)),
        "min": float(v.min()),
        "max": float(v.max()),
        "n": int(v.size),
    }


def simulate(
    qrels: Scores,
    runs: Mapping[str, Scores],
    info: RunInfo,
    *,
    measures: Sequence[str] = ("RR(rel=2)@10", "nDCG@10"),
    depth: int = 10,
    reps: int = 10,
    seed: int = 0,
    actual: str = "pool",
    threshold: float = 2,
    max_found_depth: int | None = None,
) -> PoolBiasReport:
    """Procedures A and B on in-memory runs and qrels (see the module docstring)."""
    if depth < 1 or reps < 1:
        raise InputError("--depth and --reps must be at least 1")
    if actual not in ("pool", "official"):
        raise InputError(f"--actual must be pool or official, got {actual!r}")
    names = list(runs)
    types = check_run_info(names, info)
    run_depth = max((len(d) for run in runs.values() for d in run.values()), default=0)
    ranked = {n: ranked_lists(runs[n]) for n in names}
    from reljudge.metrics.measures import cut_runs

    scored = cut_runs(runs, list(measures))  # same values, faster to evaluate 2 x reps times
    if actual == "pool":  # the pool of every run: what the official collection judged (YIL 3.2.2)
        actual_values = estimated_values(qrels, ranked, scored, names, measures, depth=depth)
    else:
        actual_values = _means(qrels, scored, measures)
    report = PoolBiasReport(types, list(measures), actual_values)
    for pool_type in types:
        for rep in range(reps):
            rng = np.random.default_rng([seed, rep])
            pooled = split_with_groups(names, info, pool_type, rng)
            test = [n for n in names if n not in pooled]
            estimated = estimated_values(qrels, ranked, scored, pooled, measures, depth=depth, test=test)
            for m in measures:
                subsets = [(t, [n for n in test if info[n][1] == t]) for t in types] + [("all", test)]
                for label, members in subsets:
                    ok = [
                        n
                        for n in members
                        if actual_values[m][n] == actual_values[m][n] and estimated[m][n] == estimated[m][n]
                    ]
                    a = [actual_values[m][n] for n in ok]
                    e = [estimated[m][n] for n in ok]
                    report.repetitions.append(
                        {
                            "pool_type": pool_type,
                            "rep": rep,
                            "measure": m,
                            "test": label,
                            "n_pooled": len(pooled),
                            "n_test": len(ok),
                            "tau": _tau(a, e),
                            "signed_error": float(np.mean(np.subtract(e, a))) if ok else math.nan,
                        }
                    )
                if rep == 0:
                    report.scatter[(pool_type, m)] = [
                        {
                            "run": n,
                            "type": info[n][1],
                            "actual": actual_values[m][n],
                            "estimated": estimated[m][n],
                        }
                        for n in test
                    ]
    for pool_type in types:
        for m in measures:
            for label in [*types, "all"]:
                rows = [
                    r
                    for r in report.repetitions
                    if (r["pool_type"], r["measure"], r["test"]) == (pool_type, m, label)
                ]
                tau = _stats([r["tau"] for r in rows])
                err = _stats([r["signed_error"] for r in rows])
                report.summary.append(
                    {
                        "pool_type": pool_type,
                        "measure": m,
                        "test": label,
                        "tau_mean": tau["mean"],
                        "tau_std": tau["std"],
                        "tau_min": tau["min"],
                        "tau_max": tau["max"],
                        "reps_with_tau": tau["n"],
                        "signed_error_mean": err["mean"],
                        "signed_error_std": err["std"],
                        "n_test_mean": float(np.mean([r["n_test"] for r in rows])),
                        "n_pooled_mean": float(np.mean([r["n_pooled"] for r in rows])),
                    }
                )
    report.relevant_found = relevant_found(
        qrels, ranked, info, types, max_depth=max_found_depth or run_depth, threshold=threshold
    )
    report.settings = {
        "depth": depth,
        "reps": reps,
        "seed": seed,
        "actual": actual,
        "measures": list(measures),
        "threshold_relevant_found": threshold,
        "types": {t: sum(1 for n in names if info[n][1] == t) for t in types},
        "split": "random permutation of the pool type's runs; a picked run brings every run of its group with "
        "the same type; stop once at least ceil(n_type/2) runs are pooled",
        "unpooled": "documents outside the pool are unjudged (non-relevant)",
        "tau": "Kendall tau-b (scipy) over test systems; NaN with fewer than 3",
        "signed_error": "mean(estimated - actual) over the test systems of the subset (extension, not from YIL)",
        "measure_conventions": "trec_eval (ir_measures): mean over each run's topics with judgments",
    }
    return report
