"""``judge select`` and ``judge estimate``: the selection and the combined estimates, from files."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from reljudge.analyses.humans.design import (
    Chosen,
    depth_stratum,
    label_stratum,
    stratified_sample,
    swapped_pairs,
    top_by_score,
    uncertainty_score,
)
from reljudge.analyses.humans.files import (
    RunLabels,
    Task,
    human_labels,
    load_run_labels,
    read_assessments,
    texts_for,
)
from reljudge.errors import InputError

STRATEGIES = ("stratified", "uncertainty", "influence")
DEFAULT_MEASURES = ("nDCG@10", "P@10")


@dataclass
class Selection:
    header: dict[str, Any]
    items: list[dict[str, Any]]
    notes: list[str] = field(default_factory=list)


def _measure(name: str, level: int) -> tuple[str, int, int]:
    """(kind, k, relevance level) of a measure the estimates handle: nDCG@k or P@k (a ``rel``
    the name sets overrides ``level``)."""
    from reljudge.metrics.measures import measure_cutoff, parse_measure

    m = parse_measure(name)
    kind = str(getattr(m, "NAME", type(m).__name__))
    k = measure_cutoff(name)
    if kind not in ("nDCG", "P") or k is None or set(m.params) - {"cutoff", "rel"}:
        raise InputError(f"measure {name!r}: the estimates handle nDCG@k and P@k")
    return kind, int(k), int(m.params.get("rel", level))


def _load_runs(path: str | Path | None) -> dict[str, Any]:
    if path is None:
        return {}
    from reljudge.analyses.inputs import load_runs

    return dict(load_runs(path))


def _influence(
    run: RunLabels, keys: list[tuple[str, str]], runs: Mapping[str, Any], measure: str, level: int
):
    from reljudge.analyses.humans.ppi import Population, linear_weights, ndcg_weights, true_ndcg

    llm = np.array([run.labels[k] for k in keys])
    pop = Population(keys, llm)
    kind, k, level = _measure(measure, level)
    grades = sorted({int(round(v)) for v in llm})
    if kind == "P":
        names, w = linear_weights(pop, runs, k)
        x = (llm >= level).astype(float)
        scores = w @ x
        best = np.zeros(len(keys))
        for g in grades:
            change = w * (((g >= level) - x)[None, :])
            best = np.maximum(best, swapped_pairs(scores, change))
    else:
        names, w, tw = ndcg_weights(pop, runs, k)
        scores = true_ndcg(pop, w, tw, llm, k)
        best = np.zeros(len(keys))
        t_of = pop.topic_of
        for g in grades:
            # first-order change of each system's nDCG: the DCG term only (the ideal DCG moves
            # all systems of the topic alike and seldom swaps a pair)
            ideal = _ideal_per_topic(pop, llm, k)
            change = w * ((g - llm)[None, :]) / np.where(ideal[t_of] > 0, ideal[t_of], np.inf)[None, :]
            change = change * tw[:, t_of]
            best = np.maximum(best, swapped_pairs(scores, change))
    if not names:
        raise InputError("no system of --runs ranks a topic of the run")
    return best, len(names)


def _ideal_per_topic(pop: Any, labels: np.ndarray, k: int) -> np.ndarray:
    from reljudge.analyses.humans.ppi import idcg

    grades = int(np.nanmax(labels)) + 1
    counts = np.zeros((len(pop.topics), grades))
    g = np.clip(np.floor(labels + 0.5).astype(int), 0, grades - 1)
    np.add.at(counts, (pop.topic_of, g), 1.0)
    return idcg(counts, k)[0]


def select(
    run_spec: str | Path,
    *,
    strategy: str,
    budget: int,
    seed: int = 0,
    mode: str = "post-edit",
    runs: str | Path | None = None,
    measure: str = "nDCG@10",
    relevance_level: int = 2,
    members: Sequence[str | Path] = (),
    allocation: str = "proportional",
    depth: int | None = None,
    top_share: float = 0.8,
    method: str | None = None,
    dataset: str | None = None,
    topics: str | Path | None = None,
    corpus: str | Path | None = None,
    texts: bool = True,
    scale: tuple[int, int] | None = None,
) -> Selection:
    """Choose ``budget`` items of the run for people to check (`reljudge.analyses.humans.design`).

    ``scale`` (lo, hi): the grades people may give. None: every whole grade from 0 (or the run's
    lowest, if lower) to the run's highest label -- a run that never gave a 3 gives people no 3,
    so give the method's scale when it is wider than what the run used (printed either way)."""
    from reljudge.records import utc_now

    if strategy not in STRATEGIES:
        raise InputError(f"unknown strategy {strategy!r}; choose from {', '.join(STRATEGIES)}")
    if budget < 1:
        raise InputError(f"--budget must be at least 1, got {budget}")
    run = load_run_labels(run_spec, method)
    keys = run.keys()
    if depth is not None and (runs is None or depth < 1):
        raise InputError("--depth K needs the systems' runs (--runs DIR) and K >= 1")
    if allocation == "top" and depth is None:
        raise InputError("--allocation top needs --depth K and --runs DIR")
    if not 0 < top_share < 1:
        raise InputError(f"--top-share must be between 0 and 1, got {top_share}")
    if strategy == "stratified":
        strata = _strata(run, keys, depth, _load_runs(runs) if depth is not None else {})
        chosen: Chosen = stratified_sample(strata, budget, seed, allocation, top_share)
    elif strategy == "uncertainty":
        member_sets = [load_run_labels(m).labels for m in members]
        scored = [
            uncertainty_score(
                run.extras.get(k, {}),
                [run.labels[k], *(m.get(k) for m in member_sets)] if member_sets else (),
            )
            for k in keys
        ]
        if not any(s for s, _ in scored):
            raise InputError(
                "no uncertainty signal: the records have no grade distributions (log-probabilities) or "
                "repeated samples, and no --members were given",
                run.path,
            )
        chosen = top_by_score(keys, [s for s, _ in scored], [w for _, w in scored], budget, seed, "uncertain")
    else:
        if runs is None:
            raise InputError("--strategy influence needs the systems' runs (--runs DIR)")
        flips, systems = _influence(run, keys, _load_runs(runs), measure, relevance_level)
        reasons = [
            f"changing its label swaps {int(f)} of {systems * (systems - 1) // 2} system pairs ({measure})"
            for f in flips
        ]
        chosen = top_by_score(keys, flips.tolist(), reasons, budget, seed, "influential")
    picked = [keys[i] for i in chosen.items]
    notes: list[str] = []
    queries: dict[str, str] = {}
    passages: dict[str, str] = {}
    if texts:
        queries, passages, notes = texts_for(run, picked, dataset=dataset, topics=topics, corpus=corpus)
    rows = []
    for j, key in enumerate(picked):
        qid, docid = key
        label = run.labels[key]
        rows.append(
            {
                "item": f"{qid}\t{docid}",
                "qid": qid,
                "docid": docid,
                "query": queries.get(qid),
                "text": passages.get(docid),
                "llm_label": int(label) if float(label).is_integer() else label,
                "llm_answer": run.answers.get(key),
                "stratum": chosen.stratum[j],
                "inclusion_prob": chosen.inclusion[j],
                "why": chosen.why[j],
            }
        )
    # a seeded random order: a person who stops part-way has checked a random part of each stratum
    order = (
        np.random.default_rng(seed + 1).permutation(len(rows))
        if strategy == "stratified"
        else range(len(rows))
    )
    rows = [rows[int(i)] for i in order]
    whole = [int(v) for v in run.labels.values() if float(v).is_integer()]
    if scale is None:
        lo, hi = min([0, *whole]), max([0, *whole])
    else:
        lo, hi = scale
        outside = sorted({v for v in whole if not lo <= v <= hi})
        if outside:
            raise InputError(
                f"--scale {lo}-{hi}: the run has labels outside it ({', '.join(map(str, outside[:5]))})",
                run.path,
            )
    grades = list(range(lo, hi + 1))
    notes.append(
        f"people grade on {lo}-{hi} ("
        + ("--scale" if scale is not None else "from 0 to the run's highest label; --scale LO-HI to widen it")
        + ")"
    )
    header = {
        "reljudge_task": 1,
        "run": str(run_spec),
        "run_fingerprint": run.fingerprint,
        "strategy": strategy,
        "seed": seed,
        "budget": budget,
        "scale": grades,
        "scale_names": None,
        "mode": mode,
        "strata": chosen.strata,
        "stratify_by": ("llm_label" if depth is None else "depth+llm_label")
        if strategy == "stratified"
        else strategy,
        "allocation": allocation if strategy == "stratified" else None,
        "depth": depth,
        "runs": str(runs) if runs is not None else None,
        "method": run.method or None,
        "created": utc_now(),
    }
    if strategy == "influence":
        header.update(measure=measure, relevance_level=relevance_level)
    return Selection(header, rows, notes)


def _strata(
    run: RunLabels, keys: Sequence[tuple[str, str]], depth: int | None, runs: Mapping[str, Any]
) -> list[str]:
    """Every item's stratum: its LLM label, and with a depth whether a system ranks it that high."""
    if depth is None:
        return [label_stratum(run.labels[k]) for k in keys]
    from reljudge.metrics.measures import trec_eval_order

    if not runs:
        raise InputError("no run in --runs")
    shallow = {(q, d) for r in runs.values() for q, docs in r.items() for d in trec_eval_order(docs)[:depth]}
    return [depth_stratum(run.labels[k], k in shallow, depth) for k in keys]


def dry_run_lines(sel: Selection) -> list[str]:
    out = [f"strategy {sel.header['strategy']}, seed {sel.header['seed']}, budget {sel.header['budget']}:"]
    for name, s in sel.header["strata"].items():
        pi = s["sampled"] / s["size"] if s["size"] else 0.0
        out.append(f"  {name}: {s['sampled']} of {s['size']} items (inclusion probability {pi:.4g})")
    total = sum(s["sampled"] for s in sel.header["strata"].values())
    out.append(f"  total: {total} items for people to check")
    short = [n for n, v in sel.header["strata"].items() if v["sampled"] < min(2, v["size"])]
    if sel.header["strategy"] == "stratified" and short:
        need = sum(min(2, v["size"]) for v in sel.header["strata"].values())
        out.append(
            f"  note: {', '.join(short)} get fewer than 2 items: judge estimate needs 2 of each stratum "
            f"(a budget of at least {need})"
        )
    return out


# --- estimates -------------------------------------------------------------------------------


@dataclass
class EstimateReport:
    header: dict[str, Any]
    labelled: int
    strata: dict[str, dict[str, int]]
    level: float
    relevance_level: int
    share: dict[str, float]
    systems: dict[str, dict[str, dict[str, float]]]
    ranking: dict[str, dict[str, float]]
    budgets: list[dict[str, Any]]
    notes: list[str]

    def as_dict(self) -> dict[str, Any]:
        return {
            "task": self.header,
            "labelled_by_people": self.labelled,
            "strata": self.strata,
            "coverage": self.level,
            "relevance_level": self.relevance_level,
            "relevant_share": self.share,
            "systems": self.systems,
            "ranking": self.ranking,
            "budgets": self.budgets,
            "notes": self.notes,
        }


def _check_design(
    task: Task, run: RunLabels, keys: list[tuple[str, str]], runs: Mapping[str, Any]
) -> list[str]:
    """The strata of every item of the run, checked against the task's header."""
    header = task.header
    if header.get("strategy") != "stratified" or header.get("stratify_by") not in (
        "llm_label",
        "depth+llm_label",
    ):
        raise InputError(
            f"the task's items were chosen by {header.get('strategy')!r}, not at random: they find "
            "disagreements but give no unbiased estimate (select with --strategy stratified)",
            task.path,
            1,
        )
    depth = header.get("depth")
    if depth is not None and not runs:
        raise InputError(
            f"the task's strata use the systems' top {depth}: give their runs (--runs DIR)", task.path, 1
        )
    strata = _strata(run, keys, depth, runs)
    sizes: dict[str, int] = {}
    for s in strata:
        sizes[s] = sizes.get(s, 0) + 1
    want = {name: int(v.get("size", -1)) for name, v in header["strata"].items()}
    if sizes != want:
        raise InputError(
            f"the run's strata {sizes} are not the task's {want}: the task was not selected from this run"
            + (" and these runs" if depth is not None else ""),
            task.path,
            1,
        )
    return strata


def estimate(
    task: Task,
    assessments: Sequence[str | Path],
    *,
    run_spec: str | Path | None = None,
    runs: str | Path | None = None,
    measures: Sequence[str] = DEFAULT_MEASURES,
    relevance_level: int = 2,
    level: float = 0.95,
) -> EstimateReport:
    """Combined (PPI++) and human-only estimates from a task, its assessments and the run."""
    from reljudge.analyses.humans.ppi import (
        Design,
        Population,
        estimate_linear,
        estimate_ndcg,
        estimate_share,
        linear_weights,
        ndcg_weights,
    )

    header = task.header
    spec = run_spec if run_spec is not None else header["run"]
    run = load_run_labels(spec, header.get("method"))
    if run.fingerprint != header["run_fingerprint"]:
        raise InputError(
            f"the run's labels ({run.path}) changed since the task was selected (fingerprint "
            f"{run.fingerprint[:12]} is not the task's {str(header['run_fingerprint'])[:12]})",
            task.path,
            1,
        )
    keys = run.keys()
    system_runs = _load_runs(runs)
    strata = _check_design(task, run, keys, system_runs)
    for it in task.items:
        if (it["qid"], it["docid"]) not in run.labels:
            raise InputError(f"item {it['qid']} {it['docid']} is not a labelled item of the run", task.path)
    found = read_assessments(assessments, task)
    labels = human_labels(found)
    notes = []
    names = sorted(set(strata))
    index = {k: i for i, k in enumerate(keys)}
    human = np.full(len(keys), np.nan)
    for item, label in labels.items():
        qid, docid = item.split("\t", 1)
        human[index[(qid, docid)]] = label
    stratum = np.array([names.index(s) for s in strata], dtype=np.int64)
    design = Design(stratum, human, names)
    chosen = {name: int(v.get("sampled", 0)) for name, v in header["strata"].items()}
    partial = [n for h, n in enumerate(names) if design.sampled[h] < chosen.get(n, 0)]
    if partial:
        notes.append(
            f"not every chosen item is labelled yet (strata {', '.join(partial)}): the labelled ones are "
            "taken as a random part of their stratum (the task lists its items in random order)"
        )
    try:
        design.check()
    except ValueError as err:
        raise InputError(f"{err}; label more items of the task", task.path) from None
    llm = np.array([run.labels[k] for k in keys])
    pop = Population(keys, llm)
    share = estimate_share(llm, human, design, relevance_level, level=level).as_dict()
    systems: dict[str, dict[str, dict[str, float]]] = {}
    ranking: dict[str, dict[str, float]] = {}
    for m in measures if system_runs else ():
        kind, k, rel = _measure(m, relevance_level)
        if kind == "P":
            sys_names, w = linear_weights(pop, system_runs, k)
            x_h = np.where(np.isnan(human), 0.0, (human >= rel).astype(float))
            est = estimate_linear(w, (llm >= rel).astype(float), x_h, design, level=level, bounds=(0.0, 1.0))
        else:
            sys_names, w, tw = ndcg_weights(pop, system_runs, k)
            est = estimate_ndcg(pop, w, tw, design, k, level=level)
        if not sys_names:
            raise InputError("no system of --runs ranks a topic of the run", runs)
        for name, e in zip(sys_names, est, strict=True):
            systems.setdefault(name, {})[m] = e.as_dict()
        ranking[m] = _ranking(est)
    n = int(design.mask.sum())
    widths = {
        "relevant share": (share["high"] - share["low"], share["human_only_high"] - share["human_only_low"])
    }
    for m in ranking:
        rows = [systems[name][m] for name in systems if m in systems[name]]
        widths[f"mean {m}"] = (
            float(np.mean([r["high"] - r["low"] for r in rows])),
            float(np.mean([r["human_only_high"] - r["human_only_low"] for r in rows])),
        )
    budgets = _budget_table(design, widths, n)
    return EstimateReport(
        header, n, {nm: {"size": int(design.sizes[h]), "labelled": int(design.sampled[h])} for h, nm in enumerate(names)},
        level, relevance_level, share, systems, ranking, budgets, notes,
    )  # fmt: skip


def _ranking(est: Sequence[Any]) -> dict[str, float]:
    """How the systems' order by the combined estimates compares with the LLM-only order: Kendall
    τ-b, and the share of system pairs whose combined intervals do not overlap."""
    from reljudge.metrics.ranking import kendall_tau_b_batch

    x = np.array([[e.value] for e in est])
    y = np.array([[e.llm_only] for e in est])
    tau = float(kendall_tau_b_batch(x, y)[0]) if len(est) > 1 else float("nan")
    pairs = separated = 0
    for a in range(len(est)):
        for b in range(a + 1, len(est)):
            pairs += 1
            separated += est[a].low > est[b].high or est[b].low > est[a].high
    return {"kendall_tau_b_vs_llm_only": tau, "pairs": pairs, "pairs_separated": separated}


def _budget_table(design: Any, widths: Mapping[str, tuple[float, float]], n: int) -> list[dict[str, Any]]:
    """Projected interval widths (combined, human-only) of each target at other budgets, same
    allocation: a width scales with ``√(1/n − 1/N)`` -- a projection from this sample's
    variances, not a measurement (the simulation measures them: docs/guides/humans.md); the cut
    to [0, 1] is not projected."""
    big = float(design.sizes.sum())
    out: list[dict[str, Any]] = []
    if n < 2 or n >= big:
        return out
    base = math.sqrt(1 / n - 1 / big)
    for factor in (0.25, 0.5, 1, 2, 4):
        m = int(round(n * factor))
        if m < 2 or m >= big:
            continue
        scale = math.sqrt(1 / m - 1 / big) / base
        out.append(
            {
                "labels": m,
                "widths": {
                    t: {"combined": w * scale, "human_only": h * scale} for t, (w, h) in widths.items()
                },
            }
        )
    return out


def _measured(measure: str, report: EstimateReport) -> str:
    """What the simulation measured for intervals of this kind (`ppi.SIMULATED_COVERAGE`)."""
    from reljudge.analyses.humans.ppi import SIMULATED_COVERAGE

    found = SIMULATED_COVERAGE.get(measure)
    if found is None or abs(report.level - 0.95) > 1e-9:
        return f"{measure}: the coverage of these intervals was not simulated at this level"
    shares = ", ".join(f"{v:.0%} with {n}" for n, v in found.items())
    where = "DL19-21, the lowest" if measure == "relevant share" else "DL21's 63 runs"
    return (
        f"{measure}: 95% intervals covered the full-human value in the simulation ({where}; stratified "
        f"samples of 100 / 300 / 1000 labels, bench/bench_humans.py) {shares}"
    )


def summary(report: EstimateReport) -> str:
    from reljudge.analyses.text_table import format_table

    pct = f"{report.level:.0%}"
    lines = [
        f"{report.labelled} items labelled by people; strata (labelled / size): "
        + ", ".join(f"{k} {v['labelled']}/{v['size']}" for k, v in report.strata.items()),
        f"relevant = grade >= {report.relevance_level}. {pct} intervals (docs/guides/humans.md):",
        "  relevant share, P@k: PPI (lambda = 1), normal, model-assisted stratified variance;",
        "  nDCG@k: PPI (lambda = 1), the union of a stratified bootstrap's percentile interval (200",
        "  replicates) and a model-assisted delta-method one (conservative);",
        "  'human only': the people's labels of the same sample alone (lambda = 0; its strata still",
        "  come from the LLM labels), design-based variance (P@k) or the bootstrap (nDCG@k).",
        "",
    ]
    s = report.share
    lines.append(
        format_table(
            ["target", "LLM only", "combined", f"{pct} interval", "human only", f"{pct} interval"],
            [
                [
                    "relevant share",
                    s["llm_only"],
                    s["estimate"],
                    f"[{s['low']:.3f}, {s['high']:.3f}]",
                    s["human_only"],
                    f"[{s['human_only_low']:.3f}, {s['human_only_high']:.3f}]",
                ]
            ],
        )
    )
    lines.append(_measured("relevant share", report))
    for m, rank in report.ranking.items():
        rows = []
        for name in sorted(report.systems, key=lambda n: -report.systems[n][m]["estimate"]):
            e = report.systems[name][m]
            rows.append(
                [name, e["llm_only"], e["estimate"], f"[{e['low']:.3f}, {e['high']:.3f}]", e["human_only"],
                 f"[{e['human_only_low']:.3f}, {e['human_only_high']:.3f}]", e["lambda"]]
            )  # fmt: skip
        lines += ["", f"{m} (relevance level {report.relevance_level} for binary measures):"]
        lines.append(
            format_table(
                [
                    "system",
                    "LLM only",
                    "combined",
                    f"{pct} interval",
                    "human only",
                    f"{pct} interval",
                    "lambda",
                ],
                rows,
            )
        )
        lines.append(_measured(m, report))
        lines.append(
            f"ranking by the combined {m} vs LLM only: Kendall tau-b {rank['kendall_tau_b_vs_llm_only']:.3f}; "
            f"{rank['pairs_separated']} of {rank['pairs']} system pairs with intervals apart"
        )
    if report.budgets:
        targets = list(report.budgets[0]["widths"])
        lines += [
            "",
            "interval width by number of people's labels (projected from this sample: combined / human only):",
        ]
        lines.append(
            format_table(
                ["labels", *targets],
                [
                    [
                        b["labels"],
                        *(
                            f"{b['widths'][t]['combined']:.3f} / {b['widths'][t]['human_only']:.3f}"
                            for t in targets
                        ),
                    ]
                    for b in report.budgets
                ],
            )
        )
    lines += [f"note: {n}" for n in report.notes]
    return "\n".join(lines)
