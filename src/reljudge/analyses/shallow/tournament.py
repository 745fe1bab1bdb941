"""Preference qrels by tournament (thesis §3.1.4).

Per query, on the judged pairs of its pool: S = the pool; w(d) = the pairs within S that d won;
M = argmax w. One passage in M: it is the result. M = S (no progress: a cycle or a full tie):
S is the result. Otherwise S = M, again. Every passage in the result is a preference qrel.
Ties count for nobody (``ties="ignore"``) or ½ each (``"half"``); failed pairs count for nobody.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from reljudge.analyses.shallow.preference_outcomes import TIE, Preferences, pair_key

TournamentTies = Literal["ignore", "half"]
TOURNAMENT_TIES: tuple[str, ...] = ("ignore", "half")


def tournament(
    passages: Sequence[str], outcomes: Mapping[tuple[str, str], str], *, ties: TournamentTies = "ignore"
) -> list[str]:
    """The winners of one query's pool (see the module docstring); ``outcomes`` maps ``(a, b)``
    with a < b to the winner or `TIE`. Passages keep their pool order."""
    if ties not in TOURNAMENT_TIES:
        raise ValueError(f"ties must be one of {', '.join(TOURNAMENT_TIES)}, not {ties!r}")
    s = list(dict.fromkeys(passages))
    while True:
        wins = dict.fromkeys(s, 0.0)
        for i, a in enumerate(s):
            for b in s[i + 1 :]:
                w = outcomes.get((a, b) if a < b else (b, a))
                if w is None:
                    continue
                if w == TIE:
                    if ties == "half":
                        wins[a] += 0.5
                        wins[b] += 0.5
                else:
                    wins[w] += 1.0
        best = max(wins.values(), default=0.0)
        m = [d for d in s if wins[d] == best]
        if len(m) == 1 or len(m) == len(s):
            return m
        s = m


@dataclass
class TournamentResult:
    #: qid -> its preference qrels (pool order)
    winners: dict[str, list[str]]
    #: qid -> "single", "cycle" (several winners, some pair among them decided) or "tie"
    kinds: dict[str, str] = field(default_factory=dict)

    def counts(self) -> dict[str, int]:
        out = {"queries": len(self.winners), "single": 0, "cycle": 0, "tie": 0}
        for k in self.kinds.values():
            out[k] += 1
        out["preference_qrels"] = sum(len(w) for w in self.winners.values())
        return out

    def cycle_sizes(self) -> dict[int, int]:
        sizes: dict[int, int] = {}
        for q, k in self.kinds.items():
            if k == "cycle":
                sizes[len(self.winners[q])] = sizes.get(len(self.winners[q]), 0) + 1
        return dict(sorted(sizes.items()))

    def qrels(self) -> dict[str, dict[str, int]]:
        return {q: dict.fromkeys(ws, 1) for q, ws in self.winners.items()}


def preference_qrels(
    pools: Mapping[str, Iterable[str]], prefs: Preferences, *, ties: TournamentTies = "ignore"
) -> TournamentResult:
    """The tournament on every query of ``pools``."""
    by_topic: dict[str, dict[tuple[str, str], str]] = {}
    for (q, a, b), w in prefs.outcomes.items():
        by_topic.setdefault(q, {})[(a, b)] = w
    result = TournamentResult(winners={})
    for qid, pool in pools.items():
        outcomes = by_topic.get(qid, {})
        won = tournament(list(pool), outcomes, ties=ties)
        result.winners[qid] = won
        if len(won) == 1:
            kind = "single"
        else:
            decided = any(
                outcomes.get(pair_key(qid, a, b)[1:], TIE) != TIE
                for i, a in enumerate(won)
                for b in won[i + 1 :]
            )
            kind = "cycle" if decided else "tie"
        result.kinds[qid] = kind
    return result


def pairings_won(passages: Mapping[str, Iterable[str]], prefs: Preferences) -> dict[str, float | int]:
    """Of the judged pairs (with an outcome) that involve the given passages of each query, how
    many they won: ``{"passages", "pairings", "won", "tie", "share"}``."""
    by_topic: dict[str, list[tuple[str, str, str]]] = {}
    for (q, a, b), w in prefs.outcomes.items():
        by_topic.setdefault(q, []).append((a, b, w))
    n = pairings = won = tie = 0
    for qid, docs in passages.items():
        docs = set(docs)
        n += len(docs)
        for a, b, w in by_topic.get(qid, ()):
            for d in (a, b):
                if d in docs:
                    pairings += 1
                    won += w == d
                    tie += w == TIE
    return {
        "passages": n,
        "pairings": pairings,
        "won": won,
        "tie": tie,
        "share": won / pairings if pairings else float("nan"),
    }
