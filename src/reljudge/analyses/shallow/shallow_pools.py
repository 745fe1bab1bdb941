"""Shallow pools (thesis §3.1.3): per query, the top passage of every run plus q*.

A pool is ``{docid: contributors}`` in a fixed order (q* first, then the runs' top passages in
run-name order); the contributors are the runs whose top passage it is, and `REFERENCE` (the
pseudo-run "qrels") for q*. Pure: the runs arrive as rankings.
"""

from __future__ import annotations

import random
import statistics
from collections.abc import Iterable, Mapping, Sequence

#: the pseudo-run whose top passage is q*
REFERENCE = "qrels"

Pools = dict[str, dict[str, list[str]]]


def top_passages(rankings: Mapping[str, Mapping[str, Sequence[str]]]) -> dict[str, dict[str, str]]:
    """``{run: {qid: top docid}}`` from ``{run: {qid: ranked docids}}`` (empty rankings left out)."""
    return {run: {q: docs[0] for q, docs in by_q.items() if docs} for run, by_q in rankings.items()}


def build_pools(top: Mapping[str, Mapping[str, str]], references: Mapping[str, str]) -> Pools:
    """The pool of every query with a reference: q* (contributor `REFERENCE`) and each run's top
    passage (runs in name order). A run without the query contributes nothing to it."""
    if REFERENCE in top:
        raise ValueError(f"a run may not be named {REFERENCE!r}: that is the pseudo-run of q*")
    pools: Pools = {}
    for qid, ref in references.items():
        pool: dict[str, list[str]] = {ref: [REFERENCE]}
        for run in sorted(top):
            doc = top[run].get(qid)
            if doc is not None:
                pool.setdefault(doc, []).append(run)
        pools[qid] = pool
    return pools


def missing_queries(top: Mapping[str, Mapping[str, str]], queries: Iterable[str]) -> dict[str, list[str]]:
    """``{run: [queries it does not rank]}`` for the runs that miss some."""
    wanted = list(queries)
    out = {run: [q for q in wanted if q not in by_q] for run, by_q in top.items()}
    return {run: qs for run, qs in out.items() if qs}


def pool_stats(pools: Mapping[str, Mapping[str, object]]) -> dict[str, float | int | dict[int, int]]:
    """Pool-size statistics: queries, size-1 pools, mean, median, range, histogram, all pairs."""
    sizes = [len(p) for p in pools.values()]
    if not sizes:
        return {"queries": 0}
    hist: dict[int, int] = {}
    for s in sizes:
        hist[s] = hist.get(s, 0) + 1
    return {
        "queries": len(sizes),
        "size_1": hist.get(1, 0),
        "mean": statistics.fmean(sizes),
        "median": statistics.median(sizes),
        "min": min(sizes),
        "max": max(sizes),
        "passages": sum(sizes),
        "pairs": sum(s * (s - 1) // 2 for s in sizes),
        "histogram": dict(sorted(hist.items())),
    }


def sample_queries(
    pools: Mapping[str, Mapping[str, object]], n: int | None, *, min_pool: int = 2, seed: int = 0
) -> list[str]:
    """A seeded sample of ``n`` queries (all when ``n`` is None or not smaller) among those whose
    pool has at least ``min_pool`` passages, in pool order."""
    eligible = [q for q, p in pools.items() if len(p) >= min_pool]
    if n is None or n >= len(eligible):
        return eligible
    chosen = set(random.Random(seed).sample(sorted(eligible), n))
    return [q for q in eligible if q in chosen]


def unordered_pairs(
    pools: Mapping[str, Mapping[str, object]], queries: Iterable[str]
) -> list[tuple[str, str, str]]:
    """Every unordered pair of each query's pool once, ``(qid, a, b)`` in pool order."""
    out: list[tuple[str, str, str]] = []
    for qid in queries:
        docs = list(pools[qid])
        out.extend((qid, docs[i], docs[j]) for i in range(len(docs)) for j in range(i + 1, len(docs)))
    return out


def without_run(pools: Pools, run: str) -> Pools:
    """The pools with every passage contributed only by ``run`` removed (leave-one-run-out)."""
    return {q: {d: c for d, c in pool.items() if c != [run]} for q, pool in pools.items()}


def top_of_pool(pools: Mapping[str, Mapping[str, list[str]]]) -> dict[str, dict[str, str]]:
    """``{run: {qid: docid}}`` from a pool's contributors (the pseudo-run ``qrels`` included)."""
    out: dict[str, dict[str, str]] = {}
    for qid, pool in pools.items():
        for docid, contributors in pool.items():
            for run in contributors:
                out.setdefault(run, {})[qid] = docid
    return out
