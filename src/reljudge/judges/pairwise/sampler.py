"""Which pairs a pairwise judge compares.

- `all_pairs`: every unordered pair once (n(n-1)/2 comparisons);
- `validate_pairs`: an explicit list of pairs (read by someone else), checked;
- `PreferenceSampler`: the preference-judging process of Clarke, Vtyurina & Smucker (TOIS
  2021, "Assessing top-k preferences"; ``claclark/preferences/prefj.py``), as used for the
  LLM preference judgments of Arabzadeh & Clarke (SIGIR 2025), re-implemented here.

The sampler works in rounds. While more than `final_pool` (9) candidates remain, every
candidate is paired with at least `p` (7) others, always extending the least-compared
candidates first (random order among equals, from the seed); candidates with more than
``p // 2`` wins in the round go on. Once at most `final_pool` remain, all their pairs are
compared and they are ranked by wins. A round costs about p·n/2 comparisons and roughly
halves the pool, so the total stays below p·n. Pairs judged in an earlier round are not asked
again: their outcome is reused. Everything depends only on the seed, the candidate order and
the outcomes, so a run can be replayed exactly (e.g. from a response cache).

Ranking (`PreferenceSampler.ranking`): the candidates of the last round by their wins in it,
then the candidates eliminated in each earlier round (latest first) by their wins in the round
that eliminated them; remaining ties by total wins, then candidate order.
"""

from __future__ import annotations

import math
import random
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

Pair = tuple[str, str]


class PairError(ValueError):
    """A bad pair in an explicit list; `index` is its 0-based position."""

    def __init__(self, message: str, index: int):
        self.index = index
        super().__init__(f"pair {index + 1}: {message}")


def _unique(docids: Sequence[str]) -> list[str]:
    seen: set[str] = set()
    for d in docids:
        if d in seen:
            raise ValueError(f"document {d!r} listed twice")
        seen.add(d)
    return list(docids)


def all_pairs(docids: Sequence[str]) -> list[Pair]:
    """Every unordered pair once, ``(docids[i], docids[j])`` for i < j, in input order."""
    docs = _unique(docids)
    return [(docs[i], docs[j]) for i in range(len(docs)) for j in range(i + 1, len(docs))]


def validate_pairs(
    pairs: Iterable[tuple[str, str]],
    docids: Collection[str] | None = None,
    *,
    reversed_repeats: Literal["error", "drop"] = "error",
) -> list[Pair]:
    """Check an explicit list of pairs and return it (order kept).

    Raises `PairError` (a ValueError with the pair's position) for a document paired with
    itself, a pair repeated, or, when `docids` is given, a document not in it. A pair repeated
    in the other order, (b, a) after (a, b), is an error too, unless ``reversed_repeats="drop"``:
    then it is left out, the first order kept (for a judge that shows each pair in both orders
    anyway, the two are the same comparison).
    """
    seen: dict[frozenset[str], tuple[int, Pair]] = {}
    out: list[Pair] = []
    for i, pair in enumerate(pairs):
        if len(pair) != 2:
            raise PairError(f"expected two document ids, got {len(pair)}", i)
        a, b = pair
        if not a or not b:
            raise PairError("empty document id", i)
        if a == b:
            raise PairError(f"document {a!r} paired with itself", i)
        if docids is not None:
            for d in (a, b):
                if d not in docids:
                    raise PairError(f"document {d!r} is not among the candidates", i)
        key = frozenset((a, b))
        if key in seen:
            first, kept = seen[key]
            if reversed_repeats == "drop" and kept == (b, a):
                continue
            raise PairError(f"({a}, {b}) repeats pair {first + 1}", i)
        seen[key] = (i, (a, b))
        out.append((a, b))
    return out


@dataclass(frozen=True)
class RoundInfo:
    """One sampler round: candidates in it, pairs it compared, how many were new calls."""

    pool: int
    pairs: int
    judged: int
    final: bool


class PreferenceSampler:
    """Incremental, seeded top-k preference sampler (see module doc).

    >>> s = PreferenceSampler(["d1", "d2", "d3"], seed=0)
    >>> while not s.done:
    ...     for a, b in s.next_pairs():
    ...         s.record(a, b, min(a, b))   # a judge that prefers the smaller id
    >>> s.ranking()
    ['d1', 'd2', 'd3']
    """

    def __init__(self, docids: Sequence[str], p: int = 7, seed: int = 0, final_pool: int = 9):
        if p < 1:
            raise ValueError(f"p must be at least 1, got {p}")
        if final_pool < 2:
            raise ValueError(f"final_pool must be at least 2, got {final_pool}")
        self._docs = _unique(docids)
        self._index = {d: i for i, d in enumerate(self._docs)}
        self.p = p
        self.final_pool = final_pool
        self.seed = seed
        self._rng = random.Random(seed)
        self._outcomes: dict[frozenset[str], str | None] = {}  # winner, or None for a tie
        self._failed: set[frozenset[str]] = set()
        self._pool: list[str] = list(self._docs)
        self._round_pairs: list[Pair] = []
        self._round_final = False
        self._outstanding: dict[frozenset[str], Pair] = {}
        self._eliminated: list[tuple[int, list[str], dict[str, int]]] = []
        self._final: list[str] | None = None
        self.comparisons = 0  # judgments recorded (failures included)
        self.failures = 0
        self.rounds: list[RoundInfo] = []
        self._start_round()

    # -- public -----------------------------------------------------------------------------

    @property
    def done(self) -> bool:
        return self._final is not None

    def next_pairs(self) -> list[Pair]:
        """The pairs of the current round still to judge (empty once done). Calling it again
        before recording them returns the same pairs."""
        return list(self._outstanding.values())

    def record(self, a: str, b: str, winner: str | None) -> None:
        """Record the outcome of an outstanding pair: `winner` is a, b, or None for a tie."""
        if winner is not None and winner not in (a, b):
            raise ValueError(f"winner {winner!r} is not in the pair ({a}, {b})")
        key = self._take(a, b)
        self._outcomes[key] = winner
        self._failed.discard(key)
        self._after_record()

    def record_failure(self, a: str, b: str) -> None:
        """The pair could not be judged: no win for either side in this round. If a later
        round selects the pair again it is asked again."""
        key = self._take(a, b)
        self._failed.add(key)
        self.failures += 1
        self._after_record()

    def ranking(self) -> list[str]:
        """All candidates, best first (see module doc). Raises RuntimeError before `done`."""
        if self._final is None:
            raise RuntimeError("the sampler has not finished; judge the pairs of next_pairs() first")
        total = self.wins()
        ranked = list(self._final)
        for _round, docs, wins in reversed(self._eliminated):
            ranked.extend(sorted(docs, key=lambda d: (-wins[d], -total[d], self._index[d])))
        return ranked

    def top(self, k: int) -> list[str]:
        return self.ranking()[:k]

    def wins(self) -> dict[str, int]:
        """Total wins of every candidate over all judged pairs (Borda-like, as reformat.py)."""
        total = {d: 0 for d in self._docs}
        for winner in self._outcomes.values():
            if winner is not None:
                total[winner] += 1
        return total

    def outcomes(self) -> dict[Pair, str | None]:
        """Every judged pair (in sorted id order) -> its winner, None for a tie."""
        return {tuple(sorted(k)): w for k, w in self._outcomes.items()}  # type: ignore[misc]

    # -- rounds -----------------------------------------------------------------------------

    def _take(self, a: str, b: str) -> frozenset[str]:
        key = frozenset((a, b))
        if key not in self._outstanding:
            raise ValueError(f"({a}, {b}) is not a pair awaiting judgment in this round")
        del self._outstanding[key]
        self.comparisons += 1
        return key

    def _after_record(self) -> None:
        if not self._outstanding:
            self._end_round()

    def _start_round(self) -> None:
        while True:
            if len(self._pool) < 2:
                self._finish(self._pool, {d: 0 for d in self._pool})
                return
            self._round_final = len(self._pool) <= self.final_pool
            self._round_pairs = all_pairs(self._pool) if self._round_final else self._stage1(self._pool)
            self._outstanding = {
                frozenset(pair): pair for pair in self._round_pairs if frozenset(pair) not in self._outcomes
            }
            new = len(self._outstanding)
            self.rounds.append(RoundInfo(len(self._pool), len(self._round_pairs), new, self._round_final))
            if new:
                return
            if self._close_round():  # every pair known already: decide at once
                return

    def _end_round(self) -> None:
        if not self._close_round():
            self._start_round()

    def _close_round(self) -> bool:
        """Apply the round's outcomes; True when the sampler has finished."""
        wins = {d: 0 for d in self._pool}
        for a, b in self._round_pairs:
            winner = self._outcomes.get(frozenset((a, b)))
            if winner is not None:
                wins[winner] += 1
        if self._round_final:
            self._finish(self._pool, wins)
            return True
        threshold = self.p // 2
        survivors = [d for d in self._pool if wins[d] > threshold]
        if len(survivors) == len(self._pool):  # cannot happen with p·n/2 pairs, but never loop
            keep = sorted(self._pool, key=lambda d: (-wins[d], self._index[d]))[: (len(self._pool) + 1) // 2]
            survivors = [d for d in self._pool if d in set(keep)]
        kept = set(survivors)
        self._eliminated.append((len(self.rounds), [d for d in self._pool if d not in kept], wins))
        self._pool = survivors
        if len(self._pool) < 2:
            self._finish(self._pool, wins)
            return True
        return False

    def _finish(self, pool: list[str], wins: dict[str, int]) -> None:
        total = self.wins()
        self._final = sorted(pool, key=lambda d: (-wins[d], -total[d], self._index[d]))
        self._outstanding = {}

    def _stage1(self, pool: list[str]) -> list[Pair]:
        """Pair every candidate with at least min(p, n-1) others, least-compared first.

        Each step takes a random candidate among the least compared, and pairs it with a
        random not-yet-paired candidate among the least compared others (prefj.py's
        shuffle-then-sort-by-count, done with count buckets so a round costs O(n·p)).
        """
        need = min(self.p, len(pool) - 1)
        rng = self._rng
        buckets: dict[int, list[str]] = {0: list(pool)}
        count = {d: 0 for d in pool}
        slot = {d: i for i, d in enumerate(pool)}
        partners: dict[str, set[str]] = {d: set() for d in pool}
        pairs: list[Pair] = []

        def move_up(d: str) -> None:
            bucket = buckets[count[d]]
            last = bucket.pop()
            if last != d:
                bucket[slot[d]] = last
                slot[last] = slot[d]
            count[d] += 1
            up = buckets.setdefault(count[d], [])
            slot[d] = len(up)
            up.append(d)

        def partner_for(first: str) -> str:
            for level in sorted(c for c, b in buckets.items() if b):
                bucket = buckets[level]
                for _ in range(8):
                    d = bucket[rng.randrange(len(bucket))]
                    if d != first and d not in partners[first]:
                        return d
                free = [d for d in bucket if d != first and d not in partners[first]]
                if free:
                    return free[rng.randrange(len(free))]
            raise AssertionError("no partner left")  # impossible: count[first] < need <= n-1

        while True:
            low = min(c for c, b in buckets.items() if b)
            if low >= need:
                return pairs
            bucket = buckets[low]
            first = bucket[rng.randrange(len(bucket))]
            partner = partner_for(first)
            partners[first].add(partner)
            partners[partner].add(first)
            pairs.append((first, partner))
            move_up(first)
            move_up(partner)


def sampler_pair_bound(n: int, p: int, threshold: int) -> int:
    """Upper bound on the pairs the sampler compares for a pool of ``n``: ceil(p*n/2) per round
    while more than ``threshold`` documents remain (about half survive each round), then all
    pairs of the rest."""
    pairs = 0
    while n > threshold:
        pairs += math.ceil(min(p, n - 1) * n / 2)
        n //= 2
    return pairs + n * (n - 1) // 2
