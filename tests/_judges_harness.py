"""Shared helpers of the judge tests: small inputs from the bundled dl19 sample, and running a
judge end to end against the real mock LLM server through a real `LLMClient`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache

from reljudge.judges.base import Judge, JudgeInputs
from reljudge.judges.context import JudgeContext
from reljudge.judges.exam.question_files import dataset_questions
from reljudge.llm import ClientConfig, LLMClient
from reljudge.records import Judgment
from reljudge.testing import MockLLMServer


@lru_cache(maxsize=1)
def _sample():
    from reljudge.datasets import load_dataset

    return load_dataset("dl19-sample")


def sample_inputs(
    n_topics: int = 2,
    n_relevant: int = 2,
    n_other: int = 2,
    *,
    qrels: bool = True,
    topics: list[str] | None = None,
    **kw,
) -> JudgeInputs:
    """A few topics of the bundled sample, each pooling `n_relevant` relevant (grade > 0) and
    `n_other` non-relevant passages (deterministic: sorted by docid)."""
    ds = _sample()
    chosen = topics or list(ds.topics)[:n_topics]
    pool: dict[str, list[str]] = {}
    for qid in chosen:
        grades = ds.qrels[qid]
        rel = sorted(d for d, g in grades.items() if g > 0)[:n_relevant]
        other = sorted(d for d, g in grades.items() if g <= 0)[:n_other]
        pool[qid] = (
            [d for pair in zip(rel, other, strict=False) for d in pair]
            + rel[len(other) :]
            + other[len(rel) :]
        )
    docids = {d for docs in pool.values() for d in docs}
    corpus = {d: ds.corpus[d] for d in docids}
    qrel_map = {qid: {d: ds.qrels[qid][d] for d in pool[qid]} for qid in chosen} if qrels else None
    return JudgeInputs(
        topics={qid: ds.topics[qid] for qid in chosen},
        corpus=corpus,
        pool=pool,
        qrels=qrel_map,
        **kw,
    )


def sample_questions() -> dict[str, dict[str, str]]:
    return dataset_questions(_sample())


@dataclass
class Outcome:
    records: list[Judgment]
    calls: int
    prompts: list[str] = field(default_factory=list)
    server_requests: list = field(default_factory=list)

    def by_method(self, method: str) -> list[Judgment]:
        return [r for r in self.records if r.method == method]

    @property
    def existing(self) -> dict:
        return {r.key: r for r in self.records}


async def run_judge(
    judge: Judge,
    inputs: JudgeInputs,
    responder=None,
    *,
    existing: Mapping | None = None,
    server: MockLLMServer | None = None,
) -> Outcome:
    """Run `judge` on `inputs` against a fresh mock server (or `server`); no response cache."""
    own = server is None
    srv = server or MockLLMServer(responder).start()
    before = srv.calls
    try:
        config = ClientConfig(
            model="openai/mock-model",
            base_url=srv.openai_url,
            api_key="test-key",
            cache_path=None,
            use_cache=False,
            timeout_s=60.0,  # only a guard against a hang (a busy machine can be slow to answer)
            max_attempts=1,
            concurrency=8,
            backoff_base_s=0.01,
            backoff_max_s=0.02,
        )
        records: list[Judgment] = []
        async with LLMClient(config) as client:
            ctx = JudgeContext(client, records.append, existing=existing or {}, tool_version="test")
            await judge.run(inputs, ctx)
        sent = list(srv.requests[before:])
        return Outcome(records, srv.calls - before, [r.last_user for r in sent], sent)
    finally:
        if own:
            srv.stop()


def _warm_up() -> None:
    """Load the sample, the judges and the OpenAI client code once, at collection, so that no
    single test pays for the imports."""
    from reljudge.judges.registry import available_judges
    from reljudge.llm.client import chat_sync
    from reljudge.testing import responders

    _sample()
    available_judges()
    with MockLLMServer(responders.fixed("1")) as srv:
        config = ClientConfig(
            model="openai/mock-model", base_url=srv.openai_url, api_key="k", cache_path=None, use_cache=False
        )
        chat_sync(config, [{"role": "user", "content": "warm up"}])


_warm_up()
