"""`read_run(..., top_k=K)` streams a run and keeps each topic's first K documents: the same
documents, in the same order, as the full read's `Run.ranked(qid)[:K]`, and the same errors."""

from __future__ import annotations

import random

import pytest

from reljudge.errors import InputError
from reljudge.io.trec import read_run


def write_run(path, seed: int, *, interleave: bool = False) -> None:
    rng = random.Random(seed)
    rows = []
    for q in range(5):
        for d in rng.sample(range(500), rng.randint(1, 60)):
            rows.append(f"q{q} Q0 doc{d} 1 {rng.choice([1.0, 2.0, 2.5, rng.random()])} sys{seed}")
    if interleave:
        rng.shuffle(rows)  # topics not contiguous, ties on purpose
    path.write_text("\n".join(rows) + "\n\n")


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("k", [1, 3, 10, 100])
def test_top_k_equals_the_head_of_the_full_ranking(tmp_path, seed, k):
    path = tmp_path / "a.run"
    write_run(path, seed, interleave=seed % 2 == 1)
    full = read_run(path)
    top = read_run(path, top_k=k)
    assert top.name == full.name
    assert list(top) == list(full)  # topics in file order
    for qid in full:
        assert top.ranked(qid) == full.ranked(qid)[:k]
        assert {d: full[qid][d] for d in top[qid]} == top[qid]


def test_top_k_errors_are_those_of_the_full_read(tmp_path):
    twice = tmp_path / "twice.run"
    twice.write_text("q1 Q0 a 1 3 s\nq2 Q0 a 1 3 s\nq1 Q0 b 2 2 s\nq1 Q0 a 3 1 s\n")
    for bad, topics in ((twice, None), (twice, ["q1", "q2"])):
        with pytest.raises(InputError) as full:
            read_run(bad, topics=topics)
        with pytest.raises(InputError) as top:
            read_run(bad, topics=topics, top_k=1)  # the repeat is not among the kept ones
        assert str(top.value) == str(full.value)
        assert ":4" in str(top.value)
    unknown = tmp_path / "unknown.run"
    unknown.write_text("q1 Q0 a 1 3 s\nq9 Q0 a 1 3 s\n")
    with pytest.raises(InputError, match="q9"):
        read_run(unknown, topics=["q1"], top_k=5)
    short = tmp_path / "short.run"
    short.write_text("q1 Q0 a 1 3\n")
    with pytest.raises(InputError, match="6 columns"):
        read_run(short, top_k=2)
