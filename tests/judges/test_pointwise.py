"""Binary, UMBRELA and custom pointwise judges, end to end against the mock LLM server."""

from __future__ import annotations

import dataclasses

import pytest

from _judges_harness import run_judge, sample_inputs
from reljudge.errors import InputError
from reljudge.judges.registry import available_judges, get_judge
from reljudge.prompts import PromptTemplate, get_prompt
from reljudge.testing import MockReply, responders


def by_passage(replies: dict[str, object], default: object = "1"):
    """Answer by which passage (a substring of the prompt) is being judged."""

    def respond(req):
        for needle, reply in replies.items():
            if needle in req.last_user:
                return reply
        return default

    return respond


def test_builtin_judges_are_registered():
    assert {"binary", "umbrela", "pairwise", "exam", "nuggets", "custom"} <= set(available_judges())


async def test_binary_labels_every_pooled_passage_with_provenance():
    inputs = sample_inputs(n_topics=2)
    judge = get_judge("binary")
    out = await run_judge(judge, inputs)
    assert out.calls == 8
    assert len(out.records) == 8
    assert {(r.qid, r.docid) for r in out.records} == {(q, d) for q, ds in inputs.pool.items() for d in ds}
    prompt = get_prompt("binary/trec-assessor")
    for r in out.records:
        assert r.method == "binary" and r.status == "ok" and r.label in (0, 1)
        assert r.raw is not None and r.parse == "exact"
        p = r.provenance
        assert p.prompt_id == "binary/trec-assessor" and p.prompt_sha256 == prompt.sha256
        assert p.backend == "openai" and p.model == "mock-model" and len(p.messages_sha256) == 64
        assert p.usage.calls == 1 and p.usage.prompt_tokens > 0 and p.tool_version == "test"
    assert {r.label for r in out.records} == {0, 1}  # the auto responder varies by passage
    # the passage text reached the prompt under the template's own placeholder
    assert any(inputs.corpus[out.records[0].docid] in p for p in out.prompts)


async def test_binary_yes_no_prompt():
    out = await run_judge(get_judge("binary", prompt="binary/faggioli-yesno"), sample_inputs(n_topics=1))
    assert out.calls == 4
    assert all(r.ok and r.label in (0, 1) for r in out.records)


async def test_umbrela_reads_the_marker_and_names_fallbacks():
    inputs = sample_inputs(n_topics=1)
    out = await run_judge(get_judge("umbrela"), inputs)
    assert all(r.ok and r.label in (0, 1, 2, 3) and r.parse == "marker" for r in out.records)

    pool = inputs.pool[next(iter(inputs.pool))]
    replies = {
        inputs.corpus[pool[0]]: "The passage relates to 3 aspects.\n##final score: 1",
        inputs.corpus[pool[1]]: "I would give it a 2.",
    }
    out = await run_judge(get_judge("umbrela"), inputs, by_passage(replies, "##final score: 3"))
    labels = {r.docid: r for r in out.records}
    assert labels[pool[0]].label == 1 and labels[pool[0]].parse == "marker"
    assert labels[pool[1]].ok and labels[pool[1]].parse.startswith("fallback")
    assert labels[pool[2]].label == 3


async def test_failures_keep_their_status_and_never_carry_a_label():
    inputs = sample_inputs(n_topics=1, n_relevant=3, n_other=3)
    pool = inputs.pool[next(iter(inputs.pool))]
    text = [inputs.corpus[d] for d in pool]
    replies = {
        text[0]: "Hmm, hard to say.",
        text[1]: responders.refused(),
        text[2]: responders.error(400, "bad request (mock)"),
        text[3]: responders.truncated("##final"),
        text[4]: "I'm sorry, but I can't help with that.",
    }
    out = await run_judge(get_judge("umbrela"), inputs, by_passage(replies, "##final score: 2"))
    got = {r.docid: r for r in out.records}
    assert got[pool[0]].status == "unparsed" and got[pool[0]].raw == "Hmm, hard to say."
    assert got[pool[1]].status == "refused"
    assert got[pool[2]].status == "api_error" and "bad request" in got[pool[2]].error
    assert got[pool[3]].status == "truncated" and got[pool[3]].raw == "##final"
    assert got[pool[4]].status == "refused"
    for docid in pool[:5]:
        assert got[docid].label is None and got[docid].error
    assert got[pool[5]].ok and got[pool[5]].label == 2


async def test_missing_or_empty_passages_are_skipped_without_a_call():
    inputs = sample_inputs(n_topics=1)
    qid = next(iter(inputs.pool))
    corpus = dict(inputs.corpus)
    corpus["empty-doc"] = "   "
    inputs = dataclasses.replace(
        inputs, corpus=corpus, pool={qid: [*inputs.pool[qid], "empty-doc", "no-such-doc"]}
    )
    out = await run_judge(get_judge("binary"), inputs)
    assert out.calls == 4
    skipped = {r.docid: r for r in out.records if r.status == "skipped"}
    assert set(skipped) == {"empty-doc", "no-such-doc"}
    assert all(r.label is None and r.error for r in skipped.values())
    assert get_judge("binary").estimate(inputs).calls == 4


async def test_resume_makes_no_calls():
    inputs = sample_inputs(n_topics=2)
    first = await run_judge(get_judge("umbrela"), inputs)
    again = await run_judge(get_judge("umbrela"), inputs, existing=first.existing)
    assert again.calls == 0 and again.records == []
    # a partial earlier run: only the missing items are judged
    partial = dict(list(first.existing.items())[:3])
    rest = await run_judge(get_judge("umbrela"), inputs, existing=partial)
    assert rest.calls == 5 and {r.key for r in rest.records} == set(first.existing) - set(partial)


def test_options_are_checked():
    with pytest.raises(InputError, match="no_such_option"):
        get_judge("binary", no_such_option=1)
    with pytest.raises(InputError, match="needs binary"):
        get_judge("binary", prompt="umbrela/bing-zeroshot")
    with pytest.raises(InputError, match="unknown prompt"):
        get_judge("umbrela", prompt="umbrela/no-such-prompt")
    with pytest.raises(InputError, match="unknown method"):
        get_judge("no-such-judge")


def test_estimate_counts_calls_and_tokens():
    inputs = sample_inputs(n_topics=2)
    est = get_judge("umbrela").estimate(inputs)
    assert est.calls == 8
    # the prompt alone is a few hundred tokens; each passage adds its own length
    assert est.prompt_tokens > 8 * 250
    assert est.completion_tokens == 8 * 8
    assert get_judge("umbrela", max_tokens=100).estimate(inputs).completion_tokens == 800


async def test_custom_inline_graded_prompt():
    judge = get_judge(
        "custom",
        system="You grade relevance.",
        user="Query: {query}\nPassage: {passage}\nGive a grade from 0 to 10.",
        output="graded:0-10",
        method="sweep-a",
    )
    assert judge.label_methods == ("sweep-a",)
    inputs = sample_inputs(n_topics=1)
    pool = inputs.pool[next(iter(inputs.pool))]
    replies = {inputs.corpus[pool[0]]: "11", inputs.corpus[pool[1]]: "Grade: 7"}
    out = await run_judge(judge, inputs, by_passage(replies, "10"))
    got = {r.docid: r for r in out.records}
    assert all(r.method == "sweep-a" and r.provenance.prompt_id == "custom/inline" for r in out.records)
    assert got[pool[0]].status == "unparsed" and got[pool[0]].label is None  # out of range, not clamped
    assert got[pool[1]].label == 7
    assert got[pool[2]].label == 10


async def test_custom_prompt_from_yaml_file(tmp_path):
    path = tmp_path / "mine.yaml"
    path.write_text(
        "id: mine/yesno\noutput: binary:yesno\nuser: |\n  Is this passage relevant to {query}? Respond with 'Yes' or 'No'.\n"
        "  Passage: {document}\n",
        encoding="utf-8",
    )
    judge = get_judge("custom", prompt=str(path))
    out = await run_judge(judge, sample_inputs(n_topics=1))
    assert out.calls == 4 and all(r.ok and r.label in (0, 1) for r in out.records)
    assert all(r.provenance.prompt_id == "mine/yesno" for r in out.records)


def test_custom_options_are_checked():
    with pytest.raises(InputError, match="output declaration"):
        get_judge("custom", user="{query} {passage}")
    with pytest.raises(InputError, match="not both"):
        get_judge("custom", prompt="binary/trec-assessor", user="{query} {passage}")
    with pytest.raises(InputError, match="only apply to pairwise"):
        get_judge("custom", prompt="binary/trec-assessor", pairs="all")
    with pytest.raises(InputError, match="binary, graded or pairwise"):
        get_judge("custom", prompt="nuggets/score")
    tpl = PromptTemplate.from_messages("t/x", None, "{query}\n{document}", "binary")
    assert get_judge("custom", prompt=tpl).prompt is tpl


async def test_custom_with_a_template_object_and_mock_reply():
    tpl = PromptTemplate.from_messages("t/x", None, "Q: {query}\nP: {document}\nAnswer 1 or 0.", "binary")
    out = await run_judge(
        get_judge("custom", prompt=tpl), sample_inputs(n_topics=1), lambda req: MockReply(text="1")
    )
    assert [r.label for r in out.records] == [1, 1, 1, 1]
