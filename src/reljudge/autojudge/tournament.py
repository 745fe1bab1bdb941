"""Scores of responses from sampled pairwise preferences (pure): a tournament, not all pairs.

All pairs of a topic's responses cost n(n-1)/2 comparisons, two calls each (both orders): on
rag26, 83 runs x 119 topics, 809,914 calls. reljudge's pairwise judge (`reljudge.judges.pairwise`)
with ``pairs="sampler"`` runs Clarke, Vtyurina & Smucker's preference sampler per topic instead:
every response meets at least ``p`` (7) others in the first round, the better half goes on, and
the last nine meet each other: a round costs about p·n/2 comparisons and halves the pool, so a
topic costs below p·n (`comparison_bound`; tests/autojudge/test_tournament.py measures it on 83
responses with noiseless and with random outcomes, ties included).

The survivors of a round meet stronger opponents than those it eliminated, so raw win shares
are not comparable between responses. Each topic's comparisons are therefore fitted with a
Bradley-Terry model (`bradley_terry`: a response i beats j with chance s_i / (s_i + s_j);
Hunter's MM iterations, each response also given one tie against a virtual average opponent,
which keeps every strength finite -- a response that won or lost everything -- and is the prior
that pulls a response with few comparisons towards the middle). A response's measure is then

- ``pairwise.strength``: its expected win share against the other responses of its topic under
  the fitted model, ``mean_j s_i / (s_i + s_j)`` (0.5 for an average response; comparable across
  topics, so a run's mean over topics is its leaderboard value);
- ``pairwise.winrate``: the share of its own comparisons it won, a tie counting one half (the
  raw number, biased towards the responses the sampler kept);
- ``pairwise.comparisons``: how many comparisons it took part in.

A comparison with no label (a failed or unreadable order) counts for nothing. Results never
depend on the order the comparisons are given in.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

#: MM iterations at most, and the change in log-strength below which the fit has converged
MAX_ITERATIONS = 10_000
TOLERANCE = 1e-10
#: wins credited to each response against the virtual average opponent (and to it against each)
PRIOR = 0.5


def comparison_bound(n: int, p: int = 7) -> int:
    """The comparisons the sampler is designed to stay within on a pool of ``n``: p·n, or all
    n(n-1)/2 pairs when that is fewer (checked by measurement in the tests, not proven here)."""
    return min(n * (n - 1) // 2, p * n)


def bradley_terry(items: Iterable[str], outcomes: Iterable[tuple[str, str, float]]) -> dict[str, float]:
    """Bradley-Terry strengths of ``items`` (the virtual opponent's is 1) from ``outcomes``: ``(a, b,
    score of a)`` with score 1 (a won), 0 (b won) or 0.5 (a tie). See the module docstring for
    the prior. Items are processed in sorted order, so the input order never matters."""
    names = sorted(set(items))
    index = {name: k for k, name in enumerate(names)}
    n = len(names)
    if n == 0:
        return {}
    wins = [PRIOR] * n  # the prior: half a win against the virtual opponent
    meetings: list[dict[int, float]] = [{} for _ in range(n)]
    for a, b, score in sorted(outcomes):
        i, j = index[a], index[b]
        if i == j:
            continue
        wins[i] += score
        wins[j] += 1.0 - score
        meetings[i][j] = meetings[i].get(j, 0.0) + 1.0
        meetings[j][i] = meetings[j].get(i, 0.0) + 1.0
    strength = [1.0] * n
    for _ in range(MAX_ITERATIONS):
        updated = []
        for i in range(n):
            # the virtual opponent has strength 1 and met each item once (2 * PRIOR games)
            denominator = 2 * PRIOR / (strength[i] + 1.0)
            denominator += sum(
                count / (strength[i] + strength[j]) for j, count in sorted(meetings[i].items())
            )
            updated.append(wins[i] / denominator)
        change = max(abs(math.log(u) - math.log(s)) for u, s in zip(updated, strength, strict=True))
        strength = updated
        if change < TOLERANCE:
            break
    return {name: strength[index[name]] for name in names}


def response_scores(
    pool: Iterable[str], outcomes: Iterable[tuple[str, str, float]]
) -> dict[str, dict[str, float]]:
    """The measures (module docstring) of each response of one topic's ``pool`` from its
    comparisons ``(a, b, score of a)``."""
    members = sorted(set(pool))
    judged = sorted(o for o in outcomes if o[0] in members and o[1] in members and o[0] != o[1])
    strength = bradley_terry(members, judged)
    won = dict.fromkeys(members, 0.0)
    met = dict.fromkeys(members, 0)
    for a, b, score in judged:
        won[a] += score
        won[b] += 1.0 - score
        met[a] += 1
        met[b] += 1
    scores: dict[str, dict[str, float]] = {}
    for name in members:
        others = [strength[other] for other in members if other != name]
        expected = sum(strength[name] / (strength[name] + s) for s in others) / len(others) if others else 0.5
        scores[name] = {
            "strength": expected,
            "winrate": won[name] / met[name] if met[name] else 0.5,
            "comparisons": float(met[name]),
        }
    return scores


def outcome(label: int | None) -> float | None:
    """The score of a pair record's ``docid`` from its label (1: docid preferred, 2: docid_b
    preferred, 0: a tie); None for a pair without a label."""
    return {1: 1.0, 2: 0.0, 0: 0.5}.get(label) if label is not None else None


def scores_by_response(
    pools: Mapping[str, Iterable[str]], pairs: Iterable[tuple[str, str, str, int | None]]
) -> dict[tuple[str, str], dict[str, float]]:
    """``(topic, response id) -> measures`` for every response of every topic's pool, from the
    pair records ``(topic, docid, docid_b, label)``."""
    by_topic: dict[str, list[tuple[str, str, float]]] = {}
    for qid, a, b, label in pairs:
        score = outcome(label)
        if score is not None:
            by_topic.setdefault(qid, []).append((a, b, score))
    found: dict[tuple[str, str], dict[str, float]] = {}
    for qid, pool in sorted(pools.items()):
        for docid, values in response_scores(pool, by_topic.get(qid, [])).items():
            found[(qid, docid)] = values
    return found
