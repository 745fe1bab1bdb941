"""Which items people should check: the selection strategies of ``judge select`` (pure).

Every strategy sees the items sorted by (qid, docid) and breaks ties by a seeded hash of the
item, so its choice does not depend on the order of any input.

- ``stratified``: strata (by default the LLM label: ``label=2``), ``n`` items allocated to the
  strata in proportion to their sizes (largest remainders, at least ``min(2, N_h)`` per stratum
  when the budget allows, ties by stratum name) or equally (``equal``, capped at the stratum's
  size, the rest handed on); with systems' runs and a depth (``--depth 10``), strata by whether
  any system ranks the item in its top ``depth`` times the LLM label (``top10/label=2``), and
  ``top`` allocation gives ``top_share`` of the budget to the ``top…`` strata (the items the
  systems' P@k and DCG@k read), the rest to the deeper ones (which only the ideal DCG reads);
  within a stratum a simple random sample without replacement drawn
  by ``numpy.random.default_rng(seed)``, strata in name order. Inclusion probability
  ``π = n_h / N_h``: the design `reljudge.analyses.humans.ppi` estimates from.
- ``uncertainty``: the ``n`` items the LLM is least sure of: the entropy (nats) of the grade
  distribution read from log-probabilities (``extra["expected"]["p"]``), else the share of repeated
  samples that disagree with the majority (``1 − extra["agreement"]``), else the share of the
  ensemble (the run's label and each ``--members`` file's label of the item) that disagrees with
  its majority. Items with no signal score 0.
- ``influence``: the ``n`` items whose label, changed to another grade of the scale, swaps the
  order of the most pairs of systems under the measure computed with the LLM labels (P@k exactly;
  nDCG@k by its first-order change, `reljudge.analyses.humans.ppi`).

``uncertainty`` and ``influence`` choose deterministically: the chosen items form one stratum
taken whole (π = 1) and the rest a stratum of which nothing was sampled, so they find
disagreements but give no unbiased estimate of a score (``judge estimate`` says so).
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = [
    "Chosen",
    "allocate",
    "entropy",
    "allocate_top",
    "depth_stratum",
    "influence_scores",
    "label_stratum",
    "stratified_sample",
    "top_by_score",
    "uncertainty_score",
]


@dataclass
class Chosen:
    """A selection: the chosen items (indices into the sorted items), their stratum, inclusion
    probability and reason, and every stratum's size and sample count."""

    items: list[int]
    stratum: list[str]
    inclusion: list[float]
    why: list[str]
    strata: dict[str, dict[str, int]]


def label_stratum(label: float | None) -> str:
    """The stratum of an item by its LLM label (``label=2``; a float label as written)."""
    if label is None:
        return "label=none"
    return f"label={int(label)}" if float(label).is_integer() else f"label={label:g}"


def _tie(seed: int, key: tuple[str, str]) -> int:
    digest = hashlib.sha256(f"{seed}\t{key[0]}\t{key[1]}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


def allocate(sizes: Mapping[str, int], n: int, how: str = "proportional") -> dict[str, int]:
    """How many of ``n`` items each stratum gets (see the module doc); never more than its size."""
    names = sorted(sizes)
    total = sum(sizes.values())
    n = min(n, total)
    if how == "equal":
        out = dict.fromkeys(names, 0)
        left = n
        while left > 0:
            open_ = [s for s in names if out[s] < sizes[s]]
            share, extra = divmod(left, len(open_))
            for j, s in enumerate(open_):
                out[s] += min(share + (1 if j < extra else 0), sizes[s] - out[s])
            left = n - sum(out.values())
        return out
    if how != "proportional":
        raise ValueError(f"unknown allocation {how!r}; choose proportional or equal")
    floor = (
        {s: min(2, sizes[s]) for s in names}
        if n >= sum(min(2, sizes[s]) for s in names)
        else dict.fromkeys(names, 0)
    )
    left = n - sum(floor.values())
    room = {s: sizes[s] - floor[s] for s in names}
    spare = sum(room.values())
    quota = {s: (left * room[s] / spare if spare else 0.0) for s in names}
    out = {s: floor[s] + math.floor(quota[s]) for s in names}
    rest = n - sum(out.values())
    for s in sorted(names, key=lambda s: (-(quota[s] - math.floor(quota[s])), s)):
        if rest <= 0:
            break
        if out[s] < sizes[s]:
            out[s] += 1
            rest -= 1
    return out


def depth_stratum(label: float | None, in_depth: bool, depth: int) -> str:
    """The stratum of an item by whether a system ranks it in its top ``depth`` and its LLM label
    (``top10/label=2``, ``deeper/label=0``)."""
    return f"{'top' + str(depth) if in_depth else 'deeper'}/{label_stratum(label)}"


def allocate_top(sizes: Mapping[str, int], n: int, share: float) -> dict[str, int]:
    """``share`` of ``n`` to the strata named ``top…`` and the rest to the others, each part
    proportionally (`allocate`); what a part cannot take goes to the other."""
    top = {s: v for s, v in sizes.items() if s.startswith("top")}
    rest = {s: v for s, v in sizes.items() if not s.startswith("top")}
    n = min(n, sum(sizes.values()))
    n_top = min(sum(top.values()), int(round(n * share)) if rest else n)
    n_rest = min(sum(rest.values()), n - n_top)
    n_top = min(sum(top.values()), n - n_rest)
    return {**(allocate(top, n_top) if top else {}), **(allocate(rest, n_rest) if rest else {})}


def stratified_sample(
    strata: Sequence[str], n: int, seed: int, how: str = "proportional", top_share: float = 0.8
) -> Chosen:
    """A stratified random sample of ``n`` of the items (their strata in sorted-item order);
    ``how``: proportional, equal, or top (``top_share`` of the budget to the ``top…`` strata)."""
    members: dict[str, list[int]] = {}
    for i, s in enumerate(strata):
        members.setdefault(s, []).append(i)
    sizes = {s: len(v) for s, v in members.items()}
    counts = allocate_top(sizes, n, top_share) if how == "top" else allocate(sizes, n, how)
    rng = np.random.default_rng(seed)
    items, names, probs, why = [], [], [], []
    for s in sorted(members):
        take = counts[s]
        if take <= 0:
            continue
        picked = sorted(rng.choice(len(members[s]), size=take, replace=False).tolist())
        for j in picked:
            items.append(members[s][j])
            names.append(s)
            probs.append(take / sizes[s])
            why.append(f"random {take} of {sizes[s]} in {s}")
    order = sorted(range(len(items)), key=lambda j: items[j])
    return Chosen(
        [items[j] for j in order],
        [names[j] for j in order],
        [probs[j] for j in order],
        [why[j] for j in order],
        {s: {"size": sizes[s], "sampled": counts[s]} for s in sorted(sizes)},
    )


def top_by_score(
    keys: Sequence[tuple[str, str]],
    scores: Sequence[float],
    reasons: Sequence[str],
    n: int,
    seed: int,
    what: str,
) -> Chosen:
    """The ``n`` highest-scoring items (ties by a seeded hash): one stratum taken whole, the rest
    a stratum of which nothing was sampled (module doc)."""
    order = sorted(range(len(keys)), key=lambda i: (-scores[i], _tie(seed, keys[i])))
    chosen = sorted(order[: min(n, len(keys))])
    big = len(keys)
    strata = {what: {"size": len(chosen), "sampled": len(chosen)}}
    if big > len(chosen):
        strata["rest"] = {"size": big - len(chosen), "sampled": 0}
    return Chosen(chosen, [what] * len(chosen), [1.0] * len(chosen), [reasons[i] for i in chosen], strata)


def entropy(p: Mapping[str, float]) -> float:
    """The entropy in nats of a grade distribution."""
    return -math.fsum(v * math.log(v) for v in p.values() if isinstance(v, (int, float)) and v > 0)


def uncertainty_score(
    extra: Mapping[str, Any], member_labels: Sequence[float | None] = ()
) -> tuple[float, str]:
    """How unsure the LLM was of one item and why (module doc); (0, "no signal") without any."""
    expected = extra.get("expected")
    if isinstance(expected, Mapping) and isinstance(expected.get("p"), Mapping):
        h = entropy(expected["p"])
        return h, f"grade entropy {h:.3f} nats (log-probabilities)"
    share = extra.get("agreement")
    if isinstance(share, (int, float)) and not isinstance(share, bool):
        return 1.0 - float(share), f"{1 - float(share):.0%} of repeated samples disagree"
    labels = [m for m in member_labels if m is not None]
    if len(labels) >= 2:
        from collections import Counter

        top = Counter(labels).most_common(1)[0][1]
        return 1.0 - top / len(labels), f"{len(labels) - top} of {len(labels)} ensemble members disagree"
    return 0.0, "no uncertainty signal"


def influence_scores(
    flips: np.ndarray,
) -> list[tuple[float, str]]:
    """Scores and reasons from the count of swapped system pairs of every item."""
    return [(float(f), f"changing its label swaps {int(f)} system pair(s)") for f in flips]


def swapped_pairs(scores: np.ndarray, change: np.ndarray) -> np.ndarray:
    """For each item, how many pairs of systems change order when the systems' scores move by
    ``change[:, i]`` (systems × items) from ``scores`` (systems)."""
    s = scores.size
    out = np.zeros(change.shape[1])
    for a in range(s):
        for b in range(a + 1, s):
            before = np.sign(scores[a] - scores[b])
            after = np.sign(scores[a] + change[a] - scores[b] - change[b])
            out += (after != before) & (after != 0)
    return out
