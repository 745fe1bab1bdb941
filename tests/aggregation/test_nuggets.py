"""Nugget scores: hand-computed fixtures, edge cases, and a consistency check on the
published gpt-4o nugget qrels."""

from __future__ import annotations

import itertools

import pytest

from reljudge.judges.nuggets.scores import (
    NUGGET_SCORES,
    Nugget,
    assignment_label,
    nugget_id,
    nugget_scores,
    score_passage,
    select_nuggets,
)
from reljudge.records import Judgment


def N(qid: str, text: str, imp: str | None) -> Nugget:
    return Nugget.create(qid, text, imp)  # type: ignore[arg-type]


# T1: 3 vital + 2 okay; T2: okay only; T3: vital only
BANK = [
    N("T1", "v1", "vital"),
    N("T1", "o1", "okay"),
    N("T1", "v2", "vital"),
    N("T1", "o2", "okay"),
    N("T1", "v3", "vital"),
    N("T2", "o1", "okay"),
    N("T2", "o2", "okay"),
    N("T3", "v1", "vital"),
    N("T3", "v2", "vital"),
]
ID = {(n.qid, n.text): n.id for n in BANK}


def A(qid: str, docid: str, text: str, label: float | None, status: str = "ok") -> Judgment:
    return Judgment(
        qid=qid, docid=docid, item_id=ID[(qid, text)], method="nuggets", label=label, status=status
    )


def t1(docid: str = "p", **overrides: float | None) -> list[Judgment]:
    labels = {"v1": 1.0, "v2": 0.5, "v3": 0.0, "o1": 0.5, "o2": 1.0} | overrides
    return [A("T1", docid, t, x) for t, x in labels.items()]


def test_ids_are_content_addressed():
    import hashlib

    assert nugget_id("T1", "abc") == "T1/" + hashlib.md5(b"abc").hexdigest()
    assert Nugget.create("T1", "  abc ").id == nugget_id("T1", "abc")


def test_assignment_labels():
    assert assignment_label("support") == 1.0
    assert assignment_label("Partial Support") == 0.5
    assert assignment_label("not-support") == 0.0
    with pytest.raises(ValueError):
        assignment_label("failed")


def test_select_top_k_vital_first_stable():
    bank = [N("q", f"n{i}", "okay" if i % 2 else "vital") for i in range(30)] + [
        N("r", "x", None),
        N("r", "y", "okay"),
    ]
    sel = select_nuggets(bank, k=20)
    q = [n for n in sel if n.qid == "q"]
    assert len(q) == 20
    assert [n.text for n in q[:15]] == [f"n{i}" for i in range(0, 30, 2)]  # all 15 vital, in order
    assert [n.text for n in q[15:]] == ["n1", "n3", "n5", "n7", "n9"]
    assert [n.text for n in sel if n.qid == "r"] == ["y", "x"]  # unknown importance last
    assert len(select_nuggets(bank, k=None)) == len(bank)


def test_six_scores_hand_computed():
    s = nugget_scores(t1(), BANK).scores["T1"]["p"]
    assert s.all == pytest.approx(3 / 5)
    assert s.all_strict == pytest.approx(2 / 5)
    assert s.vital == pytest.approx(1.5 / 3)
    assert s.vital_strict == pytest.approx(1 / 3)
    assert s.weighted == pytest.approx((1.5 + 0.5 * 1.5) / (3 + 0.5 * 2))  # 0.5625
    assert s.weighted_strict == pytest.approx((1 + 0.5 * 1) / 4)  # 0.375
    assert set(s.as_dict()) == set(NUGGET_SCORES)


def test_thesis_weighting_reproduces_published_example():
    # Arabzadeh & Clarke files, topic 19335 (3 vital, 2 okay): one vital partial -> A 0.1, V 1/6, W 0.2
    vals = [("vital", 0.5), ("vital", 0.0), ("vital", 0.0), ("okay", 0.0), ("okay", 0.0)]
    s = score_passage(vals, weighted="thesis")  # type: ignore[arg-type]
    assert (s.all, s.vital, s.weighted) == pytest.approx((0.1, 1 / 6, 0.2))
    assert score_passage(vals).weighted == pytest.approx(0.5 / 4)  # TREC normalisation
    s = nugget_scores(t1(), BANK, weighted="thesis").scores["T1"]["p"]
    assert s.weighted == pytest.approx(2.25 / 2.5)
    assert s.weighted_strict == pytest.approx(1.5 / 2.5)


def test_topic_without_vital_nuggets():
    js = [A("T2", "p", "o1", 1.0), A("T2", "p", "o2", 0.5)]
    res = nugget_scores(js, BANK)
    s = res.scores["T2"]["p"]
    assert s.vital is None and s.vital_strict is None
    assert s.all == pytest.approx(0.75) and s.all_strict == pytest.approx(0.5)
    assert s.weighted == pytest.approx(0.75) and s.weighted_strict == pytest.approx(0.5)
    assert ("T2", "p", "vital: no vital nugget") in res.exclusions.unscored
    assert "T2" not in res.qrels("vital") and res.qrels("all")["T2"]["p"] == 0.75
    zero = nugget_scores(js, BANK, empty_class="zero").scores["T2"]["p"]
    assert zero.vital == 0.0 and zero.vital_strict == 0.0  # castorini / published behaviour


def test_topic_without_okay_nuggets_has_no_phantom_weight():
    js = [A("T3", "p", "v1", 1.0), A("T3", "p", "v2", 0.0)]
    s = nugget_scores(js, BANK).scores["T3"]["p"]
    assert s.vital == pytest.approx(0.5)
    assert s.weighted == pytest.approx(0.5)  # vectara's max(n,1) would give 1/2.5 = 0.4
    assert s.weighted_strict == pytest.approx(0.5)


def test_failures_are_excluded_from_denominators_and_reported():
    js = t1(v3=None)
    js[2] = A("T1", "p", "v3", None, status="unparsed")
    res = nugget_scores(js, BANK)
    s = res.scores["T1"]["p"]
    assert s.all == pytest.approx(3 / 4)
    assert s.vital == pytest.approx(1.5 / 2)
    assert s.weighted == pytest.approx((1.5 + 0.75) / (2 + 1))
    assert res.exclusions.failed == {"unparsed": 1}
    assert res.exclusions.failed_keys == [("T1", "p", ID[("T1", "v3")])]
    zero = nugget_scores(js, BANK, on_failure="zero")
    assert zero.scores["T1"]["p"].all == pytest.approx(3 / 5)
    assert zero.exclusions.zeroed == 1
    assert "counted as 0" in zero.exclusions.summary()


def test_missing_assignments_and_all_failed_passage():
    js = [A("T1", "p", "v1", 1.0)] + [A("T1", "q", "v1", None, status="api_error")]
    res = nugget_scores(js, BANK)
    assert res.scores["T1"]["p"].all == 1.0
    assert len([m for m in res.exclusions.missing if m[1] == "p"]) == 4
    assert "q" not in res.scores["T1"]
    assert ("T1", "q", "no valid assignment") in res.exclusions.unscored


def test_retry_supersedes_failure_and_conflicts_raise():
    js = [A("T3", "p", "v1", None, status="unparsed"), A("T3", "p", "v1", 1.0), A("T3", "p", "v2", 0.0)]
    res = nugget_scores(js, BANK)
    assert res.exclusions.superseded == 1 and not res.exclusions.failed
    with pytest.raises(ValueError, match="conflicting"):
        nugget_scores(js + [A("T3", "p", "v1", 0.5)], BANK)


def test_bad_input_raises():
    with pytest.raises(ValueError, match="not among"):
        nugget_scores([Judgment(qid="T1", docid="p", item_id="T1/zzz", method="n", label=1.0)], BANK)
    with pytest.raises(ValueError, match="label"):
        nugget_scores([A("T3", "p", "v1", 2)], BANK)
    with pytest.raises(ValueError, match="importance"):
        nugget_scores([], [N("T9", "x", None)])


SIX = ("all", "all_strict", "vital", "vital_strict", "weighted", "weighted_strict")


def _reachable(n_vital: int, n_okay: int, weighted: str) -> set[tuple[float, ...]]:
    out = set()
    for combo in itertools.product((0.0, 0.5, 1.0), repeat=n_vital + n_okay):
        vals = [("vital", x) for x in combo[:n_vital]] + [("okay", x) for x in combo[n_vital:]]
        s = score_passage(vals, weighted=weighted, empty_class="zero")  # type: ignore[arg-type]
        out.add(tuple(round(getattr(s, k), 9) for k in SIX))
    return out


@pytest.mark.shared
@pytest.mark.parametrize(
    "qid,n_vital,n_okay", [("19335", 3, 2), ("1103812", 3, 2), ("527433", 2, 3), ("183378", 5, 1)]
)
def test_published_gpt4o_scores_are_reachable(shared_data, qid, n_vital, n_okay):
    """Every published six-score tuple of the topic is produced by some assignment of its
    nuggets under weighted="thesis", and the TREC normalisation cannot produce them all.
    (Nugget counts inferred from the score denominators; the files hold only final scores.)"""
    base = shared_data / "llm-judgments" / "gpt-4o"
    rows: dict[str, dict[str, float]] = {}
    for name in ("all", "all-strict", "vital", "vital-strict", "weighted", "weighted-strict"):
        for line in (base / f"nuggets-{name}.dl19.qrels").read_text().splitlines():
            q, _, d, x = line.split()
            if q == qid:
                rows.setdefault(d, {})[name] = float(x)
    published = {tuple(round(r[k.replace("_", "-")], 9) for k in SIX) for r in rows.values()}
    assert len(rows) > 50
    assert published <= _reachable(n_vital, n_okay, "thesis")
    assert not published <= _reachable(n_vital, n_okay, "trec")
