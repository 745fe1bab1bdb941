"""The litellm backend end to end against the mock server (the only test module importing litellm)."""

from __future__ import annotations

import pytest

from reljudge.llm import ClientConfig, LLMClient
from reljudge.testing import MockLLMServer, MockReply, PerPrompt, responders

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


@pytest.mark.slow
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


# --- issue 9: params a provider does not take, credentials, malformed answers -------------------


async def test_the_readme_anthropic_example_sends_no_seed(tmp_path):
    with MockLLMServer(responders.fixed("##final score: 2")) as srv:
        config = cfg(srv, tmp_path, model="litellm/anthropic/claude-3-5-sonnet", base_url=srv.url)
        async with LLMClient(config) as client:
            res = await client.chat(MSGS)
            effective = client.effective_params()
        sent = srv.requests[0]
    assert res.status == "ok" and res.text == "##final score: 2" and srv.calls == 1
    assert sent.api == "anthropic" and "seed" not in sent.body
    assert "seed" not in res.params and "seed" not in effective  # provenance says what was sent
    assert res.params["temperature"] == 0.0


def test_params_a_provider_takes_are_kept(tmp_path):
    with MockLLMServer(responders.fixed("1")) as srv:
        client = LLMClient(cfg(srv, tmp_path, logprobs=True, max_tokens=5))
        assert client.effective_params() == {
            "temperature": 0.0,
            "seed": 42,
            "max_tokens": 5,
            "logprobs": True,
        }


async def test_missing_credentials_are_auth_not_retried(tmp_path, monkeypatch):
    for name in ("OPENAI_API_KEY", "OPENAI_ADMIN_KEY", "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    with MockLLMServer(responders.fixed("1")) as srv:
        for model, url in (
            ("litellm/openai/gpt-4o-mini", srv.openai_url),
            ("litellm/anthropic/claude-3-5-sonnet", srv.url),
        ):
            async with LLMClient(cfg(srv, tmp_path, model=model, base_url=url, api_key=None)) as client:
                res = await client.chat(MSGS)
            assert res.status == "api_error" and res.error_kind == "auth", (model, res.error)
            assert res.attempts == 1 and "\n" not in res.error and len(res.error) <= 400, model
            assert client.aborted is not None and client.aborted.kind == "auth"
        assert srv.calls == 0


@pytest.mark.parametrize(
    "reply",
    [
        responders.int_content,
        responders.dict_content,
        responders.absurd_usage("1e400", responders.fixed("1")),
        lambda req: MockReply(body=b"this is not JSON"),
        lambda req: MockReply(body=b'{"id": "x"}'),
    ],
    ids=["int-content", "dict-content", "usage-1e400", "not-json", "no-choices"],
)
async def test_a_malformed_200_is_an_invalid_response_with_a_short_error(tmp_path, reply):
    with MockLLMServer(reply) as srv:
        async with LLMClient(cfg(srv, tmp_path, use_cache=False)) as client:
            res = await client.chat(MSGS)
        calls = srv.calls
    assert res.status == "api_error" and res.error_kind == "invalid_response", res.error
    assert calls == 1 and res.attempts == 1  # never retried as if it were a server error
    assert "\n" not in res.error and "Traceback" not in res.error and len(res.error) <= 400


@pytest.mark.parametrize("variant", ["negative", "1e30"])
async def test_litellm_usage_is_clamped(tmp_path, variant):
    from reljudge.llm.types import MAX_TOKENS_PER_CALL

    with MockLLMServer(responders.absurd_usage(variant, responders.fixed("1"))) as srv:
        async with LLMClient(cfg(srv, tmp_path, use_cache=False)) as client:
            res = await client.chat(MSGS)
    assert res.status == "ok" and res.text == "1"
    assert 0 <= res.usage.prompt_tokens <= MAX_TOKENS_PER_CALL
    assert 0 <= res.usage.completion_tokens <= MAX_TOKENS_PER_CALL


async def test_a_litellm_answer_longer_than_the_cap_is_cut(tmp_path):
    from reljudge.llm.types import MAX_ANSWER_CHARS

    with MockLLMServer(responders.huge(MAX_ANSWER_CHARS * 2 / 2**20)) as srv:
        async with LLMClient(cfg(srv, tmp_path, use_cache=False, timeout_s=60)) as client:
            res = await client.chat(MSGS)
    assert res.status == "truncated" and res.oversized and len(res.text) == MAX_ANSWER_CHARS
