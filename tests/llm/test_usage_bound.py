"""Usage a provider reports is clamped to what the request could have cost
(`reljudge.llm.usage_bound`): against the mock server's no-usage, inflated and absurd usage and
late-answer modes, with calls counted on the server and the limiter on a clock of the test's own."""

from __future__ import annotations

import logging
import math
from pathlib import Path

import pytest

from reljudge.llm import ClientConfig, LLMClient
from reljudge.llm.limits import RateLimiter
from reljudge.llm.pricing import PriceTable, price_cost
from reljudge.llm.routing import resolve_model
from reljudge.llm.types import Completion, ProviderError
from reljudge.llm.usage_bound import (
    UNBOUNDED_ANSWER_TOKENS,
    UsageBound,
    answer_budget,
    bytes_bound,
    prompt_bound,
    unknown_outcome,
)
from reljudge.testing import MockLLMServer, responders

MSGS = [
    {"role": "system", "content": "You judge."},
    {"role": "user", "content": "Is it relevant? ##final score"},
]
MODEL = "openai/gpt-4o-mini"  # priced: its calls cost something


def config(srv: MockLLMServer, tmp_path: Path, **kw) -> ClientConfig:
    return ClientConfig(
        model=MODEL,
        base_url=srv.openai_url,
        api_key="sk-test",
        cache_path=tmp_path / "cache.sqlite",
        use_cache=False,
        backoff_base_s=0.0,
        backoff_max_s=0.0,
        **kw,
    )


def price():
    return PriceTable().quote(resolve_model(MODEL)).price


# --- the bound ------------------------------------------------------------------------------------
def test_check_clamps_usage_above_the_bound_and_flags_missing_usage():
    bound = UsageBound(100, 20)
    fine = Completion(text="x", finish_reason="stop", prompt_tokens=90, completion_tokens=20)
    assert bound.check(fine) is fine and fine.usage_anomaly is None
    over = bound.check(
        Completion(
            "x", "stop", prompt_tokens=10**12, completion_tokens=5, cached_tokens=10**9, reasoning_tokens=4
        )
    )
    assert (over.prompt_tokens, over.completion_tokens) == (100, 5)
    assert over.cached_tokens == 100 and over.reasoning_tokens == 4
    assert over.usage_anomaly == "over" and over.reported_usage == (10**12, 5)
    missing = bound.check(Completion("x", "stop"))
    assert missing.usage_anomaly == "missing" and missing.prompt_tokens == 0


@pytest.mark.slow  # loads tiktoken
def test_the_prompt_bound_is_the_tokenizer_count_with_a_margin_or_the_bytes():
    from reljudge.llm.tokens import TokenCounter

    counter = TokenCounter("gpt-4o-mini")
    count = counter.messages(MSGS)
    if counter.exact:
        assert count < prompt_bound(MSGS, counter, True) <= math.ceil(count * 1.1) + 16
    # any server behind a base URL, or no exact tokenizer: the bytes, never fewer than any tokenizer makes
    assert prompt_bound(MSGS, counter, False) == bytes_bound(MSGS)
    assert bytes_bound(MSGS) >= sum(len(m["content"].encode()) for m in MSGS)
    assert answer_budget({"max_tokens": 7}) == 7 and answer_budget({}) == UNBOUNDED_ANSWER_TOKENS
    assert answer_budget({"max_completion_tokens": 9}) == 9


def test_which_failed_attempts_may_have_been_billed():
    assert unknown_outcome(ProviderError("timeout", "no answer"))
    assert unknown_outcome(ProviderError("connection", "dropped"))
    assert unknown_outcome(ProviderError("invalid_response", "not JSON"))
    assert not unknown_outcome(ProviderError("timeout", "408", status_code=408))
    assert not unknown_outcome(ProviderError("rate_limit", "429", status_code=429))
    assert not unknown_outcome(ProviderError("server", "500", status_code=500))


# --- against the mock server ----------------------------------------------------------------------
async def test_an_answer_without_usage_is_charged_its_bound_and_warned_once(tmp_path, caplog):
    caplog.set_level(logging.WARNING, logger="reljudge.llm")
    with MockLLMServer(responders.no_usage(responders.fixed("##final score: 2"))) as srv:
        async with LLMClient(config(srv, tmp_path, max_tokens=16)) as client:
            results = [await client.chat([*MSGS, {"role": "user", "content": str(i)}]) for i in range(3)]
        assert srv.calls == 3
    for res in results:
        assert res.status == "ok" and res.usage.prompt_tokens == 0  # no token reported as fact
        bound = price_cost(price(), "openai", bytes_bound(res.prompt or []), 16)[0]
        assert res.usage.cost_usd == pytest.approx(bound) and res.usage.estimated_usd == pytest.approx(bound)
    assert client.stats.usage_anomalies == {"missing": 3}
    assert client.stats.as_dict()["usage_anomalies"] == {"missing": 3}
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "openai/gpt-4o-mini" in warnings[0] and "no usage" in warnings[0]


async def test_absurd_usage_is_clamped_to_the_bound_and_the_tpm_limiter_does_not_stall(tmp_path, caplog):
    caplog.set_level(logging.WARNING, logger="reljudge.llm")
    now = [0.0]
    slept: list[float] = []

    async def sleep(seconds: float) -> None:  # the limiter's clock: no wall-clock margin
        slept.append(seconds)
        now[0] += seconds

    with MockLLMServer(responders.absurd_usage("1e12", responders.fixed("##final score: 2"))) as srv:
        async with LLMClient(config(srv, tmp_path, max_tokens=16, tpm=20_000)) as client:
            client._limiter = RateLimiter(None, 20_000, clock=lambda: now[0], sleep=sleep)
            results = [await client.chat([*MSGS, {"role": "user", "content": str(i)}]) for i in range(5)]
    assert srv.calls == 5
    for res in results:
        assert res.usage.prompt_tokens == bytes_bound(res.prompt or [])
        assert res.usage.completion_tokens == 16
        assert res.usage.estimated_usd == res.usage.cost_usd > 0
    # 5 requests of at most ~190 tokens each: far under 20,000 a minute, no wait at all (with
    # 10^12 taken as it was reported, every request after the first waited a minute or more)
    assert sum(slept) == 0.0
    assert client.stats.usage_anomalies == {"over": 5}
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "1,000,000,000 prompt" in warnings[0]  # as the backend clamps it


async def test_inflated_usage_is_clamped_and_honest_usage_is_kept(tmp_path):
    with MockLLMServer(responders.inflated_usage(10, responders.fixed("##final score: 2"))) as srv:
        async with LLMClient(config(srv, tmp_path, max_tokens=16)) as client:
            res = await client.chat(MSGS)
        billed = list(srv.billed)
    assert res.usage.completion_tokens == 16 and res.usage.prompt_tokens <= bytes_bound(MSGS)
    assert res.usage.prompt_tokens >= billed[0]  # never below what was really used
    with MockLLMServer(responders.fixed("##final score: 2")) as srv:
        async with LLMClient(config(srv, tmp_path, max_tokens=16)) as client:
            res = await client.chat(MSGS)
        assert (res.usage.prompt_tokens, res.usage.completion_tokens) == tuple(srv.billed)
    assert res.usage.estimated_usd is None and not client.stats.usage_anomalies


@pytest.mark.slow
async def test_a_timed_out_attempt_is_charged_its_bound(tmp_path):
    auto = responders.fixed("##final score: 2")
    late = responders.late(1.5, auto)
    with MockLLMServer(lambda req: late(req) if req.seen == 0 else auto(req)) as srv:
        cfg = config(srv, tmp_path, max_tokens=16, timeout_s=0.5, max_cost_usd=1.0)
        async with LLMClient(cfg) as client:
            res = await client.chat(MSGS)
        assert srv.calls == 2  # the first attempt timed out, the second answered
    bound = price_cost(price(), "openai", bytes_bound(MSGS), 16)[0]
    assert res.status == "ok" and res.attempts == 2
    assert res.usage.estimated_usd == pytest.approx(bound)  # the timed-out attempt
    assert res.usage.cost_usd > bound
    assert client.budget is not None and client.budget.spent == pytest.approx(res.usage.cost_usd)
    assert client.budget.in_flight == 0 and client.budget.reserved == 0.0
    assert client.stats.usage_anomalies == {"unknown_outcome": 1}
