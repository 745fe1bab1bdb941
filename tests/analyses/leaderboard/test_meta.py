"""Leaderboard meta-evaluation (`reljudge.analyses.leaderboard.meta`): the numbers equal TREC
AutoJudge's own (autojudge-evaluate 1.1.0, fixed reference values below) and a computation
written from the definitions (brute force over pairs); no measure depends on the order the
leaderboards list their runs or topics."""

from __future__ import annotations

import json
import math
import random
from itertools import combinations
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reljudge.analyses.leaderboard.files import read_leaderboard
from reljudge.analyses.leaderboard.meta import leaderboard, meta_evaluate, top_runs
from reljudge.errors import InputError
from reljudge.metrics.ranking import tau_ap_b, tau_gap

DATA = Path(__file__).parent / "data"
OURS = {
    "kendall": "kendall_tau_b",
    "tauap_b": "tau_ap_b",
    "tau_gap": "tau_gap",
    "spearman": "spearman",
    "pearson": "pearson",
}

# Produced by autojudge-evaluate 1.1.0 (with autojudge-base 1.0.0, scipy 1.17.1, pandas 3.1.1) in a
# separate virtualenv, on data/truth.eval.txt and data/judge.eval.txt (made by
# data/make_leaderboards.py):
#   auto-judge-evaluate meta-evaluate --truth-leaderboard truth.eval.txt --truth-format ir_measures \
#     --eval-format ir_measures --no-truth-header --no-eval-header --correlation kendall \
#     --correlation tauap_b --correlation tau_gap --correlation spearman --correlation pearson \
#     --correlation kendall@5 --correlation tauap_b@5 --correlation tau_gap@5 judge.eval.txt
# (which prints 10 digits); the full floats from the same evaluator in Python,
# LeaderboardEvaluator(...).evaluate(Path("judge.eval.txt")) with those correlation methods (and
# spearman@5, pearson@5). autojudge-base downloads NLTK data at import: it ran offline with
# NLTK_DATA pointing at a stub holding tokenizers/punkt/ and corpora/stopwords/english.
AUTOJUDGE = {
    ("R@100", "NUGGET"): {
        "kendall": 1.0, "tauap_b": 1.0, "tau_gap": 1.0, "spearman": 1.0, "pearson": 0.9579043843356481,
        "kendall@5": 1.0, "tauap_b@5": 1.0, "tau_gap@5": 1.0, "spearman@5": 1.0, "pearson@5": 0.916998513093672,
    },
    ("R@100", "UMBRELA"): {
        "kendall": 0.0, "tauap_b": -0.003061224489796066, "tau_gap": 0.019624370967757265,
        "spearman": -0.012275715403505907, "pearson": -0.025138132240777867,
        "kendall@5": 0.10540925533894598, "tauap_b@5": 0.27083333333333326, "tau_gap@5": 0.18830219772953782,
        "spearman@5": 0.20519567041703082, "pearson@5": 0.18899028545755397,
    },
    ("nDCG@10", "NUGGET"): {
        "kendall": 0.8571428571428571, "tauap_b": 0.8999999999999998, "tau_gap": 0.9819468170727439,
        "spearman": 0.9285714285714286, "pearson": 0.99174992213229,
        "kendall@5": 1.0, "tauap_b@5": 1.0, "tau_gap@5": 1.0, "spearman@5": 1.0, "pearson@5": 0.9891012143949968,
    },
    ("nDCG@10", "UMBRELA"): {
        "kendall": 0.1543033499620919, "tauap_b": 0.11836734693877538, "tau_gap": 0.07215107551710398,
        "spearman": 0.1964114464560945, "pearson": 0.11731981901420471,
        "kendall@5": -0.10540925533894598, "tauap_b@5": -0.04166666666666674, "tau_gap@5": -0.2763048464638045,
        "spearman@5": -0.20519567041703082, "pearson@5": -0.18563584356919155,
    },
}  # fmt: skip
# The same evaluator with runH removed from the judge's leaderboard (grep -v '^runH'), methods
# kendall, tauap_b, tau_gap, spearman, pearson (no @k: autojudge-evaluate keeps only the shared
# runs for every method once one @k method is asked), --on-missing default and skip.
AUTOJUDGE_MISSING = {
    "default": {
        ("R@100", "NUGGET"): {"kendall": 0.8571428571428571, "tauap_b": 0.9149659863945577,
                              "tau_gap": 0.9755628794943161, "spearman": 0.9285714285714286,
                              "pearson": 0.9456456907476096},
        ("nDCG@10", "UMBRELA"): {"kendall": 0.18898223650461363, "tauap_b": 0.1455782312925168,
                                 "tau_gap": 0.07215107551710398, "spearman": 0.2439750182371333,
                                 "pearson": 0.28445515258274956},
    },
    "skip": {
        ("R@100", "NUGGET"): {"kendall": 1.0, "tauap_b": 1.0, "tau_gap": 1.0, "spearman": 1.0,
                              "pearson": 0.9548695957960674},
        ("nDCG@10", "UMBRELA"): {"kendall": 0.0, "tauap_b": 0.03888888888888886,
                                 "tau_gap": -0.07862740797685275, "spearman": -0.03706246583305506,
                                 "pearson": -0.04569858835054689},
    },
}  # fmt: skip


def _same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or a == pytest.approx(b, rel=1e-12, abs=1e-12)


def _values(report, scope: str = "all") -> dict[tuple[str, str], dict[str, float]]:
    found: dict[tuple[str, str], dict[str, float]] = {}
    for row in report.correlations:
        if row["runs"] == scope:
            found.setdefault((row["truth_measure"], row["judge_measure"]), {})[row["measure"]] = row["value"]
    return found


@pytest.fixture(scope="module")
def boards():
    return read_leaderboard(DATA / "judge.eval.txt"), read_leaderboard(DATA / "truth.eval.txt")


@pytest.mark.slow  # scipy's first import and the bootstrap: about 1-3 s on a loaded machine
def test_the_numbers_equal_autojudge_evaluates_own(boards):
    report = meta_evaluate(*boards, top_k=5, n_boot=0)
    full, top = _values(report), _values(report, "top 5")
    assert set(full) == set(AUTOJUDGE)
    for pair, expected in AUTOJUDGE.items():
        for theirs, value in expected.items():
            name, _, k = theirs.partition("@")
            ours = (top if k else full)[pair][OURS[name]]
            assert _same(ours, value), (pair, theirs, ours, value)


def test_per_topic_numbers_equal_autojudge_evaluates_evaluate_per_topic(boards):
    reference = json.loads((DATA / "autojudge_per_topic.json").read_text())
    assert "autojudge-evaluate 1.1.0" in reference["produced_by"]
    report = meta_evaluate(*boards, top_k=5, n_boot=0)
    ours = {
        (r["truth_measure"], r["judge_measure"], r["topic"], r["measure"], r["runs"]): r["value"]
        for r in report.per_topic
    }
    checked = 0
    for pair, topics in reference["per_topic"].items():
        tm, jm = pair.split("|")
        for topic, values in topics.items():
            for theirs, value in values.items():
                name, _, k = theirs.partition("@")
                got = ours[(tm, jm, topic, OURS[name], "top 5" if k else "all")]
                assert _same(got, value), (pair, topic, theirs, got, value)
                checked += 1
    assert checked == 4 * 5 * 10
    # the mean over topics the report gives is the mean of those values
    row = next(
        r
        for r in report.correlations
        if (r["truth_measure"], r["judge_measure"], r["runs"], r["measure"])
        == ("nDCG@10", "NUGGET", "all", "kendall_tau_b")
    )
    kendalls = [v["kendall"] for v in reference["per_topic"]["nDCG@10|NUGGET"].values()]
    assert row["per_topic_mean"] == pytest.approx(np.mean(kendalls)) and row["per_topic_topics"] == 5


@pytest.mark.parametrize(("missing", "theirs"), [("zero", "default"), ("drop", "skip")])
def test_missing_run_policies_equal_autojudge_evaluates(tmp_path, missing, theirs):
    lines = (DATA / "judge.eval.txt").read_text().splitlines()
    (tmp_path / "judge.txt").write_text("\n".join(x for x in lines if not x.startswith("runH")) + "\n")
    judge = read_leaderboard(tmp_path / "judge.txt")
    truth = read_leaderboard(DATA / "truth.eval.txt")
    report = meta_evaluate(judge, truth, missing=missing, n_boot=0)
    found = _values(report)
    for pair, expected in AUTOJUDGE_MISSING[theirs].items():
        for name, value in expected.items():
            assert _same(found[pair][OURS[name]], value), (missing, pair, name)
    assert report.pairs[0]["truth_only_runs"] == ["runH"]


def test_runs_in_one_leaderboard_only_are_an_error_naming_them(tmp_path):
    lines = (DATA / "judge.eval.txt").read_text().splitlines()
    (tmp_path / "judge.txt").write_text(
        "\n".join(x for x in lines if not x.startswith(("runH", "runC"))) + "\n"
    )
    with pytest.raises(InputError, match=r"not in the judge's: runC, runH.*--missing drop"):
        meta_evaluate(
            read_leaderboard(tmp_path / "judge.txt"), read_leaderboard(DATA / "truth.eval.txt"), n_boot=0
        )


# --- the definitions, brute force over pairs ------------------------------------------------


def kendall_tau_b_by_pairs(x, y) -> float:
    concordant = discordant = tied_x = tied_y = 0
    for i, j in combinations(range(len(x)), 2):
        dx, dy = np.sign(x[i] - x[j]), np.sign(y[i] - y[j])
        if dx == 0 and dy == 0:
            continue
        if dx == 0:
            tied_x += 1
        elif dy == 0:
            tied_y += 1
        elif dx == dy:
            concordant += 1
        else:
            discordant += 1
    den = math.sqrt((concordant + discordant + tied_x) * (concordant + discordant + tied_y))
    return (concordant - discordant) / den if den else math.nan


def tau_ap_b_by_pairs(x, y) -> float:
    """Urbano & Marrero's τ_AP-b: the mean of the two directions; a direction walks one ranking
    below its top tie group and, for each item, takes the share of the items strictly above it
    that the other ranking also puts strictly above it."""

    def direction(walked, other) -> float:
        shares = []
        for i in range(len(walked)):
            above = [j for j in range(len(walked)) if walked[j] > walked[i]]
            if above:
                shares.append(sum(other[j] > other[i] for j in above) / len(above))
        return 2 * sum(shares) / len(shares) - 1 if shares else math.nan

    return (direction(y, x) + direction(x, y)) / 2


def tau_gap_by_pairs(truth, predicted) -> float:
    """Gao & Oard's τ_GAP written from the formula, the prediction's ties broken by position."""
    order = sorted(range(len(truth)), key=lambda k: (-predicted[k], k))
    terms = []
    for i in range(1, len(order)):
        gaps = sum(abs(truth[order[j]] - truth[order[i]]) for j in range(i))
        right = sum(
            abs(truth[order[j]] - truth[order[i]]) for j in range(i) if truth[order[j]] > truth[order[i]]
        )
        if gaps > 0:
            terms.append(right / gaps)
    return 2 * sum(terms) / len(terms) - 1 if terms else math.nan


grades = st.lists(st.integers(0, 4), min_size=3, max_size=9)


@pytest.mark.slow  # 150 examples: about 1.5 s
@settings(max_examples=150, deadline=None)
@given(st.data())
def test_the_measures_equal_their_definitions_by_brute_force(data):
    x = data.draw(grades)
    y = data.draw(st.lists(st.integers(0, 4), min_size=len(x), max_size=len(x)))
    xa, ya = np.array(x, float), np.array(y, float)
    from reljudge.metrics.ranking import KENDALL_TAU_B

    if np.ptp(xa) and np.ptp(ya):
        assert _same(KENDALL_TAU_B.compute(xa, ya), kendall_tau_b_by_pairs(x, y))
    assert _same(tau_ap_b(xa, ya), tau_ap_b_by_pairs(x, y))
    assert _same(tau_gap(xa, ya), tau_gap_by_pairs(x, y))


def test_tau_gap_weighs_a_swap_at_the_head_and_across_a_large_gap_more():
    truth = [0.9, 0.5, 0.45, 0.1]
    head = tau_gap(truth, [3, 4, 2, 1])  # the top two swapped
    tail = tau_gap(truth, [4, 3, 1, 2])  # the bottom two swapped
    assert head < tail < 1.0
    assert tau_gap(truth, [4, 3, 2, 1]) == 1.0 and tau_gap(truth, [1, 2, 3, 4]) == -1.0
    assert math.isnan(tau_gap([1, 1, 1], [1, 2, 3]))  # no truth gap at all


def test_tau_ap_b_is_nan_where_autojudge_evaluate_scores_an_all_tied_direction_0():
    # autojudge-evaluate 1.1.0's pyircore returns 0.0 for the direction walking a ranking that
    # ties every run, and averages it in: (0 + -1) / 2 = -0.5 here; undefined is what it is
    assert math.isnan(tau_ap_b(np.array([3.0, 2, 1]), np.array([1.0, 1, 1])))


# --- order invariance -----------------------------------------------------------------------


def _shuffled(path: Path, out: Path, seed: int) -> Path:
    lines = path.read_text().splitlines()
    random.Random(seed).shuffle(lines)
    out.write_text("\n".join(lines) + "\n")
    return out


@pytest.mark.slow  # scipy's first import and the bootstrap: about 1-3 s on a loaded machine
def test_no_number_depends_on_the_order_of_the_lines(tmp_path):
    judge = read_leaderboard(DATA / "judge.eval.txt")
    truth = read_leaderboard(DATA / "truth.eval.txt")
    before = meta_evaluate(judge, truth, top_k=5, n_boot=40)
    for seed in (1, 2):
        shuffled = meta_evaluate(
            read_leaderboard(_shuffled(DATA / "judge.eval.txt", tmp_path / "j.txt", seed)),
            read_leaderboard(_shuffled(DATA / "truth.eval.txt", tmp_path / "t.txt", seed + 10)),
            top_k=5,
            n_boot=40,
        )
        assert len(shuffled.correlations) == len(before.correlations)
        for a, b in zip(before.correlations, shuffled.correlations, strict=True):
            assert a.keys() == b.keys()
            for key in a:
                same = _same(a[key], b[key]) if isinstance(a[key], float) else a[key] == b[key]
                assert same, (key, a, b)
        assert [r["value"] for r in before.per_topic] == pytest.approx(
            [r["value"] for r in shuffled.per_topic], nan_ok=True
        )


def test_top_k_breaks_ties_at_the_cut_by_run_id_whatever_the_order():
    truth = {"c": 0.5, "a": 0.5, "b": 0.9, "d": 0.5}
    assert top_runs(truth, list(truth), 2) == ["a", "b"]
    assert top_runs(dict(reversed(list(truth.items()))), sorted(truth, reverse=True), 2) == ["a", "b"]


@pytest.mark.slow  # scipy's first import and the bootstrap: about 1-3 s on a loaded machine
def test_intervals_are_over_topics_and_say_what_they_are(boards):
    report = meta_evaluate(*boards, top_k=5, n_boot=200, seed=1)
    assert "resamples of the topics" in report.settings["interval_note"]
    for row in report.correlations:
        if row["runs"] == "all" and math.isfinite(row["ci_low"]):
            assert row["ci_low"] <= row["ci_estimate"] <= row["ci_high"]
            assert row["ci_topics"] == 5
            # the 'all' rows are the topic means here, so the interval is centred on the value
            assert row["ci_estimate"] == pytest.approx(row["value"], abs=1e-9), row


def test_a_measure_without_all_rows_is_aggregated_by_its_mean_and_says_so():
    per_topic = {"m": {"a": {"q1": 1.0, "q2": 3.0}, "b": {"q1": 2.0, "q2": 2.0}}}
    board = leaderboard("x", "ir_measures", per_topic, {})
    assert board.aggregate["m"] == {"a": 2.0, "b": 2.0} and board.aggregate_from["m"] == "mean over topics"
    with pytest.raises(InputError, match="'all' rows, but not for run"):
        leaderboard("x", "ir_measures", per_topic, {"m": {"a": 2.0}})


def test_all_rows_that_are_not_the_topic_means_are_the_value_and_the_console_says_so(tmp_path):
    from reljudge.analyses.leaderboard.command import format_meta

    lines = (DATA / "judge.eval.txt").read_text().splitlines()
    # runA's NUGGET aggregate made the best (a median, say, rather than the mean)
    moved = [x.replace(x.split("\t")[3], "0.99") if x.startswith("runA\tall\tNUGGET") else x for x in lines]
    path = tmp_path / "judge.txt"
    path.write_text("\n".join(moved) + "\n")
    report = meta_evaluate(
        read_leaderboard(path),
        read_leaderboard(DATA / "truth.eval.txt"),
        judge_measures=["NUGGET"],
        n_boot=50,
    )
    row = next(r for r in report.correlations if r["measure"] == "kendall_tau_b" and r["runs"] == "all")
    assert row["value"] != pytest.approx(row["ci_estimate"])
    assert "are centred on the runs' means over the shared topics" in " ".join(format_meta(report).split())
