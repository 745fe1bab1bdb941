"""The litellm backend end to end against the mock server (the only test module importing litellm)."""

from __future__ import annotations

import pytest

from reljudge.llm import ClientConfig, LLMClient
from reljudge.testing import MockLLMServer, PerPrompt, responders

MSGS = [{"role": "user", "content": "Just answer 1 or 2.\nPassage 1: alpha\nPassage 2: beta"}]


def cfg(srv: MockLLMServer, tmp_path, model="litellm/openai/gpt-4o-mini", **kw) -> ClientConfig:
    url = srv.ollama_url if "/ollama" in model else srv.openai_url
    base = dict(
        model=model,
        base_url=url,
        api_key="sk-litellm-test-key-0000",
        cache_path=tmp_path / "c.sqlite",
        timeout_s=60.0,  # only a guard against a hang: litellm's first call is slow on a busy machine
        max_attempts=3,
        backoff_base_s=0.01,
        backoff_max_s=0.05,
    )
    base.update(kw)
    return ClientConfig(**base)


@pytest.fixture(scope="module")
def server():
    with MockLLMServer(responders.fixed("Passage 2 wins: 2")) as srv:
        yield srv


async def test_litellm_openai_route_round_trip(server, tmp_path):
    server.reset()
    async with LLMClient(cfg(server, tmp_path)) as client:
        res = await client.chat(MSGS)
        again = await client.chat(MSGS)
    assert res.status == "ok" and res.text == "Passage 2 wins: 2"
    assert res.backend == "litellm" and res.model == "openai/gpt-4o-mini"
    assert res.usage.completion_tokens == 5 and res.usage.prompt_tokens > 5 and res.usage.calls == 1
    assert res.price_known and res.usage.cost_usd > 0  # priced as gpt-4o-mini
    assert again.cached and server.calls == 1
    body = server.requests[0].body
    assert body["model"] == "gpt-4o-mini" and body["temperature"] == 0.0 and body["seed"] == 42


async def test_litellm_ollama_route_round_trip(server, tmp_path):
    server.reset()
    async with LLMClient(
        cfg(server, tmp_path, model="litellm/ollama_chat/llama3.2", use_cache=False)
    ) as client:
        res = await client.chat(MSGS)
    assert res.status == "ok" and res.text == "Passage 2 wins: 2"
    assert res.usage.completion_tokens == 5
    assert server.requests[0].api == "ollama"


async def test_litellm_retries_and_errors(tmp_path):
    with MockLLMServer(PerPrompt([responders.rate_limited(0.05), responders.server_error(503), "ok"])) as srv:
        async with LLMClient(cfg(srv, tmp_path, use_cache=False)) as client:
            res = await client.chat(MSGS)
        assert res.status == "ok" and res.attempts == 3 and srv.calls == 3
    with MockLLMServer(lambda req: responders.error(400, "bad parameter")) as srv:
        async with LLMClient(cfg(srv, tmp_path, use_cache=False)) as client:
            res = await client.chat(MSGS)
        assert res.status == "api_error" and res.error_kind == "bad_request" and srv.calls == 1
        assert "sk-litellm-test-key-0000" not in (res.error or "")
    with MockLLMServer(responders.fixed("a b c d e")) as srv:
        async with LLMClient(cfg(srv, tmp_path, use_cache=False, max_tokens=2)) as client:
            res = await client.chat(MSGS)
        assert res.status == "truncated" and res.text == "a b"
