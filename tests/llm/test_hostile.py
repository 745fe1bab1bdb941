"""The client against every hostile mode of the mock server, through the real openai and ollama
libraries: never a crash, never a hang beyond the configured timeout, never a bloated result,
never a secret, never a bad answer in the cache."""

from __future__ import annotations

import asyncio
import gzip
import json
import math
import time
import tracemalloc
import zlib
from pathlib import Path

import pytest

from reljudge.llm import ChatResult, ClientConfig, LLMClient, ResponseCache
from reljudge.llm.backends.ollama import OllamaBackend
from reljudge.llm.backends.openai import OpenAIBackend
from reljudge.llm.limits import MAX_WAIT_S
from reljudge.llm.types import (
    MAX_ANSWER_CHARS,
    MAX_RESPONSE_BYTES,
    MAX_TOKENS_PER_CALL,
    ProviderAbort,
    ProviderError,
)
from reljudge.testing import MockLLMServer, MockReply, responders
from reljudge.testing.exchange import MOVED_PREFIX

SECRET = "sk-test-SECRET-9f8e7d6c5b4a"
MSGS = [
    {"role": "system", "content": "You are a TREC assessor."},
    {"role": "user", "content": "Answer with ##final score: N.\nQuery: cats\nPassage: Cats are mammals."},
]
BACKENDS = ("openai", "ollama")


def config(srv: MockLLMServer, tmp_path: Path, backend: str = "openai", **kw) -> ClientConfig:
    url = srv.openai_url if backend == "openai" else srv.ollama_url
    model = "openai/gpt-4o-mini" if backend == "openai" else "ollama/llama3.2"
    base = dict(
        model=model,
        base_url=url,
        api_key=SECRET,
        cache_path=tmp_path / "cache.sqlite",
        timeout_s=20.0,
        max_attempts=3,
        backoff_base_s=0.01,
        backoff_max_s=0.05,
    )
    base.update(kw)
    return ClientConfig(**base)


async def ask(srv: MockLLMServer, tmp_path: Path, backend: str, **kw) -> tuple[ChatResult, LLMClient]:
    async with LLMClient(config(srv, tmp_path, backend, **kw)) as client:
        return await client.chat(MSGS), client


def cache_entries(tmp_path: Path) -> int:
    with ResponseCache(tmp_path / "cache.sqlite") as cache:
        return cache.stats().entries


# --- content shapes ---------------------------------------------------------------------------


async def test_list_content_is_joined_and_cached_as_text(tmp_path):
    with MockLLMServer(responders.list_content(responders.fixed("##final score: 3"))) as srv:
        res, _ = await ask(srv, tmp_path, "openai")
        assert res.status == "ok" and res.text == "##final score: 3"
        again, _ = await ask(srv, tmp_path, "openai")  # a new client reads the persistent cache
    assert again.cached and again.text == "##final score: 3" and srv.calls == 1


async def test_list_content_on_ollama_is_an_invalid_response(tmp_path):
    with MockLLMServer(responders.list_content(responders.fixed("##final score: 3"))) as srv:
        res, _ = await ask(srv, tmp_path, "ollama")
    assert res.status == "api_error" and res.error_kind == "invalid_response" and srv.calls == 1
    assert res.text == "" and cache_entries(tmp_path) == 0


@pytest.mark.parametrize("mode", ["int-content", "dict-content"])
@pytest.mark.parametrize("backend", BACKENDS)
async def test_content_that_is_not_text_is_invalid_and_never_cached(tmp_path, mode, backend):
    with MockLLMServer(responders.named(mode)) as srv:
        res, _ = await ask(srv, tmp_path, backend)
        again, _ = await ask(srv, tmp_path, backend)
    for r in (res, again):
        assert r.status == "api_error" and r.error_kind == "invalid_response" and r.text == ""
    assert srv.calls == 2  # not retried (the same request would get the same), not cached
    assert cache_entries(tmp_path) == 0


@pytest.mark.parametrize(
    "value", [["##final score: 3"], [{"type": "text", "text": "##final score: 3"}], 3, None]
)
async def test_a_cached_value_that_is_not_an_entry_is_a_miss_never_a_string(tmp_path, value):
    with MockLLMServer(responders.fixed("##final score: 1")) as srv:
        async with LLMClient(config(srv, tmp_path)) as client:
            first = await client.chat(MSGS)
            assert first.text == "##final score: 1"
            client._cache.db.put(first.cache_key, "openai", "gpt-4o-mini", {"text": value, "status": "ok"})
            again = await client.chat(MSGS)
    assert not again.cached and again.text == "##final score: 1" and srv.calls == 2


# --- usage --------------------------------------------------------------------------------------


@pytest.mark.parametrize("variant", list(responders.ABSURD_USAGE))
async def test_absurd_usage_is_clamped_on_openai_and_the_answer_kept(tmp_path, variant):
    with MockLLMServer(responders.absurd_usage(variant, responders.fixed("##final score: 2"))) as srv:
        res, client = await ask(srv, tmp_path, "openai", tpm=6000)
    assert res.status == "ok" and res.text == "##final score: 2"
    for n in (res.usage.prompt_tokens, res.usage.completion_tokens):
        assert isinstance(n, int) and 0 <= n <= MAX_TOKENS_PER_CALL
    assert math.isfinite(res.usage.cost_usd) and res.usage.cost_usd < 2000  # 1e9 tokens at most
    # the limiter took the reported count, and still would not wait more than its bound
    assert client._limiter._tpm.wait_for(6000) <= MAX_WAIT_S


@pytest.mark.parametrize("variant", list(responders.ABSURD_USAGE))
async def test_absurd_usage_on_ollama_is_clamped_or_invalid(tmp_path, variant):
    with MockLLMServer(responders.absurd_usage(variant, responders.fixed("##final score: 2"))) as srv:
        res, _ = await ask(srv, tmp_path, "ollama")
    if variant in ("1e400", "1.5"):  # not integers: the library's model refuses the body
        assert res.status == "api_error" and res.error_kind == "invalid_response"
    else:
        assert res.status == "ok" and res.text == "##final score: 2"
        assert 0 <= res.usage.prompt_tokens <= MAX_TOKENS_PER_CALL
        assert 0 <= res.usage.completion_tokens <= MAX_TOKENS_PER_CALL


# --- size ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_huge_body_is_refused_not_retried(tmp_path, backend):
    with MockLLMServer(responders.huge(12)) as srv:
        res, _ = await ask(srv, tmp_path, backend)
    assert res.status == "api_error" and res.error_kind == "invalid_response"
    assert "response too large" in res.error and res.attempts == 1 and srv.calls == 1
    assert res.text == ""


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_gzip_bomb_never_inflates_in_memory(tmp_path, backend):
    responder = responders.gzip_bomb(64)  # ~64 KiB that inflate to 64 MiB
    responders.gzip_bomb_body(backend, 64)  # built before measuring
    with MockLLMServer(responder) as srv:
        tracemalloc.start()
        try:
            res, _ = await ask(srv, tmp_path, backend)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    assert res.status == "api_error" and res.error_kind == "invalid_response"
    assert "response too large" in res.error and srv.calls == 1
    # before the cap: the 64 MiB text was decoded, joined and decoded again (~190 MiB)
    assert peak < 3 * MAX_RESPONSE_BYTES, f"peak {peak / 2**20:.1f} MiB"


def _gzip_reply(payload: dict, encoding: str) -> MockReply:
    raw = json.dumps(payload).encode()
    if encoding == "gzip":
        data = gzip.compress(raw)
    elif encoding == "deflate":
        data = zlib.compress(raw)
    else:  # raw deflate, as some servers send for "deflate"
        packer = zlib.compressobj(6, zlib.DEFLATED, -zlib.MAX_WBITS)
        data = packer.compress(raw) + packer.flush()
        encoding = "deflate"
    return MockReply(body=data, headers={"Content-Encoding": encoding})


@pytest.mark.parametrize("encoding", ["gzip", "deflate", "raw-deflate"])
async def test_a_small_compressed_answer_is_read(tmp_path, encoding):
    payload = {
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "##final score: 1"}}],
        "usage": {"prompt_tokens": 3, "completion_tokens": 4},
    }
    with MockLLMServer(lambda req: _gzip_reply(payload, encoding)) as srv:
        res, _ = await ask(srv, tmp_path, "openai", use_cache=False)
    assert res.status == "ok" and res.text == "##final score: 1" and res.usage.completion_tokens == 4


async def test_a_broken_or_unasked_encoding_is_an_invalid_response(tmp_path):
    with MockLLMServer(
        lambda req: MockReply(body=b"not gzip at all", headers={"Content-Encoding": "gzip"})
    ) as srv:
        res, _ = await ask(srv, tmp_path, "openai", use_cache=False)
    assert res.error_kind == "invalid_response" and "gzip" in res.error and srv.calls == 1
    with MockLLMServer(lambda req: MockReply(body=b"\x00\x01", headers={"Content-Encoding": "br"})) as srv:
        res, _ = await ask(srv, tmp_path, "openai", use_cache=False)
    assert res.error_kind == "invalid_response" and "Content-Encoding" in res.error


@pytest.mark.parametrize("backend", BACKENDS)
async def test_an_answer_longer_than_the_cap_is_cut_and_marked(tmp_path, backend):
    with MockLLMServer(responders.huge(MAX_ANSWER_CHARS * 3 / 2**20)) as srv:  # 3 MiB < body cap
        res, _ = await ask(srv, tmp_path, backend)
        again, _ = await ask(srv, tmp_path, backend)
    assert res.status == "truncated" and res.oversized and len(res.text) == MAX_ANSWER_CHARS
    assert "cut to its first" in res.error
    assert not again.cached and srv.calls == 2  # a cut answer is not cached


@pytest.mark.parametrize("transport", ["aiohttp", "httpx"])
@pytest.mark.parametrize("backend", BACKENDS)
async def test_body_cap_holds_with_both_transports(backend, transport):
    with MockLLMServer(responders.gzip_bomb(16)) as srv:
        url = srv.openai_url if backend == "openai" else srv.ollama_url
        if backend == "openai":
            client = OpenAIBackend("m", base_url=url, api_key="sk-x", timeout_s=20, transport=transport)
        else:
            client = OllamaBackend("m", base_url=url, api_key=None, timeout_s=20, transport=transport)
        try:
            with pytest.raises(ProviderError) as caught:
                await client.complete(MSGS, {})
        finally:
            await client.aclose()
    assert caught.value.kind == "invalid_response" and "too large" in caught.value.message


# --- bombs in the text: transported as is, quickly ---------------------------------------------


@pytest.mark.parametrize("mode", ["think-bomb", "nesting-bomb"])
@pytest.mark.parametrize("backend", BACKENDS)
async def test_reasoning_and_nesting_bombs_come_back_as_text(tmp_path, mode, backend):
    with MockLLMServer(responders.named(mode)) as srv:
        res, _ = await ask(srv, tmp_path, backend)
    expected = responders.named(mode)(None).text  # these responders do not read the request
    assert res.status == "ok" and res.text == expected


@pytest.mark.parametrize("mode", ["echo-all", "prompt-plus"])
@pytest.mark.parametrize("backend", BACKENDS)
async def test_echoing_servers_are_transported_as_is(tmp_path, mode, backend):
    with MockLLMServer(responders.named(mode)) as srv:
        res, _ = await ask(srv, tmp_path, backend)
    prompt = "\n".join(m["content"] for m in MSGS)
    assert res.status == "ok" and res.text.startswith(prompt)
    assert len(res.text) < len(prompt) + 200


# --- failures the client must stop at ------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
async def test_unauthorized_aborts_the_client(tmp_path, backend):
    with MockLLMServer(responders.named("unauthorized")) as srv:
        async with LLMClient(config(srv, tmp_path, backend)) as client:
            res = await client.chat(MSGS)
            with pytest.raises(ProviderAbort) as caught:
                await client.chat([{"role": "user", "content": "another item"}])
    assert res.status == "api_error" and res.error_kind == "auth" and srv.calls == 1
    assert caught.value is client.aborted and caught.value.kind == "auth" and caught.value.status_code == 401
    assert "API key" in caught.value.hint and "Incorrect API key" in str(caught.value)


@pytest.mark.parametrize("backend", BACKENDS)
async def test_not_found_aborts_with_a_hint(tmp_path, backend):
    with MockLLMServer(responders.named("not-found")) as srv:
        res, client = await ask(srv, tmp_path, backend)
    assert res.status == "api_error" and srv.calls == 1
    abort = client.aborted
    assert abort is not None and abort.status_code == 404 and "not" in abort.message
    assert ("ollama pull" in abort.hint) if backend == "ollama" else ("gpt-4o-mini" in abort.hint)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.slow
async def test_a_blackhole_costs_one_canary_and_the_configured_timeouts(tmp_path, backend):
    with MockLLMServer(responders.named("blackhole")) as srv:
        cfg = config(srv, tmp_path, backend, timeout_s=1.0, max_attempts=2)
        async with LLMClient(cfg) as client:
            start = time.monotonic()
            outcomes = await asyncio.gather(
                *[client.chat([{"role": "user", "content": f"item {i}"}]) for i in range(6)],
                return_exceptions=True,
            )
            elapsed = time.monotonic() - start
        calls = srv.calls
    results = [o for o in outcomes if isinstance(o, ChatResult)]
    aborts = [o for o in outcomes if isinstance(o, ProviderAbort)]
    assert len(results) == 1 and len(aborts) == 5 and calls == 2  # the canary's two attempts only
    assert results[0].error_kind == "timeout" and client.aborted.kind == "timeout"
    assert "did not answer within 1 s" in client.aborted.hint
    assert elapsed >= 1.9  # two attempts of 1 s each (less a timer's rounding) ...
    assert elapsed < 60  # ... and not the pool's worth of timeouts (generous: a loaded machine)


# --- secrets the server echoes -------------------------------------------------------------------


def _files_with(root: Path, needle: str) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and needle.encode() in p.read_bytes()]


@pytest.mark.parametrize("backend", BACKENDS)
async def test_an_echoed_key_reaches_neither_the_result_nor_the_cache(tmp_path, backend):
    with MockLLMServer(responders.named("key-echo")) as srv:
        cfg = config(srv, tmp_path, backend)
        async with LLMClient(cfg) as client:
            res = await client.chat(MSGS, logprobs=True)
        async with LLMClient(cfg) as client:
            again = await client.chat(MSGS, logprobs=True)
        assert srv.requests[0].raw_authorization is None  # the record of the request keeps no key
    assert res.status == "ok" and "Bearer ***" in res.text and SECRET not in res.text
    assert again.cached and SECRET not in again.text
    for r in (res, again):
        tokens = "".join(t["token"] for t in r.logprobs or []) + json.dumps(r.logprobs)
        assert SECRET not in tokens and SECRET[8:20] not in tokens
    assert _files_with(tmp_path, SECRET) == [] and _files_with(tmp_path, SECRET[8:20]) == []


@pytest.mark.parametrize("backend", BACKENDS)
async def test_basic_credentials_of_the_base_url_are_secrets(tmp_path, backend):
    import base64

    password = "hunter2-correct-horse"
    basic = base64.b64encode(f"bob:{password}".encode()).decode()

    def echo(req):  # the header it got (openai sends Basic; the ollama library drops URL credentials)
        return f"header {req.raw_authorization}; creds bob:{password} = {basic}. ##final score: 2"

    with MockLLMServer(echo) as srv:
        url = (srv.openai_url if backend == "openai" else srv.ollama_url).replace(
            "http://", f"http://bob:{password}@"
        )
        cfg = config(srv, tmp_path, backend, base_url=url, api_key=None)
        async with LLMClient(cfg) as client:
            res = await client.chat(MSGS)
    assert res.status == "ok" and "creds bob:*** = ***." in res.text
    if backend == "openai":
        assert "header Basic ***;" in res.text
    assert basic not in res.text and password not in res.text
    assert _files_with(tmp_path, basic) == [] and _files_with(tmp_path, password) == []


async def test_a_key_echoed_in_an_error_is_masked(tmp_path):
    def leak(req):
        return MockReply(status=400, error=f"bad request from {req.raw_authorization} " + "x" * 5000)

    with MockLLMServer(leak) as srv:
        res, _ = await ask(srv, tmp_path, "openai")
    assert res.error_kind == "bad_request" and SECRET not in res.error and "***" in res.error
    assert len(res.error) < 1200  # a provider's long message is cut


# --- redirects -----------------------------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_redirect_to_another_host_is_refused(tmp_path, backend):
    with MockLLMServer(responders.named("redirect")) as srv:
        res, _ = await ask(srv, tmp_path, backend)
        paths = [r.path for r in srv.requests]
    assert res.status == "api_error" and res.error_kind == "bad_request"
    assert "redirect to another host refused" in res.error and "localhost" in res.error
    assert len(paths) == 1 and not paths[0].startswith(MOVED_PREFIX)  # never followed
    assert res.attempts == 1


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_redirect_within_the_host_is_followed(tmp_path, backend):
    with MockLLMServer(responders.redirect("same-host", responders.fixed("##final score: 1"))) as srv:
        res, _ = await ask(srv, tmp_path, backend)
        paths = [r.path for r in srv.requests]
    assert res.status == "ok" and res.text == "##final score: 1"
    assert len(paths) == 2 and paths[1].startswith(MOVED_PREFIX)


async def test_a_redirect_to_another_port_is_refused(tmp_path):
    with MockLLMServer(responders.fixed("##final score: 3")) as elsewhere:
        target = f"{elsewhere.openai_url}/chat/completions"
        with MockLLMServer(responders.redirect(target)) as srv:
            res, _ = await ask(srv, tmp_path, "openai")
        assert elsewhere.calls == 0
    assert res.error_kind == "bad_request" and "redirect to another host refused" in res.error


@pytest.mark.parametrize("transport", ["aiohttp", "httpx"])
async def test_redirect_guard_holds_with_both_transports(transport):
    with MockLLMServer(responders.named("redirect")) as srv:
        client = OpenAIBackend(
            "m", base_url=srv.openai_url, api_key="sk-x", timeout_s=20, transport=transport
        )
        try:
            with pytest.raises(ProviderError) as caught:
                await client.complete(MSGS, {})
        finally:
            await client.aclose()
    assert caught.value.kind == "bad_request" and "another host" in caught.value.message
