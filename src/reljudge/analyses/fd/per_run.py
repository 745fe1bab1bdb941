"""FD@k: the Fréchet-distance evaluation of a run against judged relevant passages
(Arabzadeh & Clarke, EACL 2024). Lower is better.

- **Reference set**: the judged relevant passages (grade ≥ ``min_grade``, default 2 as for
  TREC DL passages) of all topics, pooled; with ``max_per_topic=K`` at most K per topic,
  highest grade first, a seeded random choice within a grade (the paper's balancing).
- **Retrieved set**: the top-k passages of each of the same topics (trec_eval order: score
  descending, ties by docid descending), pooled; with ``unjudged_only=True`` the first k
  passages that have no judgment at all for the topic ("unlabeled retrieved results", URR).
- Topics: those with at least one reference passage and a ranking in the run.
- Passages without a vector (no embedding, or no text for an encoder) are left out and
  **reported** in the result (``missing_reference`` / ``missing_retrieved``).
- Intervals over topics (``n_boot > 0``; `reljudge.analyses.fd.resamples`): each run's FD by the
  delete-one-topic jackknife (FD ± z·se), the agreement with the measure by random halves of the
  topics (θ ± z·se, the delete-d jackknife). No topic is ever duplicated, so FD measures the same
  thing in every resample; both intervals are centred on the estimate and hold it. They describe
  the variation over other sets of as many topics (`INTERVALS`).
- Agreement with the human measure: the ranking measures the registry reports for ``fd``
  (`reljudge.metrics.registry`) between the measure and **−FD** (FD is lower-is-better), so every
  measure -- Kendall τ-b, Spearman, τ_AP -- is positive when the two rankings agree (`ORIENTATION`).

Loading the vectors and encoding passages is `reljudge.analyses.fd.pipeline`; writing the reports
is `reljudge.analyses.fd.files`.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from reljudge.analyses.fd.frechet import frechet_distance
from reljudge.analyses.fd.resamples import (
    fd_weighted,
    half_sample_interval,
    half_samples,
    jackknife_interval,
    leave_one_out,
    subsample_size,
    topic_rows,
)
from reljudge.metrics.ranking import Interval
from reljudge.vectors.embedding_source import EmbeddingSource

Scores = Mapping[str, Mapping[str, float]]

#: how the agreement of a human measure with FD is oriented (stated in fd.json and the tables)
ORIENTATION = "agreement of the measure with -FD (FD is lower-is-better): positive = the rankings agree"

#: how many random-vector draws the random-vector control averages (`_controls`)
RANDOM_DRAWS = 5

#: what the intervals are (stated in fd.json)
INTERVALS = {
    "fd": "FD +- z*se, se = the delete-one-topic jackknife standard error (no topic duplicated)",
    "agreement": "value +- z*se over random subsets of m topics drawn without replacement (delete-d jackknife; "
    "m = n // 2, or more when half the topics would leave the smaller set of FD with fewer vectors than "
    "dimensions while all of them have more; se = sd * sqrt(m / (n - m))), clipped to [-1, 1]",
    "population": "the topic sampling: each interval is for the expected value on another set of as many topics "
    "from the same population (same k, reference rule and vectors) -- the run's expected FD, the expected "
    "agreement. FD depends on the number of topics (biased upward in small samples), and tau on n topics is closer "
    "to 0 than tau between the runs' expected values, so neither is an interval for an infinite topic set. "
    "Centred on the estimate, so it always holds it",
}


def _pct(bounds: tuple[float, float]) -> str:
    return f"{100 * bounds[0]:.1f}-{100 * bounds[1]:.1f} %"


#: the coverage of the nominal 95 % intervals measured by ``bench/bench_fd_coverage.py`` (simulated
#: collections of 53 topics and 12 runs, FD@10 with one reference passage per topic, real-shaped and
#: random vectors), by whether the reference vectors are fewer than the dimensions
SIMULATED_COVERAGE_RANGES = {  # (fewer reference vectors than dimensions) -> what -> (low, high)
    True: {"FD": (0.932, 0.946), "agreement": (0.960, 0.987)},
    False: {"FD": (0.994, 0.996), "agreement": (0.747, 0.960)},
}
SIMULATED_COVERAGE = {
    fewer: f"FD {_pct(ranges['FD'])}, agreement {_pct(ranges['agreement'])} "
    + (
        "(53 reference vectors in 384 dimensions)"
        if fewer
        else "(53 reference vectors in 32 dimensions: the FD interval is conservative, about 1.6 times too "
        "wide; the agreement interval undercovers when FD barely separates the runs)"
    )
    for fewer, ranges in SIMULATED_COVERAGE_RANGES.items()
}


def coverage_note(n_reference: int, dim: int | None) -> str:
    """The simulated coverage that applies to a reference set of ``n_reference`` vectors in ``dim``
    dimensions (`SIMULATED_COVERAGE`), with its source."""
    if not dim:
        return ""
    return f"simulated coverage of nominal 95 %: {SIMULATED_COVERAGE[n_reference < dim]} (bench/bench_fd_coverage.py)"


def relevant_set(
    qrels: Scores, *, min_grade: float = 2, max_per_topic: int | None = None, seed: int = 0
) -> dict[str, list[str]]:
    """Per topic, the judged relevant docids (highest grade first; capped at ``max_per_topic``)."""
    out: dict[str, list[str]] = {}
    for qid in qrels:
        docs = qrels[qid]
        grades = sorted({g for g in docs.values() if g >= min_grade}, reverse=True)
        chosen: list[str] = []
        rng = random.Random(f"{seed}:{qid}")
        for g in grades:
            tier = sorted(d for d, v in docs.items() if v == g)
            if max_per_topic is not None:
                rng.shuffle(tier)
                tier = tier[: max(0, max_per_topic - len(chosen))]
            chosen.extend(tier)
        if chosen:
            out[qid] = chosen
    return out


def retrieved_set(
    run: Scores,
    k: int,
    *,
    topics: Sequence[str] | None = None,
    qrels: Scores | None = None,
    unjudged_only: bool = False,
    exclude: Mapping[str, Sequence[str]] | None = None,
) -> dict[str, list[str]]:
    """Per topic, the top-k docids of the run (or the first k unjudged ones with ``unjudged_only``);
    ``exclude``: per topic, docids removed from the ranking first (the reference-excluded control)."""
    if unjudged_only and qrels is None:
        raise ValueError("unjudged_only needs the qrels")
    out: dict[str, list[str]] = {}
    for qid in topics if topics is not None else list(run):
        docs = run.get(qid)
        if not docs:
            continue
        ranked = sorted(docs, key=lambda d: (docs[d], d), reverse=True)
        if unjudged_only:
            judged = qrels.get(qid, {}) if qrels is not None else {}
            ranked = [d for d in ranked if d not in judged]
        if exclude is not None and exclude.get(qid):
            skip = set(exclude[qid])
            ranked = [d for d in ranked if d not in skip]
        out[qid] = ranked[:k]
    return out


def fd_docids(
    qrels: Scores,
    runs: Mapping[str, Scores],
    *,
    k: int = 10,
    max_per_topic: int | None = None,
    min_grade: float = 2,
    unjudged_only: bool = False,
    seed: int = 0,
    controls: bool = False,
) -> list[str]:
    """Every docid FD@k of these runs can use (reference and retrieved sides), in first-seen order;
    with ``controls`` also those the reference-excluded control reaches (`reljudge.analyses.fd.controls`).

    Lets a caller read only these passages from a large corpus and encode them in one batch.
    """
    reference = relevant_set(qrels, min_grade=min_grade, max_per_topic=max_per_topic, seed=seed)
    needed: dict[str, None] = dict.fromkeys(d for docids in reference.values() for d in docids)
    excludes = [None, reference] if controls and not unjudged_only else [None]
    for run in runs.values():
        topics = [q for q in reference if run.get(q)]
        for exclude in excludes:
            chosen = retrieved_set(
                run, k, topics=topics, qrels=qrels, unjudged_only=unjudged_only, exclude=exclude
            )
            for docids in chosen.values():
                needed.update(dict.fromkeys(docids))
    return list(needed)


def coverage(results: Mapping[str, FDResult]) -> dict[str, int]:
    """How many reference / retrieved passages (summed over runs) had a vector and were used."""
    out = {"retrieved_used": 0, "retrieved_missing": 0}
    for r in results.values():
        out["retrieved_used"] += r.n_retrieved
        out["retrieved_missing"] += len(r.missing_retrieved)
    first = next(iter(results.values()), None)
    out["reference_used"] = first.n_reference if first is not None else 0
    out["reference_missing"] = len(first.missing_reference) if first is not None else 0
    return out


@dataclass
class FDResult:
    fd: float
    n_reference: int
    n_retrieved: int
    topics: list[str]
    missing_reference: list[tuple[str, str]] = field(default_factory=list)
    missing_retrieved: list[tuple[str, str]] = field(default_factory=list)
    interval: Interval | None = None
    replicates: list[float] = field(default_factory=list)

    def as_dict(self) -> dict:
        out: dict[str, object] = {
            "fd": self.fd,
            "n_reference": self.n_reference,
            "n_retrieved": self.n_retrieved,
            "topics": len(self.topics),
            "missing_reference": len(self.missing_reference),
            "missing_retrieved": len(self.missing_retrieved),
        }
        if self.interval is not None:
            out.update(
                ci_low=self.interval.low,
                ci_high=self.interval.high,
                n_boot=self.interval.n_boot,
                ci_method="jackknife",
            )
        return out


def _blocks(
    sets: Mapping[str, list[str]], source: EmbeddingSource, texts: Mapping[str, str] | None
) -> tuple[dict[str, np.ndarray], list[tuple[str, str]]]:
    blocks: dict[str, np.ndarray] = {}
    missing: list[tuple[str, str]] = []
    for qid, docids in sets.items():
        matrix, _, miss = source.lookup(docids, texts)
        missing.extend((qid, d) for d in miss)
        blocks[qid] = matrix
    return blocks, missing


def _stack(blocks: Mapping[str, np.ndarray], topics: Sequence[str]) -> np.ndarray:
    parts = [blocks[q] for q in topics if blocks[q].size]
    return np.concatenate(parts) if parts else np.zeros((0, 0))


def fd_at_k(
    qrels: Scores,
    run: Scores,
    source: EmbeddingSource,
    *,
    k: int = 10,
    max_per_topic: int | None = None,
    min_grade: float = 2,
    unjudged_only: bool = False,
    texts: Mapping[str, str] | None = None,
    n_boot: int = 0,
    level: float = 0.95,
    seed: int = 0,
    draws: Sequence[Sequence[str]] | None = None,
) -> FDResult:
    """FD@k of one run (see the module docstring); ``n_boot > 0`` adds its interval over the
    topics (the delete-one-topic jackknife: `reljudge.analyses.fd.resamples.jackknife_interval`;
    ``n_boot`` only switches it on, the n leave-one-out values are its replicates).

    ``draws``: explicit resamples (lists of topics, a topic listed twice counts twice) whose FD
    are returned as ``replicates`` (e.g. to resample several runs on the same topics); no
    interval is derived from them.
    """
    result, ref_blocks, ret_blocks = _fd_one(qrels, run, source, k=k, max_per_topic=max_per_topic,
                                             min_grade=min_grade, unjudged_only=unjudged_only, texts=texts,
                                             seed=seed)  # fmt: skip
    if (n_boot <= 0 and draws is None) or result.fd != result.fd:
        return result
    x, xt, y, yt = _rows(result.topics, ref_blocks, ret_blocks)
    n = len(result.topics)
    if draws is not None:
        index = {q: i for i, q in enumerate(result.topics)}
        W = np.zeros((len(draws), n))
        for b, sample in enumerate(draws):
            for q in sample:
                if q in index:
                    W[b, index[q]] += 1
        result.replicates = [float(v) for v in fd_weighted(x, xt, y, yt, W)]
        return result
    deleted = fd_weighted(x, xt, y, yt, leave_one_out(n))
    low, high, _ = jackknife_interval(result.fd, deleted, level)
    if low == low:
        result.interval = Interval(result.fd, low, high, n, level)
    result.replicates = [float(v) for v in deleted]
    return result


def _fd_one(
    qrels: Scores,
    run: Scores,
    source: EmbeddingSource,
    *,
    k: int,
    max_per_topic: int | None,
    min_grade: float,
    unjudged_only: bool,
    texts: Mapping[str, str] | None,
    seed: int,
    exclude_reference: bool = False,
) -> tuple[FDResult, dict[str, np.ndarray], dict[str, np.ndarray]]:
    """FD@k of one run without an interval, and its reference and retrieved vectors by topic
    (``exclude_reference``: the run's reference passages removed before its top k is taken)."""
    reference = relevant_set(qrels, min_grade=min_grade, max_per_topic=max_per_topic, seed=seed)
    topics = [q for q in reference if run.get(q)]
    exclude = reference if exclude_reference else None
    retrieved = retrieved_set(
        run, k, topics=topics, qrels=qrels, unjudged_only=unjudged_only, exclude=exclude
    )
    ref_blocks, miss_ref = _blocks({q: reference[q] for q in topics}, source, texts)
    ret_blocks, miss_ret = _blocks(retrieved, source, texts)
    x, y = _stack(ref_blocks, topics), _stack(ret_blocks, topics)
    fd = float("nan") if x.shape[0] < 2 or y.shape[0] < 2 else frechet_distance(x, y)
    result = FDResult(fd, int(x.shape[0]), int(y.shape[0]), topics, miss_ref, miss_ret)
    return result, ref_blocks, ret_blocks


def _rows(
    topics: Sequence[str], ref_blocks: Mapping[str, np.ndarray], ret_blocks: Mapping[str, np.ndarray]
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The reference and retrieved vectors of ``topics`` stacked, each row with its topic index."""
    empty = np.zeros((0, 0))
    x, xt = topic_rows([ref_blocks.get(q, empty) for q in topics])
    y, yt = topic_rows([ret_blocks.get(q, empty) for q in topics])
    return x, xt, y, yt


@dataclass
class FDReport:
    runs: dict[str, FDResult]
    measure: str
    human_measure: dict[str, float]
    agreement: dict[str, float]  # between the measure and −FD (positive = the rankings agree)
    settings: dict
    #: the controls' agreements (`reljudge.analyses.fd.controls`), empty when not computed
    controls: dict = field(default_factory=dict)


def fd_runs(
    qrels: Scores,
    runs: Mapping[str, Scores],
    source: EmbeddingSource,
    *,
    k: int = 10,
    max_per_topic: int | None = None,
    min_grade: float = 2,
    unjudged_only: bool = False,
    texts: Mapping[str, str] | None = None,
    measure: str = "ndcg_cut_10",
    n_boot: int = 0,
    level: float = 0.95,
    seed: int = 0,
    controls: bool = False,
) -> FDReport:
    """FD@k of every run, the human measure of every run, and their ranking agreement.

    ``controls``: also the agreement with FD recomputed on random vectors and with the reference
    passages excluded from the runs (`reljudge.analyses.fd.controls`), in ``FDReport.controls``.

    With ``n_boot > 0``: each run's FD interval (delete-one-topic jackknife) and, over ``n_boot``
    random halves of the topics shared by every run (each run's FD and measure on the same
    halves), the intervals of its agreement with the measure (see the module docstring).
    """
    from reljudge.metrics.measures import system_measures
    from reljudge.metrics.registry import ranking_measures

    reference = relevant_set(qrels, min_grade=min_grade, max_per_topic=max_per_topic, seed=seed)
    topics = [q for q in reference if all(run.get(q) for run in runs.values())]
    prepare = getattr(source, "prepare", None)
    if prepare is not None and texts is not None:  # encode everything in one batched pass
        needed = fd_docids(
            qrels,
            runs,
            k=k,
            max_per_topic=max_per_topic,
            min_grade=min_grade,
            unjudged_only=unjudged_only,
            seed=seed,
            controls=controls,
        )
        prepare(needed, texts)
    options = dict(k=k, max_per_topic=max_per_topic, min_grade=min_grade, unjudged_only=unjudged_only,
                   texts=texts, seed=seed)  # fmt: skip
    found = {name: _fd_one(qrels, run, source, **options) for name, run in runs.items()}  # type: ignore[arg-type]
    results = {name: r for name, (r, _, _) in found.items()}
    _check_coverage(results, source)
    per_topic = system_measures(qrels, runs, measure)
    human = {name: float(np.mean(list(v.values()))) if v else float("nan") for name, v in per_topic.items()}
    fds = {name: r.fd for name, r in results.items() if r.fd == r.fd}
    valid = [n for n in fds if human[n] == human[n]]
    measures = ranking_measures("fd")
    agreement = _agreement(human, fds, measures)
    m_topics = None
    if n_boot > 0 and topics and valid:
        for n in valid:  # each run's FD: the delete-one-topic jackknife over its own topics
            r = results[n]
            x, xt, y, yt = _rows(r.topics, found[n][1], found[n][2])
            deleted = fd_weighted(x, xt, y, yt, leave_one_out(len(r.topics)))
            low, high, _ = jackknife_interval(r.fd, deleted, level)
            if low == low:
                r.interval = Interval(r.fd, low, high, len(r.topics), level)
            r.replicates = [float(v) for v in deleted]
        with_interval = [m for m in measures if m.interval] if len(valid) >= 2 else []
        if with_interval and len(topics) >= 4:
            # the agreement: every run on the same random halves of the common topics
            rows = {n: _rows(topics, found[n][1], found[n][2]) for n in valid}
            smaller = min(min(len(x), len(y)) for x, _, y, _ in rows.values())
            dims = max(x.shape[1] for x, _, _, _ in rows.values())
            m_topics = subsample_size(len(topics), smaller, dims)
            W = half_samples(len(topics), n_boot, seed, m=m_topics)
            fm = np.stack([fd_weighted(*rows[n], W) for n in valid])
            H = np.array([[per_topic[n].get(q, 0.0) for q in topics] for n in valid])
            hm = H @ W.T / W.sum(axis=1)
            for m in with_interval:
                reps = m.replicates(hm, -fm)
                low, high, _ = half_sample_interval(
                    agreement[m.name], reps, len(topics), level, bounds=(-1.0, 1.0), m=m_topics
                )
                if low == low:
                    agreement.update(zip(m.interval_columns, (low, high), strict=True))
    dim = next((b.shape[1] for _, ref, _ in found.values() for b in ref.values() if b.size), None)
    n_reference = next((r.n_reference for r in results.values() if r.n_reference), 0)
    intervals = {**INTERVALS, "simulated_coverage": coverage_note(n_reference, dim)}
    found_controls = (
        _controls(qrels, runs, source, human, measures, unjudged_only, options) if controls else {}
    )
    settings = {
        "k": k,
        "max_per_topic": max_per_topic,
        "min_grade": min_grade,
        "unjudged_only": unjudged_only,
        "encoder": getattr(source, "name", "?"),
        "n_boot": n_boot,
        "seed": seed,
        "topics": len(topics),
        "orientation": ORIENTATION,
        "dim": dim,
        **({"intervals": intervals, "level": level, "subsample_topics": m_topics} if n_boot > 0 else {}),
    }
    return FDReport(results, measure, human, agreement, settings, found_controls)


def _agreement(human: Mapping[str, float], fds: Mapping[str, float], measures: Sequence) -> dict[str, float]:
    """``runs`` and every measure between ``human`` and −FD over the runs valued in both."""
    valid = [n for n in fds if fds[n] == fds[n] and n in human and human[n] == human[n]]
    out: dict[str, float] = {"runs": len(valid)}
    if len(valid) >= 2:
        hx = {n: human[n] for n in valid}
        fx = {n: -fds[n] for n in valid}  # −FD: higher is better, as for the measure
        out.update({m.name: m(hx, fx) for m in measures})
    return out


def _controls(
    qrels: Scores,
    runs: Mapping[str, Scores],
    source: EmbeddingSource,
    human: Mapping[str, float],
    measures: Sequence,
    unjudged_only: bool,
    options: Mapping,
) -> dict[str, dict]:
    """The agreement of the measure with −FD under each control (`reljudge.analyses.fd.controls`)."""
    from reljudge.analyses.fd.controls import CONTROLS, RandomVectors

    out: dict[str, dict] = {}
    draws = []  # one random-vector FD per run and draw: one draw alone varies a lot
    for draw in range(RANDOM_DRAWS):
        shuffled = RandomVectors(source, seed=options.get("seed", 0) * RANDOM_DRAWS + draw)
        fds = {name: _fd_one(qrels, run, shuffled, **options)[0].fd for name, run in runs.items()}
        draws.append((fds, _agreement(human, fds, measures)))
    random: dict = {"description": CONTROLS["random_vectors"], "draws": RANDOM_DRAWS}
    for key in draws[0][1]:
        values = [a[key] for _, a in draws if key in a]
        random[key] = float(np.mean(values))
        if key != "runs":
            random[f"{key}_min"], random[f"{key}_max"] = float(np.min(values)), float(np.max(values))
    random["fd"] = {name: float(np.mean([f[name] for f, _ in draws])) for name in runs}
    out["random_vectors"] = random
    if unjudged_only:
        out["reference_excluded"] = {
            "description": "the same as FD itself: with --urr no judged passage is retrieved",
        }
    else:
        fds = {
            name: _fd_one(qrels, run, source, exclude_reference=True, **options)[0].fd
            for name, run in runs.items()
        }
        out["reference_excluded"] = {
            "description": CONTROLS["reference_excluded"],
            **_agreement(human, fds, measures),
            "fd": fds,
        }
    return out


def _check_coverage(results: Mapping[str, FDResult], source: EmbeddingSource) -> None:
    """An `InputError` when not one passage FD looked up has a vector: every FD would be NaN,
    which says nothing about the runs and points at mismatched ids or the wrong embeddings."""
    from reljudge.errors import InputError

    found = sum(r.n_reference + r.n_retrieved for r in results.values())
    missing = {d for r in results.values() for _, d in (*r.missing_reference, *r.missing_retrieved)}
    if found == 0 and missing:
        example = ", ".join(sorted(missing)[:3])
        raise InputError(
            f"none of the {len(missing)} passages FD needs has a vector in {getattr(source, 'name', 'the embeddings')} "
            f"(e.g. {example}): do the embedding ids (or the corpus) match the docids of the qrels and runs?"
        )


def fd_answers(
    qrels: Scores,
    answers: Mapping[str, Mapping[str, str]],
    source: EmbeddingSource,
    *,
    max_per_topic: int | None = None,
    min_grade: float = 2,
    texts: Mapping[str, str] | None = None,
    seed: int = 0,
) -> dict[str, FDResult]:
    """FD of generated answers (spec S3 c): each system's answers (``{system: {qid: vector id}}``)
    are its retrieved set with k = 1, against the same reference set as `fd_runs` builds."""
    options = dict(max_per_topic=max_per_topic, min_grade=min_grade, texts=texts, seed=seed)
    return {
        system: fd_at_k(qrels, {q: {aid: 1.0} for q, aid in by_qid.items()}, source, k=1, **options)  # type: ignore[arg-type]
        for system, by_qid in answers.items()
    }
