"""Combining the two presentation orders, and Borda-like win counting."""

from __future__ import annotations

import pytest

from reljudge.judges.pairwise.preferences import combine_orders, count_wins
from reljudge.records import Judgment


@pytest.mark.parametrize(
    "ab,ba,expected",
    [
        (1, 2, 1),  # a first and a second: a wins
        (2, 1, 2),  # b both times
        (1, 1, 0),  # always the first shown: position bias -> tie
        (2, 2, 0),  # always the second shown -> tie
        (0, 0, 0),
        (1, 0, 0),  # one order says tie -> disagreement -> tie
        (0, 2, 0),
        (None, 2, None),
        (1, None, None),
        (None, None, None),
    ],
)
def test_combine_orders_all_cases(ab, ba, expected):
    assert combine_orders(ab, ba) == expected


@pytest.mark.parametrize(
    "ab,ba,expected", [(None, 2, 1), (None, 1, 2), (None, 0, 0), (1, None, 1), (2, None, 2)]
)
def test_combine_orders_use_other(ab, ba, expected):
    # judge.py pref(): when one order is unparsed, the other decides
    assert combine_orders(ab, ba, one_sided="use-other") == expected


def test_combine_orders_rejects_bad_labels():
    with pytest.raises(ValueError):
        combine_orders(3, 1)


def P(a: str, b: str, label: int | None, qid: str = "q", status: str = "ok", **kw) -> Judgment:
    return Judgment(qid=qid, docid=a, docid_b=b, method="pairwise", label=label, status=status, **kw)


def test_win_counting_with_ties():
    js = [P("a", "b", 1), P("a", "c", 1), P("c", "b", 0), P("d", "b", 2), P("a", "d", 0)]
    none = count_wins(js)
    assert none.scores == {"q": {"a": 2.0, "b": 1.0, "c": 0.0, "d": 0.0}}
    assert none.never_won == {"q": ["c", "d"]}
    assert none.nonzero() == {"q": {"a": 2.0, "b": 1.0}}
    half = count_wins(js, ties="half")
    assert half.scores == {"q": {"a": 2.5, "b": 1.5, "c": 0.5, "d": 0.5}}
    assert half.never_won == {}
    lengths = {"a": 50, "b": 10, "c": 30, "d": 50}
    shorter = count_wins(js, ties="shorter", lengths=lengths)
    # c-b tie -> b (shorter); a-d tie, equal lengths -> docid_b (d), as judge.py logs it
    assert shorter.scores == {"q": {"a": 2.0, "b": 2.0, "c": 0.0, "d": 1.0}}
    with pytest.raises(ValueError, match="lengths"):
        count_wins(js, ties="shorter")


def test_failed_pairs_and_duplicates():
    js = [
        P("a", "b", 1),
        P("b", "a", 2),
        P("a", "c", None, status="api_error"),
        P("d", "e", None, status="unparsed"),
    ]
    res = count_wins(js)
    assert res.scores == {"q": {"a": 1.0, "b": 0.0}}  # (b, a, 2) is the same outcome, counted once
    assert res.exclusions.duplicates == 1
    assert res.exclusions.failed == {"api_error": 1, "unparsed": 1}
    assert {(q, d) for q, d, _ in res.exclusions.unscored} == {("q", "c"), ("q", "d"), ("q", "e")}
    with pytest.raises(ValueError, match="conflicting"):
        count_wins([P("a", "b", 1), P("b", "a", 1)])
    with pytest.raises(ValueError, match="docid_b"):
        count_wins([Judgment(qid="q", docid="a", method="pairwise", label=1)])
