"""Fail fast: a provider that cannot serve the job gets one request (the canary), not the pool,
and the client raises `ProviderAbort` with the provider's message and a hint."""

from __future__ import annotations

import asyncio
import socket
import threading

import pytest

from _cli import judge
from _reliability import SECRET as RUN_SECRET
from _reliability import make_dataset, run_args, sandbox
from reljudge.llm import ChatResult, ClientConfig, LLMClient, ProviderAbort, ResolvedModel, resolve_model
from reljudge.testing import MockLLMServer, MockReply, PerPrompt, responders

SECRET = "sk-test-SECRET-9f8e7d6c5b4a"


def msgs(i: int | str = 0) -> list[dict[str, str]]:
    return [{"role": "user", "content": f"Just answer 1 or 0. Item {i}"}]


def config(url: str, tmp_path, **kw) -> ClientConfig:
    base = dict(
        model="openai/gpt-4o-mini",
        base_url=url,
        api_key=SECRET,
        cache_path=tmp_path / "cache.sqlite",
        timeout_s=30.0,
        max_attempts=2,
        backoff_base_s=0.01,
        backoff_max_s=0.05,
    )
    base.update(kw)
    return ClientConfig(**base)


async def gather(client: LLMClient, n: int, start: int = 0) -> tuple[list[ChatResult], list[ProviderAbort]]:
    outcomes = await asyncio.gather(*[client.chat(msgs(start + i)) for i in range(n)], return_exceptions=True)
    for o in outcomes:
        if not isinstance(o, (ChatResult, ProviderAbort)):
            raise o
    return [o for o in outcomes if isinstance(o, ChatResult)], [
        o for o in outcomes if isinstance(o, ProviderAbort)
    ]


def refused_url() -> str:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    return f"http://127.0.0.1:{port}/v1"


class Gate:
    """A responder that holds the requests it is told to hold until released (event-driven)."""

    def __init__(self, inner, hold=lambda req: req.index == 0) -> None:
        self.inner, self.hold = inner, hold
        self.release = threading.Event()
        self.arrived = threading.Event()

    def __call__(self, req):
        if self.hold(req):
            self.arrived.set()
            self.release.wait(60)
        return self.inner(req)


async def wait_for_thread_event(event: threading.Event, timeout: float = 60) -> None:
    assert await asyncio.to_thread(event.wait, timeout), "the server never saw the request"


# --- the abort and its interface -----------------------------------------------------------------


async def test_401_aborts_after_one_request_with_message_and_hint(tmp_path):
    leak = MockReply(status=401, error=f"Incorrect API key provided: {SECRET}.", error_code="invalid_api_key")
    with MockLLMServer(leak) as srv:
        async with LLMClient(config(srv.openai_url, tmp_path)) as client:
            results, aborts = await gather(client, 20)
            with pytest.raises(ProviderAbort) as later:
                await client.chat(msgs("later"))
            calls = srv.calls
    assert calls == 1  # the canary: one request, not the pool
    assert len(results) == 1 and results[0].error_kind == "auth"  # the deciding call keeps its result
    assert len(aborts) == 19 and all(a is client.aborted for a in aborts) and later.value is client.aborted
    abort = client.aborted
    assert (abort.kind, abort.status_code) == ("auth", 401)
    assert "Incorrect API key provided: ***" in abort.message and SECRET not in str(abort)
    assert abort.hint == "check the API key (OPENAI_API_KEY / --api-key-env)"
    text = str(abort)
    assert "\n" not in text and "auth (HTTP 401)" in text and abort.hint in text


async def test_a_base_url_without_v1_gets_a_404_and_the_hint(tmp_path):
    with MockLLMServer(responders.fixed("1")) as srv:
        async with LLMClient(config(srv.url, tmp_path)) as client:  # .../v1 missing
            results, aborts = await gather(client, 8)
    assert client.stats.calls == 1 and len(results) == 1 and len(aborts) == 7
    assert client.aborted.status_code == 404 and "the base URL may need /v1" in client.aborted.hint
    assert f"{srv.url}/v1" in client.aborted.hint


async def test_a_refused_connection_aborts_after_the_canary(tmp_path):
    url = refused_url()
    async with LLMClient(config(url, tmp_path, max_attempts=2)) as client:
        results, aborts = await gather(client, 10)
    assert len(results) == 1 and results[0].error_kind == "connection" and results[0].attempts == 2
    assert len(aborts) == 9 and client.aborted.kind == "connection"
    assert client.aborted.hint == f"is the server running at {url}?"
    assert client.stats.calls == 2  # the canary's attempts, nothing else


async def test_k_consecutive_permanent_failures_abort(tmp_path):
    with MockLLMServer(lambda req: responders.error(400, "unsupported parameter: foo")) as srv:
        async with LLMClient(config(srv.openai_url, tmp_path, abort_after=3)) as client:
            first = [await client.chat(msgs(i)) for i in range(3)]
            with pytest.raises(ProviderAbort) as caught:
                await client.chat(msgs(3))
        calls = srv.calls
    assert [r.error_kind for r in first] == ["bad_request"] * 3 and calls == 3
    assert caught.value.kind == "bad_request" and "3 requests in a row failed" in caught.value.message
    assert "unsupported parameter: foo" in caught.value.message


async def test_a_success_between_permanent_failures_resets_the_count(tmp_path):
    def answer(req):
        return "1" if "ok" in req.prompt else responders.error(400, "bad")

    with MockLLMServer(answer) as srv:
        async with LLMClient(config(srv.openai_url, tmp_path, abort_after=3)) as client:
            for item in ["a", "b", "ok1", "c", "d", "ok2", "e", "f"]:
                await client.chat(msgs(item))
    assert client.aborted is None and srv.calls == 8


@pytest.mark.parametrize("kind", ["context_length", "content_filter", "server", "rate_limit"])
async def test_other_failures_never_abort(tmp_path, kind):
    reply = {
        "context_length": responders.context_too_long(),
        "content_filter": responders.refused(),
        "server": responders.server_error(500),
        "rate_limit": responders.rate_limited(0),
    }[kind]
    with MockLLMServer(reply) as srv:
        async with LLMClient(config(srv.openai_url, tmp_path, abort_after=2, max_attempts=1)) as client:
            for i in range(5):
                await client.chat(msgs(i))
    assert client.aborted is None and srv.calls == 5


async def test_k_consecutive_connection_failures_after_a_success_abort(tmp_path):
    srv = MockLLMServer(responders.fixed("1")).start()
    url = srv.openai_url
    async with LLMClient(config(url, tmp_path, abort_after=2, max_attempts=1, use_cache=False)) as client:
        assert (await client.chat(msgs(0))).ok
        srv.stop()  # the server goes away mid-run
        a = await client.chat(msgs(1))
        b = await client.chat(msgs(2))  # the second in a row: decides
        with pytest.raises(ProviderAbort):
            await client.chat(msgs(3))
    assert a.error_kind == b.error_kind == "connection" and client.aborted.kind == "connection"
    assert "2 requests in a row failed" in client.aborted.message


async def test_a_call_in_flight_raises_at_once_when_the_client_aborts(tmp_path):
    def answer(req):
        if "slow" in req.prompt:
            return responders.hang()
        if "bad" in req.prompt:
            return MockReply(status=401, error="revoked")
        return "1"

    with MockLLMServer(answer) as srv:
        async with LLMClient(config(srv.openai_url, tmp_path, timeout_s=600)) as client:
            assert (await client.chat(msgs("first"))).ok  # the canary opens the gate
            slow = asyncio.create_task(client.chat(msgs("slow")))
            while srv.calls < 2:  # the slow request is at the server
                await asyncio.sleep(0.01)
            bad = await client.chat(msgs("bad"))
            with pytest.raises(ProviderAbort):
                await asyncio.wait_for(slow, 60)  # not the 600 s timeout
    assert bad.error_kind == "auth" and client.aborted.message == "revoked"


async def test_fail_fast_off_sends_everything(tmp_path):
    with MockLLMServer(MockReply(status=401, error="no")) as srv:
        async with LLMClient(config(srv.openai_url, tmp_path, fail_fast=False)) as client:
            results, aborts = await gather(client, 6)
    assert len(results) == 6 and not aborts and srv.calls == 6 and client.aborted is None


# --- the canary ----------------------------------------------------------------------------------


@pytest.mark.slow
async def test_the_canary_goes_alone_then_the_pool_goes(tmp_path):
    gate = Gate(responders.fixed("1"))
    with MockLLMServer(gate) as srv:
        async with LLMClient(config(srv.openai_url, tmp_path, concurrency=8)) as client:
            pool = asyncio.gather(*[client.chat(msgs(i)) for i in range(12)])
            await wait_for_thread_event(gate.arrived)
            await asyncio.sleep(0.3)  # time for a broken gate to let the others through
            calls_while_held = srv.calls
            gate.release.set()
            results = await asyncio.wait_for(pool, 60)
    assert calls_while_held == 1 and all(r.ok for r in results) and srv.calls == 12
    assert client._failfast.gate_open  # after the canary, the pool goes without waiting


async def test_cache_hits_never_wait_for_the_canary(tmp_path):
    gate = Gate(responders.fixed("1"), hold=lambda req: "new" in req.prompt)
    with MockLLMServer(gate) as srv:
        async with LLMClient(config(srv.openai_url, tmp_path)) as client:
            await client.chat(msgs("cached"))
        async with LLMClient(config(srv.openai_url, tmp_path)) as client:  # a new run
            canary = asyncio.create_task(client.chat(msgs("new")))
            await wait_for_thread_event(gate.arrived)
            hit = await asyncio.wait_for(client.chat(msgs("cached")), 30)
            gate.release.set()
            await asyncio.wait_for(canary, 60)
    assert hit.cached and hit.text == "1"


async def test_a_cancelled_canary_hands_over_to_the_next(tmp_path):
    gate = Gate(responders.fixed("1"), hold=lambda req: "first" in req.prompt)
    with MockLLMServer(gate) as srv:
        async with LLMClient(config(srv.openai_url, tmp_path)) as client:
            first = asyncio.create_task(client.chat(msgs("first")))
            await wait_for_thread_event(gate.arrived)
            second = asyncio.create_task(client.chat(msgs("second")))
            await asyncio.sleep(0)
            first.cancel()
            res = await asyncio.wait_for(second, 60)  # no deadlock: it became the canary
            gate.release.set()
    assert res.ok and first.cancelled()


async def test_an_aborted_client_answers_cache_hits_no_more(tmp_path):
    with MockLLMServer(PerPrompt([MockReply(status=401, error="no")])) as srv:
        async with LLMClient(config(srv.openai_url, tmp_path)) as client:
            await client.chat(msgs(0))
            with pytest.raises(ProviderAbort):
                await client.chat(msgs(0))


# --- a typo'd backend prefix -------------------------------------------------------------------------


def test_a_typo_in_the_backend_prefix_is_refused():
    with pytest.raises(ValueError) as caught:
        resolve_model("ollam/llama3.2")
    assert str(caught.value) == (
        "unknown backend prefix 'ollam' (did you mean 'ollama'?); "
        "write openai/ollam/llama3.2 to send the name as is"
    )
    with pytest.raises(ValueError, match="did you mean 'litellm'"):
        resolve_model("litelm/anthropic/claude")
    with pytest.raises(ValueError, match="did you mean 'openai'"):
        LLMClient(ClientConfig(model="opneai/gpt-4o", cache_path=None))
    for named, backend, name in [
        ("openai/ollam/llama3.2", "openai", "ollam/llama3.2"),
        ("Qwen/Qwen2.5-7B-Instruct", "openai", "Qwen/Qwen2.5-7B-Instruct"),
        ("meta-llama/Llama-3-8B", "openai", "meta-llama/Llama-3-8B"),
        ("Ollama/llama3.2", "ollama", "llama3.2"),
    ]:
        assert resolve_model(named) == ResolvedModel(backend, name, named)


def test_judge_run_refuses_a_typo_in_the_backend_prefix(tmp_path):
    data = make_dataset(tmp_path / "data", 1, 2)
    args = run_args("http://127.0.0.1:9", tmp_path / "out", data)
    args[args.index("--model") + 1] = "ollam/llama3.2"
    proc = judge(*args, cwd=tmp_path, env=sandbox(tmp_path))
    assert proc.returncode == 2 and "did you mean 'ollama'" in proc.stderr
    assert not (tmp_path / "out").exists()


# --- end to end ------------------------------------------------------------------------------------


def test_judge_run_stops_after_one_request_on_401(tmp_path):
    """The runner stops the job with the provider's message (interface agreed with the runner)."""
    data = make_dataset(tmp_path / "data", 3, 5)
    message = "Incorrect API key provided: mock-key-check"
    with MockLLMServer(MockReply(status=401, error=message)) as srv:
        proc = judge(*run_args(srv.openai_url, tmp_path / "out", data), cwd=tmp_path, env=sandbox(tmp_path))
        calls = srv.calls
    assert proc.returncode != 0
    assert calls == 1
    assert message in proc.stdout + proc.stderr
    assert RUN_SECRET not in proc.stdout + proc.stderr


def test_an_aborted_run_writes_and_prints_no_key(tmp_path):
    data = make_dataset(tmp_path / "data", 2, 4)
    with MockLLMServer(MockReply(status=401, error=f"Incorrect API key provided: {RUN_SECRET}")) as srv:
        proc = judge(
            *run_args(srv.openai_url, tmp_path / "out", data, "--cache", str(tmp_path / "c.sqlite")),
            cwd=tmp_path,
            env=sandbox(tmp_path),
        )
        calls = srv.calls
    output = proc.stdout + proc.stderr
    assert proc.returncode != 0 and calls == 1
    assert "Incorrect API key provided: ***" in output and RUN_SECRET not in output
    written = [p for p in tmp_path.rglob("*") if p.is_file() and RUN_SECRET.encode() in p.read_bytes()]
    assert written == []
