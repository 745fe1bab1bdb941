"""The shallow-pool analysis (the pure modules of `reljudge.analyses.shallow`) on synthetic inputs
built to the thesis's counts (§3.1): 454 single winners + 46 three-way cycles = 592 preference
qrels, category A = 1,868 of 6,980 (26.76 %), and exact binomial p-values against known values."""

from __future__ import annotations

import math

import pytest

from reljudge.analyses.shallow import leaderboard as lb
from reljudge.analyses.shallow.btp import (
    BtpPair,
    best_known,
    binomial_two_sided,
    btp_pairs,
    category_b_test,
    gold_accuracy,
    reference_passages,
    tally,
)
from reljudge.analyses.shallow.preference_outcomes import TIE, Preferences, agreement, human_preferences
from reljudge.analyses.shallow.shallow_pools import (
    REFERENCE,
    build_pools,
    missing_queries,
    pool_stats,
    sample_queries,
    unordered_pairs,
)
from reljudge.analyses.shallow.tournament import pairings_won, preference_qrels, tournament
from reljudge.analyses.shallow.winratio import win_ratios


def outcomes(*wins: tuple[str, str]) -> dict[tuple[str, str], str]:
    """``(winner, loser)`` pairs as the tournament's ``{(a, b): winner}``."""
    return {tuple(sorted((w, loser))): w for w, loser in wins}  # type: ignore[misc]


# --- tournament -----------------------------------------------------------------------------------


def test_a_three_cycle_keeps_all_three():
    assert tournament(["a", "b", "c"], outcomes(("a", "b"), ("b", "c"), ("c", "a"))) == ["a", "b", "c"]


def test_a_cycle_above_a_loser_is_found_in_the_second_round():
    # a, b, c each win 2 (one in the cycle, one against d): M = {a, b, c} != S; then 1 each: M = S
    o = outcomes(("a", "b"), ("b", "c"), ("c", "a"), ("a", "d"), ("b", "d"), ("c", "d"))
    assert tournament(["a", "b", "c", "d"], o) == ["a", "b", "c"]


def test_a_tie_for_first_is_replayed_among_the_tied():
    # a and b both win 2; between them a won: a alone
    o = outcomes(("a", "b"), ("a", "c"), ("b", "c"), ("b", "d"), ("d", "a"), ("c", "d"))
    assert tournament(["a", "b", "c", "d"], o) == ["a"]
    o2 = outcomes(("a", "c"), ("b", "c"), ("a", "b"))
    assert tournament(["c", "b", "a"], o2) == ["a"]
    o3 = {**outcomes(("a", "c"), ("b", "c")), ("a", "b"): TIE}
    assert tournament(["a", "b", "c"], o3) == ["a", "b"]  # a full tie between the two kept
    assert tournament(["a", "b", "c"], o3, ties="half") == ["a", "b"]


def test_ties_half_changes_the_winner():
    # a beats c; b ties c and ties d; d beats nobody. ignore: a=1, b=0 -> a. half: a=1, b=1 -> replay, a-b tie -> both
    o = {**outcomes(("a", "c")), ("b", "c"): TIE, ("b", "d"): TIE, ("a", "b"): TIE}
    assert tournament(["a", "b", "c", "d"], o) == ["a"]
    assert tournament(["a", "b", "c", "d"], o, ties="half") == ["a", "b"]


def test_454_single_winners_and_46_three_cycles_give_592_preference_qrels():
    prefs = Preferences()
    pools: dict[str, list[str]] = {}
    for i in range(500):
        q = f"q{i}"
        if i < 454:  # a pool of 2..6 passages, d0 beats everyone, the rest in pool order
            docs = [f"{q}d{j}" for j in range(2 + i % 5)]
            for x in range(len(docs)):
                for y in range(x + 1, len(docs)):
                    prefs.add(q, docs[x], docs[y], docs[x])
        else:  # three passages in a cycle, and a fourth that loses to all of them
            docs = [f"{q}a", f"{q}b", f"{q}c", f"{q}z"]
            prefs.add(q, docs[0], docs[1], docs[0])
            prefs.add(q, docs[1], docs[2], docs[1])
            prefs.add(q, docs[2], docs[0], docs[2])
            for d in docs[:3]:
                prefs.add(q, d, docs[3], d)
        pools[q] = docs
    result = preference_qrels(pools, prefs)
    counts = result.counts()
    assert counts == {"queries": 500, "single": 454, "cycle": 46, "tie": 0, "preference_qrels": 592}
    assert result.cycle_sizes() == {3: 46}
    assert sum(len(v) for v in result.qrels().values()) == 592


def test_pairings_won_by_preference_and_original_qrels():
    prefs = Preferences()
    prefs.add("q", "a", "b", "a")
    prefs.add("q", "a", "c", "a")
    prefs.add("q", "b", "c", TIE)
    prefs.failed.add(("q", "c", "d"))
    won = pairings_won({"q": ["a"]}, prefs)
    assert (won["pairings"], won["won"], won["share"]) == (2, 2, 1.0)
    orig = pairings_won({"q": ["b"]}, prefs)
    assert (orig["pairings"], orig["won"], orig["tie"]) == (2, 0, 1)


# --- better than perfect --------------------------------------------------------------------------


def test_categories_1868_of_6980_is_26_76_percent():
    refs = {f"q{i}": f"r{i}" for i in range(6980)}
    rankings = {f"q{i}": ([f"r{i}", f"x{i}"] if i < 1868 else [f"x{i}", f"r{i}"]) for i in range(6980)}
    made = btp_pairs(refs, rankings)
    assert made.category_counts() == {"A": 1868, "B": 5112}
    assert round(100 * 1868 / 6980, 2) == 26.76 and round(100 * 5112 / 6980, 2) == 73.24
    a_pair = next(p for p in made.pairs if p.category == "A")
    b_pair = next(p for p in made.pairs if p.category == "B")
    assert (a_pair.reference, a_pair.other) == ("r0", "x0")  # q* vs the run's second
    assert (b_pair.reference, b_pair.other) == ("r1868", "x1868")  # q* vs the run's top
    # Table 3.2: A 1,228 q* / 640 other; B 2,116 q* / 2,996 other
    prefs = Preferences()
    for i, p in enumerate(made.pairs):
        ref_wins = i < 1228 if p.category == "A" else i - 1868 < 2116
        prefs.add(p.qid, p.reference, p.other, p.reference if ref_wins else p.other)
    t = tally(made.pairs, prefs)
    assert (t["A"].reference, t["A"].other, t["B"].reference, t["B"].other) == (1228, 640, 2116, 2996)
    assert round(100 * t["A"].as_dict()["reference_share_excluding_ties"], 1) == 65.7
    assert round(100 * t["B"].as_dict()["other_share_excluding_ties"], 1) == 58.6
    test = category_b_test(t["B"])
    assert test["trials"] == 5112 and test["other"] == 2996 and test["p_value"] < 1e-30


def test_ties_and_failures_are_counted_apart():
    pairs = [BtpPair("q1", "B", "r1", "x1"), BtpPair("q2", "B", "r2", "x2"), BtpPair("q3", "B", "r3", "x3")]
    prefs = Preferences()
    prefs.add("q1", "r1", "x1", "x1")
    prefs.add("q2", "r2", "x2", TIE)
    prefs.add("q3", "r3", "x3", None)
    d = tally(pairs, prefs)["B"].as_dict()
    assert (d["other_preferred"], d["tie"], d["failed"]) == (1, 1, 1)
    assert d["other_share_excluding_ties"] == 1.0 and d["other_share_including_ties"] == 0.5


def test_exact_binomial_against_known_values():
    assert binomial_two_sided(7, 10) == pytest.approx(0.34375)  # 2 * 176 / 1024
    assert binomial_two_sided(0, 24) == pytest.approx(2 * 0.5**24)
    assert binomial_two_sided(5, 10) == pytest.approx(1.0)
    assert binomial_two_sided(0, 0) == 1.0


def test_reference_choices():
    qrels = {"q": {"d1": 0, "d2": 2, "d3": 3, "d4": 3}, "none": {"z": 0}}
    assert reference_passages(qrels) == {"q": "d2"}
    assert reference_passages(qrels, relevant=3) == {"q": "d3"}
    assert reference_passages(qrels, choice="top-grade") == {"q": "d3"}
    assert reference_passages(qrels, choice="best-ranked", rankings={"q": ["d9", "d4", "d2"]}) == {"q": "d4"}
    with pytest.raises(ValueError):
        reference_passages(qrels, choice="best-ranked")


def test_a_query_the_run_misses_and_a_lone_top_are_skipped_with_reasons():
    made = btp_pairs({"q1": "r", "q2": "r", "q3": "r"}, {"q1": ["r"], "q3": ["x"]})
    assert made.skipped == {"category A without a second passage": ["q1"], "not ranked by the run": ["q2"]}
    assert [p.qid for p in made.pairs] == ["q3"]


def test_gold_accuracy():
    gold = [BtpPair("q", "gold", "r", "off1"), BtpPair("q", "gold", "r", "off2")]
    prefs = Preferences()
    prefs.add("q", "r", "off1", "r")
    prefs.add("q", "off2", "r", "off2")
    assert gold_accuracy(gold, prefs)["accuracy"] == 0.5


def test_best_known_replaces_q_star_only_where_a_category_b_top_won():
    pairs = [
        BtpPair("q1", "B", "r1", "x1"),  # the run's top won: replaced
        BtpPair("q2", "B", "r2", "x2"),  # a tie: kept
        BtpPair("q3", "B", "r3", "x3"),  # failed: kept
        BtpPair("q4", "A", "r4", "x4"),  # category A (the other is the run's 2nd): kept even if it won
        BtpPair("q5", "B", "r5", "x5"),  # q* won: kept
    ]
    prefs = Preferences()
    prefs.add("q1", "r1", "x1", "x1")
    prefs.add("q2", "r2", "x2", TIE)
    prefs.add("q3", "r3", "x3", None)
    prefs.add("q4", "r4", "x4", "x4")
    prefs.add("q5", "x5", "r5", "r5")
    best, replaced = best_known(pairs, prefs)
    assert best == {"q1": {"x1": 1}, "q2": {"r2": 1}, "q3": {"r3": 1}, "q4": {"r4": 1}, "q5": {"r5": 1}}
    assert replaced == [(pairs[0], "x1")]


# --- pools, human preferences, win ratios ------------------------------------------------------------


def test_pools_statistics_sample_and_pairs():
    top = {"A": {"q1": "x", "q2": "r2", "q3": "y"}, "B": {"q1": "x", "q2": "z"}, "C": {"q1": "w"}}
    pools = build_pools(top, {"q1": "r1", "q2": "r2", "q3": "y"})
    assert pools["q1"] == {"r1": [REFERENCE], "x": ["A", "B"], "w": ["C"]}
    assert pools["q3"] == {"y": [REFERENCE, "A"]}
    stats = pool_stats(pools)
    assert (stats["size_1"], stats["mean"], stats["median"], stats["pairs"]) == (1, 2.0, 2, 4)
    assert missing_queries(top, ["q1", "q2", "q3"]) == {"B": ["q3"], "C": ["q2", "q3"]}
    assert sample_queries(pools, None) == ["q1", "q2"]
    one = sample_queries(pools, 1, seed=3)
    assert len(one) == 1 and one == sample_queries(pools, 1, seed=3)
    assert unordered_pairs(pools, ["q1"]) == [("q1", "r1", "x"), ("q1", "r1", "w"), ("q1", "x", "w")]
    with pytest.raises(ValueError):
        build_pools({REFERENCE: {}}, {})


def test_human_grades_as_the_judge():
    prefs = human_preferences(
        [("q", "a", "b"), ("q", "a", "c"), ("q", "b", "unjudged")], {"q": {"a": 3, "b": 1, "c": 3}}
    )
    assert prefs.outcome("q", "b", "a") == "a"
    assert prefs.outcome("q", "c", "a") == TIE
    assert prefs.outcome("q", "b", "unjudged") is None and len(prefs.unjudged) == 1


def test_agreement_with_a_reference():
    judge, grades = Preferences(), Preferences()
    for a, b, w, r in (
        ("a", "b", "a", "a"),
        ("a", "c", "c", "a"),
        ("b", "c", TIE, TIE),
        ("b", "d", TIE, "b"),
    ):
        judge.add("q", a, b, w)
        grades.add("q", a, b, r)
    judge.add("q", "c", "d", "c")  # the reference has no outcome: not compared
    got = agreement(judge, grades)
    assert (got["pairs"], got["same"], got["opposite"], got["both_tie"], got["judge_tie"]) == (4, 1, 1, 1, 1)
    assert got["agreement"] == 0.5 and got["agreement_decided"] == 0.5


def test_win_ratios_with_bonferroni():
    # X's top beats Y's on 20 queries, loses none; Z equals X everywhere (no comparison)
    top = {"X": {}, "Y": {}, "Z": {}}
    prefs = Preferences()
    for i in range(20):
        q = f"q{i}"
        top["X"][q] = top["Z"][q] = f"x{i}"
        top["Y"][q] = f"y{i}"
        prefs.add(q, f"x{i}", f"y{i}", f"x{i}")
    prefs.add("q0", "x0", "y0", "x0")
    r = win_ratios(top, prefs, [f"q{i}" for i in range(20)])
    assert r.comparisons == 3 and r.threshold == pytest.approx(0.05 / 3)
    x, y, z = 0, 1, 2
    assert r.ratio(x, y) == 1.0 and r.ratio(y, x) == 0.0 and math.isnan(r.ratio(x, z))
    assert r.p_values[x, y] == pytest.approx(2 * 0.5**20)
    assert r.significant(x, y) and r.significant(z, y) and not r.significant(y, x)
    rows = r.matrix_rows()
    assert rows[1]["X"] == 1.0 and rows[1]["row"] == "Y"  # column X beats row Y
    assert rows[-1]["X"] == "1/1"


def test_consistency_and_leave_one_run_out():
    prefs = Preferences()
    prefs.add("q", "a", "b", "a")
    prefs.add("q", "a", "c", "c")
    prefs.add("q", "b", "c", "c")
    c = lb.consistency({"q": ["a", "b", "c"]}, prefs)
    assert (c["pairs"], c["agree"]) == (3, 1)
    pools = {"q": {"a": [REFERENCE], "b": ["R1", "R2"], "c": ["R2"]}}
    rankings = {"R1": {"q": ["b", "a", "c"]}, "R2": {"q": ["c", "a", "b"]}}
    assert preference_qrels(pools, prefs).winners == {"q": ["c"]}
    loro = lb.leave_one_run_out(pools, prefs, rankings)
    assert loro["R1"] == {"removed_passages": 0, "mrr": pytest.approx(1 / 3)}
    assert loro["R2"] == {"removed_passages": 1, "mrr": pytest.approx(1 / 2)}  # without c, a wins


def test_leaderboard_values_and_perfect_ranker():
    rankings = {"R1": {"q1": ["a", "b"], "q2": ["c"]}, "R2": {"q1": ["b", "a"]}}
    values = lb.per_query({"q1": {"a": 1}, "q2": {"c": 1}}, rankings, ["q1", "q2"])
    assert values == {"R1": {"q1": 1.0, "q2": 1.0}, "R2": {"q1": 0.5, "q2": 0.0}}
    assert lb.perfect_ranker({"q1": {"x": 1, "y": 3, "z": 0}}, ["q1"], 1) == {"q1": ["y", "x"]}
    ci = lb.mean_intervals(values, n_boot=200, seed=1)
    assert ci["R1"] == (1.0, 1.0) and 0.0 <= ci["R2"][0] <= ci["R2"][1] <= 0.5
