"""The thesis's pair samples (spec S8b, issue 16): ``unacceptable`` and ``sampler-round0``."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from reljudge.cli import app
from reljudge.judges.pairwise.alignment_pairs import sample_pairs, sampler_round0_pairs, unacceptable_pairs
from reljudge.judges.pairwise.sampler import PreferenceSampler

QRELS = {
    "2": {"a": 0, "b": 0, "c": 0, "d": 2, "e": 3},  # 3 bad, 2 good -> 3 pairs
    "1": {"x": 0, "y": 1},  # 1 bad, 1 good -> 1 pair
    "3": {"p": 2, "q": 3},  # no Unacceptable document -> none
}


def test_unacceptable_pairs_cycle_the_shorter_side():
    pairs = unacceptable_pairs(QRELS, seed=3)
    assert [q for q, _, _ in pairs] == ["1", "2", "2", "2"]
    topic2 = [(a, b) for q, a, b in pairs if q == "2"]
    assert sorted(a for a, _ in topic2) == ["a", "b", "c"]  # every bad document once
    assert {b for _, b in topic2} == {"d", "e"}  # the good ones cycled
    assert len(set(topic2)) == 3
    assert unacceptable_pairs(QRELS, seed=3) == pairs  # seeded
    assert {unacceptable_pairs(QRELS, seed=s)[1][1] for s in range(20)} == {"a", "b", "c"}  # shuffled
    # ANTIQUE-style scale: grade 1 is Unacceptable
    assert unacceptable_pairs({"1": {"x": 1, "y": 2}}, unacceptable=1) == [("1", "x", "y")]


def test_sampler_round0_is_the_first_round_of_the_sampler():
    qrels = {"1": {f"d{i}": (i % 3) + 1 for i in range(20)} | {"z": 0}}
    pairs = sampler_round0_pairs(qrels, seed=5)
    docs = sorted(d for d, g in qrels["1"].items() if g > 0)
    assert [(a, b) for _, a, b in pairs] == PreferenceSampler(docs, p=7, seed=5).next_pairs()
    assert all("z" not in (a, b) for _, a, b in pairs)
    counts: dict[str, int] = {}
    for _, a, b in pairs:
        counts[a] = counts.get(a, 0) + 1
        counts[b] = counts.get(b, 0) + 1
    assert min(counts.values()) >= 7 and len(counts) == 20
    with pytest.raises(ValueError, match="unknown pair scheme"):
        sample_pairs(qrels, "all")


def test_pairs_sample_command(tmp_path: Path):
    qrels = tmp_path / "q.txt"
    qrels.write_text("".join(f"{q} 0 {d} {g}\n" for q, docs in QRELS.items() for d, g in docs.items()))
    out = tmp_path / "pairs.txt"
    res = CliRunner().invoke(
        app, ["pairs", "sample", "--scheme", "unacceptable", "--qrels", str(qrels), "--out", str(out)]
    )
    assert res.exit_code == 0, res.output
    lines = out.read_text().splitlines()
    assert lines == [" ".join(p) for p in unacceptable_pairs(QRELS)]
    from reljudge.io.pairs import read_pairs

    pairs, _ = read_pairs(out)  # the file judge run --pairs reads
    assert sum(len(v) for v in pairs.values()) == 4
    res = CliRunner().invoke(
        app, ["pairs", "sample", "--scheme", "nope", "--qrels", str(qrels), "--out", str(out)]
    )
    assert res.exit_code != 0
