"""Dry-run token counts from the model's tokenizer (`reljudge.llm.tokens`): tiktoken encodings
found offline (never downloaded), the estimate within 2 % of tokenizing every prompt, and the
~4-characters fallback for models without a tokenizer here."""

from __future__ import annotations

import socket

import pytest

from reljudge.judges.items import pool_items
from reljudge.judges.token_count import counting_with
from reljudge.llm import tokens
from reljudge.llm.tokens import TokenCounter, encoding_file
from reljudge.run.config import RunConfig
from reljudge.run.estimate import estimate_job
from reljudge.run.prepare import prepare

needs_tokenizer = pytest.mark.skipif(
    encoding_file("o200k_base") is None,
    reason="no o200k_base file on this machine (tiktoken would download it)",
)


@pytest.fixture()
def no_network(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("a network connection was attempted")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


@needs_tokenizer
def test_an_openai_model_is_counted_by_its_tokenizer_without_the_network(no_network):
    tokens.encoding_for.cache_clear()
    counter = TokenCounter("openai/gpt-4o")
    assert counter.exact and counter.source == "tiktoken o200k_base"
    # OpenAI's chat rule: 3 per message + role + content, 3 priming the answer
    assert counter.messages([{"role": "user", "content": "hello world"}]) == 3 + 1 + 2 + 3


def test_models_without_a_tokenizer_fall_back_to_four_characters_a_token():
    for model in ("openai/mock-model", "claude-3-5-haiku", "ollama/llama3.2"):
        counter = TokenCounter(model)
        assert not counter.exact and counter.source == "~4 characters a token"
        assert counter.messages([{"role": "user", "content": "x" * 40}]) == 10 + 4


@needs_tokenizer
def test_a_damaged_file_in_tiktokens_cache_is_never_used(tmp_path, monkeypatch):
    name, _ = tokens.ENCODING_FILES["o200k_base"]
    (tmp_path / name).write_bytes(b"not the encoding")
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    found = encoding_file("o200k_base")
    assert found is not None and found.parent != tmp_path  # the checked copy elsewhere


def test_without_any_file_there_is_no_tokenizer(tmp_path, monkeypatch):
    monkeypatch.setattr(tokens, "_cache_dirs", lambda: iter([tmp_path]))
    tokens.encoding_for.cache_clear()
    try:
        assert encoding_file("o200k_base") is None
        assert not TokenCounter("gpt-4o").exact  # tiktoken is never asked to download
    finally:
        tokens.encoding_for.cache_clear()


@needs_tokenizer
@pytest.mark.parametrize("method", ["umbrela", "binary"])
def test_the_dry_run_is_within_two_percent_of_the_tokenizers_count(method, no_network):
    job = prepare(
        RunConfig(method=method, model="gpt-4o", dataset="dl19-sample", dry_run=True), read_existing=False
    )
    judge, inputs = job.judge, job.inputs
    counter = TokenCounter("gpt-4o")
    exact = sum(
        counter.messages(judge.prompt.render(**judge.variables(inputs.topics[q], inputs.corpus[d])))
        for q, d in pool_items(inputs)
    )
    est = estimate_job(job.config, judge, inputs, job.pool, job.prices)
    assert est["tokens_by"] == "tiktoken o200k_base"
    assert abs(est["prompt_tokens"] - exact) / exact < 0.02
    with counting_with(None):  # the fallback is far off: the tokenizer is what makes it close
        assert judge.estimate(inputs).tokenizer is None


def _pairwise_exact(judge, inputs, counter, pairs) -> int:
    total = 0
    for qid, a, b in pairs:
        for first, second in ((a, b), (b, a)):
            variables = judge.variables(inputs.topics[qid], inputs.corpus[first], inputs.corpus[second])
            total += counter.messages(judge.prompt.render(**variables))
    return total


@needs_tokenizer
def test_pairwise_all_pairs_and_given_pairs_are_counted_by_the_tokenizer(tmp_path, no_network):
    counter = TokenCounter("gpt-4o")
    config = RunConfig(
        method="pairwise",
        model="gpt-4o",
        dataset="dl19-sample",
        options={"pairs": "all"},
        limit=24,
        dry_run=True,
    )
    job = prepare(config, read_existing=False)
    pairs = []
    for qid, docids in job.inputs.pool.items():
        docs = list(dict.fromkeys(docids))
        pairs += [(qid, a, b) for i, a in enumerate(docs) for b in docs[i + 1 :]]
    exact = _pairwise_exact(job.judge, job.inputs, counter, pairs)
    est = estimate_job(job.config, job.judge, job.inputs, job.pool, job.prices)
    assert est["tokens_by"] == "tiktoken o200k_base" and est["calls"] == 2 * len(pairs)
    assert abs(est["prompt_tokens"] - exact) / exact < 0.02

    given = tmp_path / "pairs.txt"
    given.write_text("".join(f"{q} {a} {b}\n" for q, a, b in pairs[:40]))
    job = prepare(
        RunConfig(method="pairwise", model="gpt-4o", dataset="dl19-sample", pairs=given, dry_run=True),
        read_existing=False,
    )
    exact = _pairwise_exact(job.judge, job.inputs, counter, pairs[:40])
    est = estimate_job(job.config, job.judge, job.inputs, job.pool, job.prices)
    assert est["tokens_by"] == "tiktoken o200k_base" and est["calls"] == 80
    assert abs(est["prompt_tokens"] - exact) / exact < 0.02
