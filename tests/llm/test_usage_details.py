"""Cached-input and reasoning tokens from OpenAI's usage details (``prompt_tokens_details.cached_tokens``,
``completion_tokens_details.reasoning_tokens``): recorded apart, cached tokens priced at the cached
price, and whatever a provider sends there clamped (the mock server's ``usage-details`` modes)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from _cli import judge
from reljudge.errors import EXIT_OK, InputError
from reljudge.io.judgments import read_judgments
from reljudge.llm import ClientConfig, LLMClient
from reljudge.llm.backends.base import usage_details
from reljudge.llm.pricing import Price, PriceTable, load_prices, price_cost
from reljudge.llm.types import MAX_TOKENS_PER_CALL
from reljudge.records import Usage
from reljudge.testing import MockLLMServer, count_tokens, responders

MSGS = [{"role": "user", "content": "Is this passage relevant? Answer with ##final score: N"}]
MINI = PriceTable()["gpt-4o-mini"]  # from litellm's model cost map


async def ask(srv: MockLLMServer, model: str = "openai/gpt-4o-mini"):
    cfg = ClientConfig(
        model=model, base_url=srv.openai_url, api_key="sk-test", use_cache=False, max_attempts=1
    )
    async with LLMClient(cfg) as client:
        return await client.chat(MSGS)


@pytest.mark.parametrize(
    "model",
    # the litellm route imports litellm (about 3 s), which only slow tests do otherwise
    ["openai/gpt-4o-mini", pytest.param("litellm/openai/gpt-4o-mini", marks=pytest.mark.slow)],
)
async def test_cached_and_reasoning_tokens_are_recorded_and_priced(model):
    with MockLLMServer(responders.usage_details(None, responders.fixed("##final score: 2"))) as srv:
        res = await ask(srv, model)
    prompt = sum(count_tokens(m["content"]) + 3 for m in MSGS)
    completion = count_tokens("##final score: 2") + responders.REASONING_TOKENS
    assert res.status == "ok" and res.text == "##final score: 2"
    assert (res.usage.prompt_tokens, res.usage.completion_tokens) == (prompt, completion)
    assert res.usage.cached_tokens == prompt // 2
    assert res.usage.reasoning_tokens == responders.REASONING_TOKENS
    cached = prompt // 2
    expected = ((prompt - cached) * MINI.input + cached * MINI.cached_input + completion * MINI.output) / 1e6
    assert math.isclose(res.usage.cost_usd, expected)
    assert (
        res.usage.cost_usd < (prompt * MINI.input + completion * MINI.output) / 1e6
    )  # cheaper than uncached


async def test_without_details_nothing_is_invented():
    with MockLLMServer(responders.fixed("##final score: 2")) as srv:
        res = await ask(srv)
    assert res.usage.cached_tokens is None and res.usage.reasoning_tokens is None
    assert "cached_tokens" not in res.usage.model_dump(exclude_none=True)  # nor written to a record


@pytest.mark.parametrize("variant", list(responders.ABSURD_DETAILS))
async def test_absurd_details_are_clamped_and_the_answer_kept(variant):
    with MockLLMServer(responders.usage_details(variant, responders.fixed("##final score: 2"))) as srv:
        res = await ask(srv)
    usage = res.usage
    assert res.status == "ok" and res.text == "##final score: 2"
    for part, whole in (
        (usage.cached_tokens, usage.prompt_tokens),
        (usage.reasoning_tokens, usage.completion_tokens),
    ):
        assert part is None or (isinstance(part, int) and 0 <= part <= whole <= MAX_TOKENS_PER_CALL)
    full = (usage.prompt_tokens * MINI.input + usage.completion_tokens * MINI.output) / 1e6
    assert math.isfinite(usage.cost_usd) and 0 <= usage.cost_usd <= full


@pytest.mark.parametrize(
    ("usage", "expected"),
    [
        (
            {
                "prompt_tokens_details": {"cached_tokens": 40},
                "completion_tokens_details": {"reasoning_tokens": 3},
            },
            (40, 3),
        ),
        ({"prompt_tokens_details": {"cached_tokens": 10**30}}, (100, None)),  # at most the prompt
        ({"prompt_tokens_details": {"cached_tokens": float("inf")}}, (100, None)),
        ({"prompt_tokens_details": {"cached_tokens": float("nan")}}, (0, None)),
        ({"prompt_tokens_details": {"cached_tokens": True}}, (None, None)),
        ({"prompt_tokens_details": None, "completion_tokens_details": "x"}, (None, None)),
        ({}, (None, None)),
        (None, (None, None)),
    ],
)
def test_usage_details_are_clamped(usage, expected):
    assert usage_details(usage, 100, 5) == expected


def test_cached_tokens_cost_the_cached_price_or_the_input_price():
    with_cache = Price(2.0, 8.0, 0.5)
    assert math.isclose(
        price_cost(with_cache, "openai", 1000, 10, 400)[0], (600 * 2.0 + 400 * 0.5 + 10 * 8.0) / 1e6
    )
    without = Price(2.0, 8.0)  # no cached price: cached tokens cost the input price
    assert price_cost(without, "openai", 1000, 10, 400) == price_cost(without, "openai", 1000, 10)
    assert (
        price_cost(with_cache, "openai", 1000, 10, 5000)[0]
        == price_cost(with_cache, "openai", 1000, 10, 1000)[0]
    )


def test_a_price_file_takes_a_cached_price(tmp_path):
    path = tmp_path / "prices.yaml"
    path.write_text("my-model: {input: 1, output: 2, cached_input: 0.25}\nold-style: [3, 4]\n")
    table = load_prices(path)
    assert table["my-model"] == Price(1.0, 2.0, 0.25) and table["old-style"] == Price(3.0, 4.0, None)
    assert table.quote("my-model").source == f"--prices {path}: my-model"
    path.write_text("my-model: {input: 1, output: 2, cached_input: -1}\n")
    with pytest.raises(InputError, match="cached_input"):
        load_prices(path)


def test_records_without_details_read_as_before():
    usage = Usage.model_validate({"prompt_tokens": 5, "completion_tokens": 1, "calls": 1, "cost_usd": 0.1})
    assert usage.cached_tokens is None and usage.reasoning_tokens is None
    total = usage + Usage(prompt_tokens=5, cached_tokens=2)
    assert total.cached_tokens == 2 and total.reasoning_tokens is None


def test_a_run_records_and_reports_them(tmp_path: Path):
    out = tmp_path / "run"
    with MockLLMServer(responders.usage_details(), models=("gpt-4o-mini",)) as srv:
        argv = [
            "run",
            "--model",
            "openai/gpt-4o-mini",
            "--base-url",
            srv.openai_url,
            "--dataset",
            "dl19-sample",
        ]
        argv += ["--method", "umbrela", "--output", str(out), "--no-cache", "--no-progress", "--limit", "6"]
        result = judge(*argv, env={"OPENAI_API_KEY": "sk-test"})
    assert result.returncode == EXIT_OK, result.output
    records = list(read_judgments(out / "judgments.jsonl"))
    assert len(records) == 6
    cached = sum(r.provenance.usage.cached_tokens for r in records)
    reasoning = sum(r.provenance.usage.reasoning_tokens for r in records)
    assert reasoning == 6 * responders.REASONING_TOKENS and cached > 0
    tokens = json.loads((out / "manifest.json").read_text())["extra"]["tokens"]
    assert tokens["cached"] == cached and tokens["reasoning"] == reasoning
    assert f"({cached} cached)" in result.output and f"({reasoning} reasoning)" in result.output
