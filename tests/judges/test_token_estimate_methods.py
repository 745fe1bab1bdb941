"""Dry-run tokens from the model's tokenizer for EXAM, nuggets and the pairwise sampler (before:
~4 characters a token for these three): within 2 % of tokenizing every prompt the estimate
stands for (`bench/bench_token_estimates.py` measures the whole of dl19-sample)."""

from __future__ import annotations

import pytest

from reljudge.judges.items import passage_problem
from reljudge.llm.tokens import TokenCounter, encoding_file
from reljudge.run.config import RunConfig
from reljudge.run.estimate import estimate_job
from reljudge.run.prepare import prepare

pytestmark = pytest.mark.skipif(
    encoding_file("o200k_base") is None,
    reason="no o200k_base file on this machine (tiktoken would download it)",
)
TIKTOKEN = "tiktoken o200k_base"


def job_of(method: str, **settings):
    config = RunConfig(method=method, model="gpt-4o", dataset="dl19-sample", dry_run=True, **settings)
    return prepare(config, read_existing=False)


def test_exam_is_counted_by_the_tokenizer_within_two_percent():
    from reljudge.judges.exam.judge import _TYPICAL_QUESTION

    job = job_of("exam", limit=60)
    judge, inputs, counter = job.judge, job.inputs, TokenCounter("gpt-4o")
    exact = 0
    for qid in inputs.pool:
        exact += counter.messages(judge.question_prompt.render(query=inputs.topics[qid]))
        for docid in dict.fromkeys(inputs.pool[qid]):
            if not passage_problem(inputs.corpus, docid):
                question = judge.prompt.render(question=_TYPICAL_QUESTION, document=inputs.corpus[docid])
                exact += judge.n_questions * counter.messages(question)
    est = estimate_job(job.config, judge, inputs, job.pool, job.prices)
    assert est["tokens_by"] == TIKTOKEN
    assert abs(est["prompt_tokens"] - exact) / exact < 0.02


def test_nuggets_are_counted_by_the_tokenizer():
    job = job_of("nuggets", limit=30)
    with_tokenizer = estimate_job(job.config, job.judge, job.inputs, job.pool, job.prices)
    assert with_tokenizer["tokens_by"] == TIKTOKEN
    plain = job.judge.estimate(job.inputs)  # no tokenizer set: ~4 characters a token
    assert plain.tokenizer is None and plain.prompt_tokens != with_tokenizer["prompt_tokens"]
    assert plain.calls == with_tokenizer["calls"]


def test_the_sampler_per_call_is_within_two_percent_of_the_mean_over_all_pairs():
    job = job_of("pairwise", options={"pairs": "sampler"}, topics_limit=1, limit=40)
    judge, inputs, counter = job.judge, job.inputs, TokenCounter("gpt-4o")
    exact = prompts = 0
    for qid, docids in inputs.pool.items():
        docs = list(dict.fromkeys(docids))
        for a in docs:
            for b in docs:
                if a != b:
                    variables = judge.variables(inputs.topics[qid], inputs.corpus[a], inputs.corpus[b])
                    exact += counter.messages(judge.prompt.render(**variables))
                    prompts += 1
    est = estimate_job(job.config, judge, inputs, job.pool, job.prices)
    assert est["tokens_by"] == TIKTOKEN and est["calls"] > 0
    per_call, mean = est["prompt_tokens"] / est["calls"], exact / prompts
    assert abs(per_call - mean) / mean < 0.02
