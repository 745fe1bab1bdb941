"""The pair samples of the thesis's alignment study (Arabzadeh, ch. 4; ``Pref/unacceptable.py`` and
``log.00`` of Narabzad/llm-relevance-judgement-comparison), so that alignment can be computed on the
same kind of pairs (spec S8b):

- `unacceptable_pairs`: per topic, the Unacceptable documents (grade <= ``unacceptable``) and the
  others are each shuffled; ``max(|bad|, |good|)`` pairs ``(bad[i mod |bad|], good[i mod |good|])``
  are emitted (the BvU and AvU pairs of the study);
- `sampler_round0_pairs`: per topic, the pairs of the first round of `PreferenceSampler` over the
  documents above ``unacceptable`` (the thesis initialised the sampler from binarised qrels; its
  round 0 gave the BvA pairs).

Both are seeded: one `random.Random(seed)` for the whole sample, topics in sorted order and the
documents of a topic in sorted order before shuffling, so a sample is the same on every machine.
"""

from __future__ import annotations

import random
from collections.abc import Mapping

from reljudge.judges.pairwise.sampler import PreferenceSampler

Qrels = Mapping[str, Mapping[str, float]]
SCHEMES: tuple[str, ...] = ("unacceptable", "sampler-round0")


def unacceptable_pairs(qrels: Qrels, *, unacceptable: float = 0, seed: int = 0) -> list[tuple[str, str, str]]:
    """``(qid, unacceptable doc, other doc)`` pairs; topics without both kinds give none."""
    rng = random.Random(seed)
    out: list[tuple[str, str, str]] = []
    for qid in sorted(qrels):
        grades = qrels[qid]
        bad = sorted(d for d, g in grades.items() if g <= unacceptable)
        good = sorted(d for d, g in grades.items() if g > unacceptable)
        rng.shuffle(bad)
        rng.shuffle(good)
        if not bad or not good:
            continue
        out += [(qid, bad[i % len(bad)], good[i % len(good)]) for i in range(max(len(bad), len(good)))]
    return out


def sampler_round0_pairs(
    qrels: Qrels, *, unacceptable: float = 0, p: int = 7, seed: int = 0
) -> list[tuple[str, str, str]]:
    """``(qid, doc, doc)``: the first sampler round over each topic's documents above
    ``unacceptable`` (a topic with fewer than two gives none)."""
    out: list[tuple[str, str, str]] = []
    for qid in sorted(qrels):
        docs = sorted(d for d, g in qrels[qid].items() if g > unacceptable)
        if len(docs) < 2:
            continue
        sampler = PreferenceSampler(docs, p=p, seed=seed)
        out += [(qid, a, b) for a, b in sampler.next_pairs()]
    return out


def sample_pairs(
    qrels: Qrels, scheme: str, *, unacceptable: float = 0, seed: int = 0, p: int = 7
) -> list[tuple[str, str, str]]:
    """The pairs of ``scheme`` (`SCHEMES`); ValueError for another scheme."""
    if scheme == "unacceptable":
        return unacceptable_pairs(qrels, unacceptable=unacceptable, seed=seed)
    if scheme == "sampler-round0":
        return sampler_round0_pairs(qrels, unacceptable=unacceptable, p=p, seed=seed)
    raise ValueError(f"unknown pair scheme {scheme!r} (expected {' or '.join(SCHEMES)})")
