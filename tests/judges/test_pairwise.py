"""Pairwise judge (both orders, combine_orders) and custom pairwise prompts, against the mock."""

from __future__ import annotations

import dataclasses
import re

import pytest

from _judges_harness import run_judge, sample_inputs
from reljudge.errors import InputError
from reljudge.judges.pairwise import sampler_pair_bound
from reljudge.judges.registry import get_judge
from reljudge.testing import responders


def shown(req) -> tuple[str, str]:
    m = re.search(r"Passage 1:\n(.*)\nPassage 2:\n(.*)\n", req.last_user, re.DOTALL)
    assert m, req.last_user
    return m.group(1), m.group(2)


def prefer_longer(req) -> str:
    """A position-independent judge: the longer passage answers better."""
    first, second = shown(req)
    return "1" if len(first) >= len(second) else "2"


async def test_all_pairs_are_judged_in_both_orders():
    inputs = sample_inputs(n_topics=1)
    qid = next(iter(inputs.pool))
    judge = get_judge("pairwise")
    out = await run_judge(judge, inputs, prefer_longer)
    assert len(out.records) == 6 and out.calls == 12
    assert judge.comparisons == {qid: 6}
    for r in out.records:
        assert r.method == "pairwise" and r.status == "ok" and r.docid and r.docid_b
        a, b = inputs.corpus[r.docid], inputs.corpus[r.docid_b]
        assert r.label == (1 if len(a) > len(b) else 2)
        ab, ba = r.extra["orders"]["ab"], r.extra["orders"]["ba"]
        assert ab["first"] == r.docid and ba["first"] == r.docid_b
        assert ab["label"] != ba["label"]  # consistent judge: opposite answers when swapped
        assert ab["messages_sha256"] != ba["messages_sha256"]
        assert r.provenance.messages_sha256 == ab["messages_sha256"]
        assert r.provenance.usage.calls == 2
        assert f"[{r.docid} shown first]" in r.raw and f"[{r.docid_b} shown first]" in r.raw
        assert r.parse == "exact|exact"
    # each pair was really sent in both orders
    sent = {shown_pair for shown_pair in (tuple(re.findall(r"Passage \d:\n(.*?)\n", p)) for p in out.prompts)}
    assert len(out.prompts) == 12 and len(sent) == 12


async def test_position_bias_gives_ties():
    out = await run_judge(get_judge("pairwise"), sample_inputs(n_topics=1), responders.fixed("1"))
    assert len(out.records) == 6
    assert all(r.ok and r.label == 0 for r in out.records)


async def test_one_failed_order_fails_the_pair():
    inputs = sample_inputs(n_topics=1, n_relevant=2, n_other=0)
    a, b = inputs.pool[next(iter(inputs.pool))]

    def respond(req):
        first, _ = shown(req)
        return "Both are fine." if first == inputs.corpus[b] else "1"

    out = await run_judge(get_judge("pairwise"), inputs, respond)
    (r,) = out.records
    assert r.status == "unparsed" and r.label is None
    assert r.extra["orders"]["ab"]["label"] == 1 and r.extra["orders"]["ba"]["status"] == "unparsed"
    assert f"order {b} first" in r.error

    out = await run_judge(get_judge("pairwise"), inputs, responders.error(500))
    assert out.records[0].status == "api_error" and out.records[0].label is None


async def test_given_pairs_and_missing_passages():
    inputs = sample_inputs(n_topics=1)
    qid = next(iter(inputs.pool))
    d = inputs.pool[qid]
    given = dataclasses.replace(inputs, pairs={qid: [(d[0], d[1]), (d[2], "no-such-doc"), (d[1], d[0])]})
    judge = get_judge("pairwise", pairs="given")
    assert judge.estimate(given).calls == 2
    out = await run_judge(judge, given, prefer_longer)
    assert out.calls == 2
    assert sorted((r.docid, r.docid_b, r.status) for r in out.records) == sorted(
        [(d[0], d[1], "ok"), (d[2], "no-such-doc", "skipped")]
    )
    with pytest.raises(InputError, match="explicit pairs"):
        await run_judge(get_judge("pairwise", pairs="given"), inputs)


async def test_sampler_stays_below_p_n_and_resumes_without_calls():
    inputs = sample_inputs(n_topics=1, n_relevant=8, n_other=8)
    qid = next(iter(inputs.pool))
    n = len(inputs.pool[qid])
    assert n == 16
    judge = get_judge("pairwise", pairs="sampler", p=5, seed=3)
    out = await run_judge(judge, inputs, prefer_longer)
    comparisons = judge.comparisons[qid]
    assert comparisons == len(out.records)
    assert out.calls <= 2 * comparisons  # identical prompts (duplicate passage texts) are asked once
    assert n * 5 / 2 <= comparisons < 5 * n  # at least one full round, below P*n
    assert comparisons < n * (n - 1) / 2
    # the longest passage wins every comparison, so it tops the sampler's ranking
    longest = max(inputs.pool[qid], key=lambda d: len(inputs.corpus[d]))
    assert judge.rankings[qid][0] == longest
    est = get_judge("pairwise", pairs="sampler", p=5).estimate(inputs)
    assert "estimate" in est.note and est.calls >= out.calls
    assert est.calls == 2 * sampler_pair_bound(n, 5, 9)

    again = get_judge("pairwise", pairs="sampler", p=5, seed=3)
    resumed = await run_judge(again, inputs, prefer_longer, existing=out.existing)
    assert resumed.calls == 0 and resumed.records == []
    assert again.comparisons[qid] == comparisons and again.rankings == judge.rankings


async def test_all_pairs_resume_and_estimate():
    inputs = sample_inputs(n_topics=2)
    judge = get_judge("pairwise")
    est = judge.estimate(inputs)
    assert est.calls == 2 * 2 * 6 and "n(n-1)/2" in est.note
    out = await run_judge(judge, inputs)
    assert out.calls == est.calls
    again = await run_judge(get_judge("pairwise"), inputs, existing=out.existing)
    assert again.calls == 0


def test_sampler_bound_grows_linearly_not_quadratically():
    assert sampler_pair_bound(9, 7, 9) == 36  # small pools: all pairs
    for n in (50, 100, 400):
        assert sampler_pair_bound(n, 7, 9) < 7 * n < n * (n - 1) // 2


async def test_custom_pairwise_prompt_is_judged_in_both_orders():
    judge = get_judge(
        "custom",
        user="Query: {query}\nPassage 1:\n{documentA}\nPassage 2:\n{documentB}\nWhich is better, 1 or 2?",
        output="pairwise",
        method="pref-sweep",
    )
    out = await run_judge(judge, sample_inputs(n_topics=1), responders.fixed("2"))
    assert out.calls == 12 and len(out.records) == 6
    assert all(r.method == "pref-sweep" and r.label == 0 for r in out.records)
    out = await run_judge(judge, sample_inputs(n_topics=1), prefer_longer)
    assert all(r.label in (1, 2) for r in out.records)


def test_pairwise_options():
    with pytest.raises(InputError, match="pairs"):
        get_judge("pairwise", pairs="some")
    with pytest.raises(InputError, match="needs pairwise"):
        get_judge("pairwise", prompt="binary/trec-assessor")


def test_given_pairs_are_validated():
    inputs = sample_inputs(n_topics=1)
    qid = next(iter(inputs.pool))
    d = inputs.pool[qid]
    judge = get_judge("pairwise", pairs="given")
    for bad, message in (([(d[0], d[0])], "paired with itself"), ([(d[0], d[1])] * 2, "repeats pair 1")):
        with pytest.raises(InputError, match=message):
            judge.estimate(dataclasses.replace(inputs, pairs={qid: bad}))


def test_estimate_counts_one_label_record_per_two_calls():
    from reljudge.judges.base import CallEstimate, JudgeInputs
    from reljudge.judges.registry import get_judge

    inputs = JudgeInputs(
        topics={"q": "query"},
        corpus={"a": "text a", "b": "text b", "c": "text c"},
        pool={"q": ["a", "b", "c"]},
    )
    est = get_judge("pairwise", pairs="all").estimate(inputs)
    assert est.calls == 6 and est.label_records == 3  # 3 pairs, both orders
    assert (est + CallEstimate(4, 0, 0)).label_records == 7
    assert CallEstimate(4, 0, 0).label_records == 4
