"""AutoNuggetizer judge: create, score, select, assign; validation, retries and fallbacks."""

from __future__ import annotations

import json
import re

import pytest

from _judges_harness import run_judge, sample_inputs
from reljudge.errors import InputError
from reljudge.judges.nuggets.scores import Nugget, nugget_id, nugget_scores, select_nuggets
from reljudge.judges.registry import get_judge
from reljudge.testing import AutoResponder

AUTO = AutoResponder()


def n_items(req) -> int | None:
    m = re.search(r"each of the (\d+) nuggets", req.last_user)
    return int(m.group(1)) if m else None


def is_scoring(req) -> bool:
    return "vital or okay" in req.last_user


def bank(out, qid: str) -> list[Nugget]:
    return [
        Nugget(id=r.item_id, qid=r.qid, text=r.extra["text"], importance=r.extra.get("importance"))
        for r in sorted(out.by_method("nugget"), key=lambda r: r.extra["rank"])
        if r.qid == qid
    ]


async def test_full_pipeline_on_the_sample():
    inputs = sample_inputs(n_topics=2, n_relevant=3, n_other=2)
    judge = get_judge("nuggets", window_size=2)
    assert judge.label_methods == ("nugget-assignment",)
    out = await run_judge(judge, inputs)
    for qid in inputs.pool:
        windows = [r for r in out.by_method("nugget-creation") if r.qid == qid]
        assert [r.item_id for r in windows] == ["window/0", "window/1"]  # 3 relevant passages, windows of 2
        assert all(r.ok for r in windows)
        assert len(windows[1].extra["nuggets"]) >= len(windows[0].extra["nuggets"])  # the list grows
        relevant = {d for d, g in inputs.qrels[qid].items() if g > 0}
        assert {d for r in windows for d in r.extra["docids"]} == relevant
        nuggets = bank(out, qid)
        assert nuggets and all(n.importance in ("vital", "okay") for n in nuggets)
        assert [n.text for n in nuggets] == windows[-1].extra["nuggets"]
        assert all(n.id == nugget_id(qid, n.text) for n in nuggets)
        selected = select_nuggets(nuggets)
        flagged = [r for r in out.by_method("nugget") if r.qid == qid and r.extra["selected"]]
        assert {r.item_id for r in flagged} == {n.id for n in selected}
        assigned = [r for r in out.by_method("nugget-assignment") if r.qid == qid]
        assert {(r.docid, r.item_id) for r in assigned} == {
            (d, n.id) for d in inputs.pool[qid] for n in selected
        }
        assert all(r.ok and r.label in (0.0, 0.5, 1.0) for r in assigned)
        assert all(
            {1.0: "support", 0.5: "partial_support", 0.0: "not_support"}[r.label] == r.extra["assignment"]
            for r in assigned
        )
        scores = nugget_scores(assigned, selected)
        assert set(scores.scores[qid]) == set(inputs.pool[qid])
    # usage: summing records counts every call once
    assert sum(r.provenance.usage.calls for r in out.records) == out.calls


async def test_no_relevant_passages_means_no_nuggets_and_no_calls():
    inputs = sample_inputs(n_topics=1, n_relevant=0, n_other=3)
    out = await run_judge(get_judge("nuggets"), inputs)
    assert out.calls == 0
    (rec,) = out.records
    assert rec.method == "nugget" and rec.status == "skipped" and "no relevant passage" in rec.error
    assert get_judge("nuggets").estimate(inputs).calls == 0


async def test_model_creating_no_nuggets_skips_the_topic():
    inputs = sample_inputs(n_topics=1, n_relevant=2, n_other=1)
    out = await run_judge(get_judge("nuggets"), inputs, lambda req: "[]")
    assert out.calls == 1
    creation, skipped = out.by_method("nugget-creation"), out.by_method("nugget")
    assert creation[0].ok and creation[0].extra["nuggets"] == []
    assert skipped[0].status == "skipped" and "no nugget could be created" in skipped[0].error


async def test_batch_length_mismatch_retries_then_falls_back_per_nugget():
    inputs = sample_inputs(n_topics=1, n_relevant=1, n_other=0)
    texts = ["alpha fact one", "beta fact two", "gamma fact three"]

    def respond(req):
        if "Update the list of atomic nuggets" in req.last_user:
            return json.dumps(texts)
        if is_scoring(req):
            return '["vital"]' if n_items(req) == 1 else '["vital", "okay"]'  # batch answers one short
        return AUTO(req)

    out = await run_judge(get_judge("nuggets", retries=3), inputs, respond)
    scoring = [p for p in out.prompts if "vital or okay" in p]
    assert len(scoring) == 1 + 3 + 3  # one batch, three retries, then one call per nugget
    nuggets = out.by_method("nugget")
    assert [r.extra["text"] for r in nuggets] == texts
    assert all(r.ok and r.extra["importance"] == "vital" for r in nuggets)
    assert all(r.parse.startswith("per-item fallback") for r in nuggets)
    # the failed batch attempts are still accounted for (on the first nugget)
    assert nuggets[0].provenance.usage.calls == 5 and nuggets[1].provenance.usage.calls == 1
    assert len(out.by_method("nugget-assignment")) == 3


async def test_a_retry_that_succeeds_and_a_nugget_that_never_parses():
    inputs = sample_inputs(n_topics=1, n_relevant=1, n_other=1)
    texts = ["alpha fact one", "beta fact two"]

    def respond(req):
        if "Update the list of atomic nuggets" in req.last_user:
            return json.dumps(texts)
        if is_scoring(req):
            return '["vital", "okay"]'
        if req.seen == 0 and n_items(req) == 2:
            return '["support", "maybe"]'  # out of vocabulary on the first try
        if n_items(req) == 1 and "beta" in req.last_user.split("Nugget List:")[-1]:
            return "no idea"
        return AUTO(req)

    out = await run_judge(get_judge("nuggets", retries=1), inputs, respond)
    assigned = out.by_method("nugget-assignment")
    assert len(assigned) == 4 and all(r.ok for r in assigned)
    assert all("retry 1" in r.parse for r in assigned)
    # retries ask again with a new seed and temperature 0.2 (not the cached answer)
    retry_bodies = [
        r.body for r in out.server_requests if n_items(r) == 2 and r.seen == 1 and not is_scoring(r)
    ]
    assert retry_bodies and all(b.get("temperature") == 0.2 for b in retry_bodies)

    def never(req):
        if n_items(req) == 2 and not is_scoring(req):
            return "garbage"
        return respond(req)

    out = await run_judge(get_judge("nuggets", retries=0), inputs, never)
    assigned = out.by_method("nugget-assignment")
    failed = [r for r in assigned if not r.ok]
    beta = nugget_id(next(iter(inputs.pool)), "beta fact two")
    assert len(assigned) == 4 and len(failed) == 2
    assert all(r.item_id == beta and r.status == "unparsed" and r.label is None for r in failed)
    assert all("batch:" in r.error and r.raw == "no idea" for r in failed)


async def test_resume_makes_no_calls_and_continues_assignment():
    inputs = sample_inputs(n_topics=1, n_relevant=2, n_other=2)
    first = await run_judge(get_judge("nuggets"), inputs)
    again = await run_judge(get_judge("nuggets"), inputs, existing=first.existing)
    assert again.calls == 0 and again.records == []
    no_assign = {k: r for k, r in first.existing.items() if r.method != "nugget-assignment"}
    rest = await run_judge(get_judge("nuggets"), inputs, existing=no_assign)
    assert not any("Update the list" in p or "vital or okay" in p for p in rest.prompts)
    assert {r.key for r in rest.records} == {
        k for k, r in first.existing.items() if r.method == "nugget-assignment"
    }


async def test_create_from_pool_and_missing_qrels():
    inputs = sample_inputs(n_topics=1, n_relevant=1, n_other=2, qrels=False)
    with pytest.raises(InputError, match="create_from='pool'"):
        await run_judge(get_judge("nuggets"), inputs)
    out = await run_judge(get_judge("nuggets", create_from="pool", grades=2), inputs)
    (window,) = out.by_method("nugget-creation")
    assert set(window.extra["docids"]) == set(inputs.pool[next(iter(inputs.pool))])
    assert all(r.label in (0.0, 1.0) for r in out.by_method("nugget-assignment"))
    assert all(r.provenance.prompt_id == "nuggets/assign-2grade" for r in out.by_method("nugget-assignment"))


async def test_max_nuggets_and_top_k():
    inputs = sample_inputs(n_topics=1, n_relevant=1, n_other=1)
    many = [f"fact number {i}" for i in range(40)]

    def respond(req):
        if "Update the list of atomic nuggets" in req.last_user:
            assert "at most 5 nuggets" in req.last_user
            return json.dumps(many)
        return AUTO(req)

    out = await run_judge(get_judge("nuggets", max_nuggets=5, top_k=3), inputs, respond)
    assert len(out.by_method("nugget")) == 5
    assert sum(r.extra["selected"] for r in out.by_method("nugget")) == 3
    assert len(out.by_method("nugget-assignment")) == 2 * 3


def test_nugget_options():
    with pytest.raises(InputError, match="grades"):
        get_judge("nuggets", grades=4)
    with pytest.raises(InputError, match="window_size"):
        get_judge("nuggets", window_size=0)
    with pytest.raises(InputError, match="needs labels"):
        get_judge("nuggets", prompt="binary/trec-assessor")
    inputs = sample_inputs(n_topics=1, n_relevant=3, n_other=2)
    est = get_judge("nuggets", window_size=2).estimate(inputs)
    assert "2 creation" in est.note and est.calls > 0


def test_nuggets_are_created_from_the_relevant_grades_of_the_collection_scale():
    from reljudge.judges.base import JudgeInputs
    from reljudge.judges.nuggets import NuggetJudge

    qrels = {"q": {"a": 1, "b": 2, "c": 4}}
    corpus = {"a": "text a", "b": "text b", "c": "text c"}
    base = dict(topics={"q": "query"}, corpus=corpus, pool={"q": ["a", "b", "c"]}, qrels=qrels)
    judge = NuggetJudge()
    # TREC DL scale (0 = non-relevant): every grade >= 1 is a source
    assert judge.sources(JudgeInputs(**base), "q") == ["c", "b", "a"]
    # ANTIQUE scale (1 = non-relevant): grade 1 is not
    antique = JudgeInputs(**base, resources={"nonrelevant_grade": 1})
    assert judge.sources(antique, "q") == ["c", "b"]
    # an explicit min_grade wins
    assert NuggetJudge(min_grade=3).sources(antique, "q") == ["c"]
