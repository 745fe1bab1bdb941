"""Clarke's compatibility: how close a run is to the ideal ranking a judgment set implies.

Definitions (as in ``claclark/Compatibility/compatibility.py`` with ``NORMALIZE = True``):

- **RBO** to depth D (default 1000) with persistence p, *not* extrapolated:
  ``RBO(R, I) = Σ_{d=1..D} p^{d-1} |R[:d] ∩ I[:d]| / d  /  Σ_{d=1..D} p^{d-1}``; a prefix
  stops growing once its list ends.
- **Ideal ranking** of a topic: every document with score > 0, by score descending; documents
  with equal scores in the order the run ranks them; documents the run did not retrieve last,
  in the judgment set's order.
- **Run order**: score descending, ties by docid *ascending* (Clarke's script; trec_eval
  breaks ties the other way). ``tie_break="trec_eval"`` selects docid descending.
- **compat(R) = RBO(R, I) / RBO(I, I)**; the mean is over the run's topics that have at least
  one positive judgment. Any score scale works (grades, floats, win counts).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

import numpy as np

Scores = Mapping[str, Mapping[str, float]]
TieBreak = Literal["clarke", "trec_eval"]

DEFAULT_P = 0.9
DEFAULT_DEPTH = 1000


@lru_cache(maxsize=32)
def _weights(p: float, depth: int) -> tuple[np.ndarray, float]:
    d = np.arange(1, depth + 1, dtype=float)
    w = p ** (d - 1)
    return w / d, float(w.sum())


def rbo_clarke(
    run: Sequence[str], ideal: Sequence[str], p: float = DEFAULT_P, depth: int = DEFAULT_DEPTH
) -> float:
    """Clarke's truncated, non-extrapolated RBO of two rankings (lists without duplicates)."""
    if not 0.0 < p < 1.0:
        raise ValueError(f"p must be in (0, 1), got {p}")
    w_over_d, norm = _weights(p, depth)
    pos_ideal = {doc: i for i, doc in enumerate(ideal[:depth])}
    # a document enters the overlap at depth max(rank in run, rank in ideal) + 1
    enters = [max(i, pos_ideal[doc]) for i, doc in enumerate(run[:depth]) if doc in pos_ideal]
    if not enters:
        return 0.0
    hist = np.bincount(np.asarray(enters), minlength=depth)[:depth]
    overlap = np.cumsum(hist)
    return float(overlap @ w_over_d / norm)


@lru_cache(maxsize=4096)
def self_rbo(length: int, p: float = DEFAULT_P, depth: int = DEFAULT_DEPTH) -> float:
    """RBO of a ranking of ``length`` documents with itself (0.256 for one document at p=0.9)."""
    w_over_d, norm = _weights(p, depth)
    overlap = np.minimum(np.arange(1, depth + 1), length)
    return float(overlap @ w_over_d / norm)


def run_order(scores: Mapping[str, float], tie_break: TieBreak = "clarke") -> list[str]:
    """Docids by score descending; ties by docid ascending (Clarke) or descending (trec_eval)."""
    if tie_break == "clarke":
        return sorted(scores, key=lambda d: (-scores[d], d))
    if tie_break == "trec_eval":
        return sorted(scores, key=lambda d: (scores[d], d), reverse=True)
    raise ValueError(f"tie_break must be 'clarke' or 'trec_eval', got {tie_break!r}")


def ideal_ranking(ranking: Sequence[str], judgments: Mapping[str, float]) -> list[str]:
    """The ideal ranking for one topic given the run's ranking (see the module docstring)."""
    position = {doc: i for i, doc in enumerate(ranking)}
    unretrieved = len(ranking)
    positive = [(doc, float(s)) for doc, s in judgments.items() if float(s) > 0.0]
    # stable sorts: judgment-set order < run position < score
    positive.sort(key=lambda item: position.get(item[0], unretrieved))
    positive.sort(key=lambda item: item[1], reverse=True)
    return [doc for doc, _ in positive]


@dataclass
class CompatibilityResult:
    per_topic: dict[str, float]

    @property
    def mean(self) -> float:
        return float(np.mean(list(self.per_topic.values()))) if self.per_topic else float("nan")


def topic_compatibility(
    ranking: Sequence[str],
    judgments: Mapping[str, float],
    *,
    p: float = DEFAULT_P,
    depth: int = DEFAULT_DEPTH,
    normalize: bool = True,
) -> float | None:
    """Compatibility of one topic's ranking, built explicitly from the ideal ranking
    (None when the topic has no positive judgment). `Compatibility` computes the same faster."""
    ideal = ideal_ranking(ranking, judgments)
    if not ideal:
        return None
    score = rbo_clarke(ranking, ideal, p, depth)
    if normalize:
        score /= self_rbo(len(ideal), p, depth)
    return score


@lru_cache(maxsize=32)
def _tail_sums(p: float, depth: int) -> tuple[list[float], float]:
    """S[m] = Σ_{d=m+1..D} p^{d-1}/d, so that RBO(R, I) = Σ_{x ∈ R∩I} S[max(r_x, i_x)] / norm."""
    w_over_d, norm = _weights(p, depth)
    tail = np.cumsum(w_over_d[::-1])[::-1]
    return tail.tolist(), norm


class Compatibility:
    """Scores runs against one judgment set; the per-topic ideal is prepared once.

    A run document with a positive judgment sits in the ideal at (number of positive
    documents with a higher score) + (number of run documents with the same score ranked
    above it), so RBO needs only one pass over the run's ranking.
    """

    def __init__(
        self,
        judgments: Scores,
        *,
        p: float = DEFAULT_P,
        depth: int = DEFAULT_DEPTH,
        normalize: bool = True,
        tie_break: TieBreak = "clarke",
    ):
        if not 0.0 < p < 1.0:
            raise ValueError(f"p must be in (0, 1), got {p}")
        self.p, self.depth, self.normalize, self.tie_break = p, depth, normalize, tie_break
        # per topic: {docid: tier} for positive documents, tier start offsets in the ideal, size
        self._topics: dict[str, tuple[dict[str, int], list[int], int]] = {}
        for qid, docs in judgments.items():
            positive = {d: float(s) for d, s in docs.items() if float(s) > 0.0}
            if not positive:
                continue
            sizes = Counter(positive.values())
            tiers = sorted(sizes, reverse=True)
            tier_of = {score: t for t, score in enumerate(tiers)}
            start = [0] * len(tiers)
            for t in range(1, len(tiers)):
                start[t] = start[t - 1] + sizes[tiers[t - 1]]
            self._topics[qid] = ({d: tier_of[s] for d, s in positive.items()}, start, len(positive))

    @property
    def topics(self) -> list[str]:
        """Topics with at least one positive judgment."""
        return list(self._topics)

    def topic(self, qid: str, ranking: Sequence[str]) -> float | None:
        """Compatibility of one topic's ranking; None when the topic has no positive judgment."""
        return self._topic(qid, {doc: i for i, doc in enumerate(ranking[: self.depth])})

    def _topic(self, qid: str, positions: Mapping[str, int]) -> float | None:
        prepared = self._topics.get(qid)
        if prepared is None:
            return None
        tier_of, start, n_positive = prepared
        tail, norm = _tail_sums(self.p, self.depth)
        depth = self.depth
        nxt = start.copy()  # next free ideal position per tier
        total = 0.0
        common = sorted(positions.keys() & tier_of.keys(), key=positions.__getitem__)
        for doc in common:
            t = tier_of[doc]
            i = nxt[t]
            nxt[t] = i + 1
            r = positions[doc]
            m = r if r > i else i
            if m < depth:
                total += tail[m]
        value = total / norm
        if self.normalize:
            value /= self_rbo(n_positive, self.p, self.depth)
        return value

    def positions(self, run: Scores) -> dict[str, dict[str, int]]:
        """``{qid: {docid: 0-based rank}}`` of a run in this scorer's order, to depth.

        Compute it once per run to score the run against several judgment sets with the
        same ``tie_break`` and ``depth`` (`score_positions`)."""
        return {
            qid: {d: i for i, d in enumerate(run_order(docs, self.tie_break)[: self.depth])}
            for qid, docs in run.items()
        }

    def score_positions(self, positions: Mapping[str, Mapping[str, int]]) -> CompatibilityResult:
        per_topic: dict[str, float] = {}
        for qid, pos in positions.items():
            if pos and qid in self._topics:
                value = self._topic(qid, pos)
                if value is not None:
                    per_topic[qid] = value
        return CompatibilityResult(per_topic)

    def __call__(self, run: Scores) -> CompatibilityResult:
        return self.score_positions(self.positions({q: d for q, d in run.items() if q in self._topics}))


def compatibility(
    run: Scores,
    judgments: Scores,
    *,
    p: float = DEFAULT_P,
    depth: int = DEFAULT_DEPTH,
    normalize: bool = True,
    tie_break: TieBreak = "clarke",
) -> CompatibilityResult:
    """Per-topic compatibility of a run ``{qid: {docid: score}}`` with a judgment set.

    Topics of the run without a positive judgment are left out (as in Clarke's script). To
    score many runs against one set, build a `Compatibility` once and call it per run.
    """
    return Compatibility(judgments, p=p, depth=depth, normalize=normalize, tie_break=tie_break)(run)
