"""Dry-runs count without building what they count (`reljudge.judges.token_count`): the
closed-form count of every pair's prompt tokens, and the pointwise count from the texts'
lengths, are the counts of rendering each prompt; the calls a dry-run announces are the calls
the run makes."""

from __future__ import annotations

import random
import re

import pytest

import _cli
from reljudge.judges.base import JudgeInputs
from reljudge.judges.items import passage_problem, topic_problem
from reljudge.judges.pairwise.sampler import all_pairs
from reljudge.judges.registry import get_judge
from reljudge.judges.token_count import prompt_tokens
from reljudge.testing import AutoResponder, MockLLMServer


def slow_estimate(judge, inputs: JudgeInputs) -> tuple[int, int]:
    """(calls, tokens) by building every pair and rendering its prompt (the former estimate)."""
    calls = tokens = 0
    for qid, docids in inputs.pool.items():
        for a, b in all_pairs(list(dict.fromkeys(docids))):
            if (
                topic_problem(inputs.topics, qid)
                or passage_problem(inputs.corpus, a)
                or passage_problem(inputs.corpus, b)
            ):
                continue
            calls += 2
            variables = judge.variables(inputs.topics[qid], inputs.corpus[a], inputs.corpus[b])
            tokens += 2 * prompt_tokens(judge.prompt, variables)
    return calls, tokens


def random_inputs(seed: int) -> JudgeInputs:
    rng = random.Random(seed)
    topics = {f"q{t}": "why " * rng.randint(1, 9) for t in range(4)}
    topics["q3"] = "   "  # a topic without a query: skipped
    pool = {q: [f"{q}-d{i}" for i in range(rng.randint(0, 25))] for q in topics}
    corpus = {d: "é" * rng.randint(1, 300) for docs in pool.values() for d in docs}
    if pool["q0"]:
        corpus[pool["q0"][0]] = "  "  # an empty passage: its pairs are skipped
        pool["q0"].append(pool["q0"][-1])  # a repeated docid counts once
    return JudgeInputs(topics=topics, corpus=corpus, pool=pool, qrels=None, pairs=None, resources={})


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("prompt", ["pairwise/clarke", "pairwise/trec-assessor"])
def test_closed_form_count_equals_rendering_every_pair(seed, prompt):
    judge = get_judge("pairwise", pairs="all", prompt=prompt)
    inputs = random_inputs(seed)
    estimate = judge.estimate(inputs)
    assert (estimate.calls, estimate.prompt_tokens) == slow_estimate(judge, inputs)


@pytest.mark.parametrize("pairs", ["all", "sampler"])
@pytest.mark.slow
def test_dry_run_calls_are_the_calls_the_run_makes(tmp_path, pairs):
    """``all``: the dry-run's count is the run's; ``sampler``: the dry-run's bound holds."""
    common = ["run", "--model", "openai/mock-model", "--no-cache", "--method", "pairwise"]
    common += ["--dataset", "dl19-sample", "--limit", "12", "-o", f"pairs={pairs}"]
    env = {"OPENAI_API_KEY": "sk-test-not-a-key"}
    with MockLLMServer() as srv:
        srv.responder = AutoResponder()
        url = ["--base-url", srv.openai_url]
        dry = _cli.judge(*common, *url, "--output", str(tmp_path / "dry"), "--dry-run", env=env)
        assert dry.returncode == 0, dry.output
        announced = int(re.search(r"LLM calls: (\d+)", dry.output).group(1))
        result = _cli.judge(*common, *url, "--output", str(tmp_path / "run"), env=env)
        assert result.returncode == 0, result.output
        made = srv.calls
    if pairs == "all":
        assert made == announced == 12 * 11
    else:
        assert 0 < made <= announced


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("method", ["binary", "umbrela"])
def test_pointwise_tokens_without_rendering_equal_rendering_each_prompt(seed, method):
    judge = get_judge(method)
    inputs = random_inputs(seed)
    estimate = judge.estimate(inputs)
    calls = tokens = 0
    for qid, docids in inputs.pool.items():
        for docid in dict.fromkeys(docids):
            if topic_problem(inputs.topics, qid) or passage_problem(inputs.corpus, docid):
                continue
            calls += 1
            tokens += prompt_tokens(judge.prompt, judge.variables(inputs.topics[qid], inputs.corpus[docid]))
    assert (estimate.calls, estimate.prompt_tokens) == (calls, tokens)


@pytest.mark.parametrize("seed", range(4))
def test_given_pairs_tokens_without_rendering_equal_rendering_each_prompt(seed):
    judge = get_judge("pairwise", pairs="given")
    inputs = random_inputs(seed)
    rng = random.Random(seed)
    unique = {q: all_pairs(list(dict.fromkeys(d))) for q, d in inputs.pool.items()}
    pairs = {q: rng.sample(p, min(20, len(p))) for q, p in unique.items()}
    inputs = JudgeInputs(inputs.topics, inputs.corpus, inputs.pool, None, pairs, {})
    calls = tokens = 0
    for qid, qpairs in pairs.items():
        for a, b in qpairs:
            if (
                topic_problem(inputs.topics, qid)
                or passage_problem(inputs.corpus, a)
                or passage_problem(inputs.corpus, b)
            ):
                continue
            calls += 2
            tokens += 2 * prompt_tokens(
                judge.prompt, judge.variables(inputs.topics[qid], inputs.corpus[a], inputs.corpus[b])
            )
    estimate = judge.estimate(inputs)
    assert (estimate.calls, estimate.prompt_tokens) == (calls, tokens)
