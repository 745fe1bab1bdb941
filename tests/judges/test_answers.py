"""How judges treat what comes back: an unreadable answer is not replayed from the cache and is
asked once more; a huge answer is stored clipped; every answer has a bounded length; a record
that cannot be built from an answer is `unparsed`, not the end of the job (issue: trust under
hostile conditions, items 5, 8 and 12)."""

from __future__ import annotations

from typing import ClassVar

from _judges_harness import sample_inputs
from reljudge.judges.context import JudgeContext
from reljudge.judges.pointwise import PointwiseJudge
from reljudge.judges.reading import RAW_MAX_CHARS
from reljudge.judges.registry import get_judge
from reljudge.llm import ClientConfig, LLMClient
from reljudge.prompts.parsing import Parsed
from reljudge.records import Judgment
from reljudge.testing import MockLLMServer, PerPrompt, responders


def _config(srv: MockLLMServer, tmp_path, **kw) -> ClientConfig:
    base = dict(
        model="openai/mock-model",
        base_url=srv.openai_url,
        api_key="test-key",
        cache_path=tmp_path / "cache.sqlite",
        timeout_s=30.0,
        max_attempts=1,
    )
    base.update(kw)
    return ClientConfig(**base)


async def _judge(judge, inputs, srv, tmp_path, **kw) -> list[Judgment]:
    records: list[Judgment] = []
    async with LLMClient(_config(srv, tmp_path, **kw)) as client:
        await judge.run(inputs, JudgeContext(client, records.append, {}, tool_version="test"))
    return records


async def test_an_unreadable_answer_is_asked_once_more_and_the_good_one_cached(tmp_path):
    inputs = sample_inputs(n_topics=1, n_relevant=1, n_other=0)
    with MockLLMServer(PerPrompt(["I am not sure what you mean.", "1"])) as srv:
        (rec,) = await _judge(get_judge("binary"), inputs, srv, tmp_path)
        assert rec.status == "ok" and rec.label == 1 and srv.calls == 2
        assert rec.extra["reasked"] == [{"raw": "I am not sure what you mean.", "parse": "no-label"}]
        assert rec.provenance.usage.calls == 2 and rec.provenance.attempts == 2
        # the good answer replaced the unreadable one in the cache: a new job asks nothing
        (again,) = await _judge(get_judge("binary"), inputs, srv, tmp_path)
        assert again.label == 1 and again.provenance.cached and srv.calls == 2


async def test_an_answer_that_stays_unreadable_is_never_replayed_from_the_cache(tmp_path):
    inputs = sample_inputs(n_topics=1, n_relevant=1, n_other=0)
    with MockLLMServer(responders.fixed("I am not sure what you mean.")) as srv:
        (rec,) = await _judge(get_judge("binary"), inputs, srv, tmp_path)
        assert rec.status == "unparsed" and rec.label is None and srv.calls == 2
        assert rec.raw == "I am not sure what you mean."
        # nothing unreadable was left in the cache: a later job (e.g. --retry-failed) asks again
        (again,) = await _judge(get_judge("binary"), inputs, srv, tmp_path)
        assert not again.provenance.cached and srv.calls == 4


async def test_a_huge_answer_is_read_whole_but_stored_clipped(tmp_path):
    inputs = sample_inputs(n_topics=1, n_relevant=1, n_other=0)
    answer = "The passage discusses many things. " * 5000 + "\n##final score: 2"
    with MockLLMServer(responders.fixed(answer)) as srv:
        (rec,) = await _judge(get_judge("umbrela"), inputs, srv, tmp_path, max_tokens=10**6)
    assert rec.status == "ok" and rec.label == 2  # the marker at the very end was read
    assert rec.extra["raw_chars"] == len(answer)
    assert rec.raw is not None and len(rec.raw) < RAW_MAX_CHARS + 100 and rec.raw.endswith("##final score: 2")


async def test_every_answer_has_a_length_budget(tmp_path):
    inputs = sample_inputs(n_topics=1, n_relevant=1, n_other=0)
    with MockLLMServer(responders.fixed("##final score: 1")) as srv:
        await _judge(get_judge("umbrela"), inputs, srv, tmp_path, use_cache=False)
        assert srv.requests[-1].body["max_tokens"] == PointwiseJudge.answer_budget
        # the run's own setting wins: --max-tokens, or a provider field given with --param
        await _judge(get_judge("umbrela"), inputs, srv, tmp_path, use_cache=False, max_tokens=7)
        assert srv.requests[-1].body["max_tokens"] == 7
        await _judge(
            get_judge("umbrela"), inputs, srv, tmp_path, use_cache=False, extra_params={"max_tokens": 9}
        )
        assert srv.requests[-1].body["max_tokens"] == 9
        # and the judge's own option
        await _judge(get_judge("umbrela", max_tokens=5), inputs, srv, tmp_path, use_cache=False)
        assert srv.requests[-1].body["max_tokens"] == 5


class _OddParser(PointwiseJudge):
    """A judge whose parser hands back a label no record can hold."""

    name = "odd-parser-test"
    default_prompt = "binary/trec-assessor"
    output_types: ClassVar[tuple[str, ...]] = ("binary",)

    def parser(self):
        return lambda text: Parsed(label=[1], status="ok", how="odd")  # type: ignore[arg-type]


async def test_a_record_that_cannot_be_built_is_unparsed_with_its_text(tmp_path):
    inputs = sample_inputs(n_topics=1, n_relevant=1, n_other=1)
    with MockLLMServer(responders.fixed("1")) as srv:
        records = await _judge(_OddParser(), inputs, srv, tmp_path, use_cache=False)
    assert len(records) == 2  # the job went on to the next item
    for rec in records:
        assert rec.status == "unparsed" and rec.label is None and rec.raw == "1"
        assert rec.error is not None and rec.error.startswith("could not build the record")
