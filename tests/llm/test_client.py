"""End-to-end tests of LLMClient through the real openai / ollama libraries against the mock server."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path

import pytest

from reljudge.llm import ChatResult, ClientConfig, LLMClient
from reljudge.llm.limits import RateLimiter
from reljudge.testing import FaultInjector, MockLLMServer, MockReply, PerPrompt, responders

SECRET = "sk-test-SECRET-9f8e7d6c5b4a"
#: the client timeout where it only guards against a hang (a loaded machine can be slow to answer)
HANG_GUARD_S = 60.0
#: the client timeout where a hanging server must trip it while every other answer must not: far
#: longer than a local answer takes on a busy machine (the hang itself lasts until the server stops)
TRIP_S = 3.0
MSGS = [
    {"role": "system", "content": "You are a TREC assessor."},
    {"role": "user", "content": "Just answer 1 for yes and 0 for no.\nQuery:who\nPassage:the passage text"},
]


def config(srv: MockLLMServer, tmp_path: Path, backend: str = "openai", **kw) -> ClientConfig:
    url = srv.openai_url if backend == "openai" else srv.ollama_url
    model = "openai/gpt-4o-mini" if backend == "openai" else "ollama/llama3.2"
    base = dict(
        model=model,
        base_url=url,
        api_key=SECRET,
        cache_path=tmp_path / "cache.sqlite",
        timeout_s=HANG_GUARD_S,
        max_attempts=4,
        backoff_base_s=0.01,
        backoff_max_s=0.05,
    )
    base.update(kw)
    return ClientConfig(**base)


@pytest.fixture
def server():
    with MockLLMServer(responders.fixed("The answer is 1")) as srv:
        yield srv


@pytest.mark.parametrize("backend", ["openai", "ollama"])
async def test_round_trip_with_usage(server, tmp_path, backend):
    async with LLMClient(config(server, tmp_path, backend)) as client:
        res = await client.chat(MSGS)
    assert res.status == "ok" and res.ok
    assert res.text == "The answer is 1"
    assert res.backend == backend
    assert res.finish_reason == "stop"
    assert res.usage.completion_tokens == 4  # The / answer / is / 1
    assert res.usage.prompt_tokens > 10
    assert res.usage.calls == 1 and res.attempts == 1 and not res.cached
    assert res.params == {"temperature": 0.0, "seed": 42}
    assert len(res.messages_sha256) == 64
    assert client.usage.completion_tokens == 4 and client.usage.calls == 1
    assert server.calls == 1
    sent = server.requests[0]
    assert sent.messages == MSGS
    assert sent.headers["authorization"] == "<redacted>"  # the key was sent, the mock does not keep it
    if backend == "openai":
        assert sent.body["temperature"] == 0.0 and sent.body["seed"] == 42
    else:
        assert sent.body["options"] == {"temperature": 0.0, "seed": 42}
        assert sent.body["stream"] is False


async def test_gpt4o_mini_is_priced(server, tmp_path):
    async with LLMClient(config(server, tmp_path)) as client:
        res = await client.chat(MSGS)
    expected = (res.usage.prompt_tokens * 0.15 + res.usage.completion_tokens * 0.60) / 1e6
    assert res.price_known and res.usage.cost_usd == pytest.approx(expected)


async def test_unknown_model_cost_zero_flagged(server, tmp_path):
    async with LLMClient(config(server, tmp_path, model="openai/mystery-7b")) as client:
        res = await client.chat(MSGS)
    assert res.usage.cost_usd == 0.0 and res.price_known is False
    assert client.stats.unpriced_models == {"openai/mystery-7b"}


@pytest.mark.parametrize("backend", ["openai", "ollama"])
async def test_logprobs_only_when_asked(server, tmp_path, backend):
    async with LLMClient(config(server, tmp_path, backend, use_cache=False)) as client:
        plain = await client.chat(MSGS)
        with_lp = await client.chat(MSGS, logprobs=True, top_logprobs=3)
    assert plain.logprobs is None
    assert "logprobs" not in server.requests[0].body or not server.requests[0].body["logprobs"]
    assert [t["token"] for t in with_lp.logprobs] == ["The", "answer", "is", "1"]
    last = with_lp.logprobs[-1]
    assert last["logprob"] < 0 and len(last["top_logprobs"]) == 3
    assert with_lp.params["logprobs"] is True and with_lp.params["top_logprobs"] == 3


async def test_cache_hit_sends_nothing_and_misses_on_other_params(server, tmp_path):
    cfg = config(server, tmp_path)
    async with LLMClient(cfg) as client:
        first = await client.chat(MSGS)
    async with LLMClient(cfg) as client:  # a new client (new run) reads the persistent cache
        second = await client.chat(MSGS)
        assert server.calls == 1
        assert second.cached and second.text == first.text and second.status == "ok"
        assert second.usage.calls == 0 and second.usage.cost_usd == 0.0
        assert second.usage.completion_tokens == first.usage.completion_tokens  # kept for information
        assert client.usage.calls == 0 and client.stats.cache_hits == 1
        await client.chat(MSGS, temperature=0.7)
        assert server.calls == 2
        await client.chat(MSGS, max_tokens=50)
        assert server.calls == 3
        await client.chat(MSGS, seed=1)
        assert server.calls == 4
        await client.chat([*MSGS[:1], {"role": "user", "content": "other"}])
        assert server.calls == 5
    async with LLMClient(config(server, tmp_path, model="openai/gpt-4o")) as client:
        res = await client.chat(MSGS)
        assert not res.cached and server.calls == 6
    async with LLMClient(config(server, tmp_path, "ollama")) as client:
        res = await client.chat(MSGS)
        assert not res.cached and server.calls == 7
    raw = b"".join(p.read_bytes() for p in tmp_path.iterdir() if p.name.startswith("cache.sqlite"))
    assert SECRET.encode() not in raw
    assert b"The answer is 1" in raw  # the file does hold the answers


async def test_use_cache_false_always_calls(server, tmp_path):
    async with LLMClient(config(server, tmp_path, use_cache=False)) as client:
        await client.chat(MSGS)
        res = await client.chat(MSGS)
    assert server.calls == 2 and not res.cached
    assert not (tmp_path / "cache.sqlite").exists()


async def test_identical_concurrent_calls_share_one_request(tmp_path):
    with MockLLMServer(responders.fixed("1"), latency_s=0.2) as srv:
        async with LLMClient(config(srv, tmp_path)) as client:
            results = await asyncio.gather(*[client.chat(MSGS) for _ in range(5)])
    assert srv.calls == 1
    assert [r.text for r in results] == ["1"] * 5
    assert sum(not r.cached for r in results) == 1


@pytest.mark.slow
async def test_429_retry_after_is_honoured(tmp_path):
    events = []
    with MockLLMServer(PerPrompt([responders.rate_limited(retry_after=0.4), "ok now"])) as srv:
        cfg = config(srv, tmp_path, backoff_base_s=5.0, backoff_max_s=5.0)  # jitter would be far off
        async with LLMClient(cfg, on_event=lambda kind, info: events.append((kind, info))) as client:
            start = time.monotonic()
            res = await client.chat(MSGS)
            elapsed = time.monotonic() - start
    assert res.status == "ok" and res.text == "ok now"
    assert res.attempts == 2 and res.usage.calls == 2 and srv.calls == 2
    assert elapsed >= 0.35  # it did wait; how long it chose to wait is the event's wait_s below
    assert client.stats.retries == 1 and client.stats.calls == 2
    ((kind, info),) = events
    assert kind == "retry" and info["kind"] == "rate_limit" and info["wait_s"] == pytest.approx(0.4)
    assert info["attempt"] == 1


@pytest.mark.slow
async def test_ollama_429_retry_after_is_honoured(tmp_path):
    waits = []
    with MockLLMServer(PerPrompt([responders.rate_limited(retry_after=0.3), "fine"])) as srv:
        cfg = config(srv, tmp_path, "ollama", backoff_base_s=5.0, backoff_max_s=5.0)
        async with LLMClient(cfg, on_event=lambda kind, info: waits.append(info.get("wait_s"))) as client:
            start = time.monotonic()
            res = await client.chat(MSGS)
            elapsed = time.monotonic() - start
    assert res.text == "fine" and res.attempts == 2
    assert waits == [pytest.approx(0.3)]  # Retry-After, not the jittered 0-5 s backoff
    assert elapsed >= 0.25


@pytest.mark.parametrize("backend", ["openai", "ollama"])
async def test_400_is_not_retried(tmp_path, backend):
    events = []
    with MockLLMServer(lambda req: responders.error(400, "unsupported parameter: foo")) as srv:
        async with LLMClient(
            config(srv, tmp_path, backend), on_event=lambda k, i: events.append(k)
        ) as client:
            res = await client.chat(MSGS)
    assert srv.calls == 1
    assert res.status == "api_error" and res.error_kind == "bad_request"
    assert "unsupported parameter: foo" in res.error and "400" in res.error
    assert res.text == "" and res.usage.calls == 1
    assert client.stats.failures == {"bad_request": 1}
    assert events == ["failure"]


async def test_context_length_is_not_retried(tmp_path):
    with MockLLMServer(lambda req: responders.context_too_long()) as srv:
        async with LLMClient(config(srv, tmp_path)) as client:
            res = await client.chat(MSGS)
    assert srv.calls == 1 and res.status == "api_error" and res.error_kind == "context_length"
    assert "maximum context length" in res.error


@pytest.mark.parametrize("backend", ["openai", "ollama"])
async def test_500_is_retried(tmp_path, backend):
    with MockLLMServer(
        PerPrompt([responders.server_error(500), responders.server_error(503), "recovered"])
    ) as srv:
        async with LLMClient(config(srv, tmp_path, backend)) as client:
            res = await client.chat(MSGS)
    assert res.status == "ok" and res.text == "recovered" and res.attempts == 3 and srv.calls == 3


async def test_persistent_500_fails_after_max_attempts(tmp_path):
    with MockLLMServer(lambda req: responders.server_error(500)) as srv:
        async with LLMClient(config(srv, tmp_path, max_attempts=3)) as client:
            res = await client.chat(MSGS)
    assert srv.calls == 3 and res.status == "api_error" and res.error_kind == "server" and res.attempts == 3
    assert (tmp_path / "cache.sqlite").exists()
    async with LLMClient(config(srv, tmp_path, max_attempts=3)) as client:  # failures are not cached
        again = await client.chat(MSGS)
    assert not again.cached


@pytest.mark.parametrize("backend", ["openai", "ollama"])
@pytest.mark.slow
async def test_hang_past_timeout_fails_after_max_attempts(tmp_path, backend):
    with MockLLMServer(lambda req: responders.hang()) as srv:  # hangs until the server stops
        cfg = config(srv, tmp_path, backend, timeout_s=1.0, max_attempts=2)
        async with LLMClient(cfg) as client:
            start = time.monotonic()
            res = await client.chat(MSGS)
            elapsed = time.monotonic() - start
    assert res.status == "api_error" and res.error_kind == "timeout"
    assert srv.calls == 2 and res.attempts == 2
    assert elapsed >= 1.9  # each attempt waited its full timeout (ending at all shows it fired)


@pytest.mark.slow
async def test_hang_then_success(tmp_path):
    with MockLLMServer(PerPrompt([responders.hang(), "late but fine"])) as srv:
        async with LLMClient(config(srv, tmp_path, timeout_s=TRIP_S)) as client:
            res = await client.chat(MSGS)
    assert res.status == "ok" and res.text == "late but fine" and res.attempts == 2


@pytest.mark.parametrize("backend", ["openai", "ollama"])
async def test_truncated_keeps_text(tmp_path, backend):
    with MockLLMServer(responders.fixed("one two three four five six")) as srv:
        async with LLMClient(config(srv, tmp_path, backend, max_tokens=3)) as client:
            res = await client.chat(MSGS)
            again = await client.chat(MSGS)
    assert res.status == "truncated" and res.finish_reason == "length"
    assert res.text == "one two three" and res.usage.completion_tokens == 3
    # a cut-off answer is not cached: --retry-failed must reach the provider again
    assert not again.cached and again.status == "truncated"
    assert srv.calls == 2


async def test_refusal_is_refused_not_cached(tmp_path):
    with MockLLMServer(lambda req: responders.refused("I cannot judge this.")) as srv:
        async with LLMClient(config(srv, tmp_path)) as client:
            res = await client.chat(MSGS)
            await client.chat(MSGS)
    assert res.status == "refused" and res.error == "I cannot judge this."
    assert srv.calls == 2


@pytest.mark.slow
async def test_concurrency_limit_is_respected(tmp_path):
    together = threading.Barrier(3, timeout=HANG_GUARD_S)

    def echo_once_three_are_in(req):
        # the client's first request goes alone (a canary: a misconfigured run sends one
        # request, not the pool); the next three are held until all three are in flight at once
        if 1 <= req.index <= 3:
            together.wait()
        return responders.echo(req)

    with MockLLMServer(echo_once_three_are_in, latency_s=0.05) as srv:
        async with LLMClient(config(srv, tmp_path, concurrency=3, use_cache=False)) as client:
            msgs = [[{"role": "user", "content": f"item {i}"}] for i in range(20)]
            results = await asyncio.gather(*[client.chat(m) for m in msgs])
    assert [r.text for r in results] == [f"item {i}" for i in range(20)]
    assert srv.calls == 20
    assert srv.max_in_flight == 3


@pytest.mark.slow
async def test_many_calls_with_injected_failures_all_return(tmp_path):
    events: list[str] = []
    faults = FaultInjector(
        responders.echo,
        rate_429=0.15,
        rate_5xx=0.15,
        rate_hang=0.05,
        rate_garbled=0.1,
        rate_empty=0.05,
        seed=7,
    )
    with MockLLMServer(faults) as srv:  # a hang lasts until the server stops
        cfg = config(srv, tmp_path, concurrency=8, timeout_s=TRIP_S, max_attempts=10)
        async with LLMClient(cfg, on_event=lambda kind, info: events.append(kind)) as client:
            msgs = [[{"role": "user", "content": f"question {i}"}] for i in range(60)]
            results = await asyncio.gather(*[client.chat(m) for m in msgs])
    assert len(results) == 60 and all(isinstance(r, ChatResult) for r in results)
    assert all(r.status == "ok" for r in results)  # with 10 attempts every retry storm ends
    injected = sum(faults.counts[k] for k in ("429", "5xx", "hang"))
    assert injected > 5
    # every injected error costs one retry (a slow machine may add timeouts, never fewer retries)
    assert client.stats.retries >= injected and client.stats.retries == events.count("retry")
    changed = [r for r, m in zip(results, msgs, strict=True) if r.text != m[0]["content"]]
    assert 0 < len(changed) <= faults.counts["garbled"] + faults.counts["empty"]
    assert all(r.text == "" or r.text.startswith("~") for r in changed)
    assert client.usage.calls == srv.calls == 60 + client.stats.retries


class FakeClock:
    """A monotonic clock that moves only when the rate limiter sleeps on it, so the limiter's
    accounting is checked exactly, whatever the machine's load."""

    def __init__(self) -> None:
        self.now = 100.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds
        await asyncio.sleep(0)


async def test_rpm_limit_spaces_requests(tmp_path):
    clock = FakeClock()
    limiter = RateLimiter(rpm=120, clock=clock, sleep=clock.sleep)  # 2 requests per second
    limiter._rpm.level = 1.0  # start nearly empty: one request now, then one every 0.5 s
    granted: list[float] = []
    acquire = limiter.acquire

    async def acquire_and_note(tokens: int = 0) -> None:
        await acquire(tokens)
        granted.append(clock.now)

    limiter.acquire = acquire_and_note
    with MockLLMServer(responders.echo) as srv:
        async with LLMClient(config(srv, tmp_path, rpm=120, use_cache=False)) as client:
            client._limiter = limiter
            results = await asyncio.gather(
                *[client.chat([{"role": "user", "content": f"x{i}"}]) for i in range(3)]
            )
    assert [r.status for r in results] == ["ok"] * 3 and srv.calls == 3
    assert granted == pytest.approx([100.0, 100.5, 101.0])  # spaced by 60 s / 120
    assert clock.sleeps == pytest.approx([0.5, 0.5])
    assert limiter.waited_s == pytest.approx(1.0)
    assert client.stats.limiter_wait_s >= 1.0 - 1e-9  # summed over the calls that waited


def test_rate_limiter_refills_from_its_clock_and_caps_at_capacity():
    clock = FakeClock()
    limiter = RateLimiter(rpm=60, tpm=600, clock=clock, sleep=clock.sleep)  # 1 request/s, 10 tokens/s
    limiter._rpm.level = 0.0
    limiter._tpm.level = 0.0
    clock.now += 0.25
    assert limiter._rpm.wait_for(1) == pytest.approx(0.75)
    assert limiter._tpm.wait_for(5) == pytest.approx(0.25)  # 2.5 tokens refilled of 5
    # a request above the burst (3 s' worth: 30 tokens) waits for a full bucket, not a minute's worth
    assert limiter._tpm.wait_for(10_000) == pytest.approx(2.75)
    clock.now += 3600
    assert limiter._rpm.wait_for(1) == 0.0 and limiter._rpm.level == 3.0  # never above the burst

    async def three_calls() -> None:
        limiter._rpm.level = 0.0
        for _ in range(3):
            await limiter.acquire(tokens=1)

    asyncio.run(three_calls())
    assert clock.sleeps == pytest.approx([1.0, 1.0, 1.0])
    assert limiter.waited_s == pytest.approx(3.0)


async def test_bad_messages_raise_value_error(server, tmp_path):
    async with LLMClient(config(server, tmp_path)) as client:
        with pytest.raises(ValueError):
            await client.chat([])
        with pytest.raises(ValueError):
            await client.chat([{"role": "wizard", "content": "x"}])
    assert server.calls == 0


async def test_connection_refused_is_api_error(tmp_path):
    with MockLLMServer() as srv:
        url = srv.openai_url
    cfg = ClientConfig(
        model="openai/x",
        base_url=url,
        cache_path=None,
        timeout_s=HANG_GUARD_S,
        max_attempts=2,
        backoff_base_s=0.01,
    )
    async with LLMClient(cfg) as client:
        res = await client.chat(MSGS)
    assert res.status == "api_error" and res.error_kind == "connection" and res.attempts == 2


async def test_api_key_never_in_errors(tmp_path):
    def leak(req):
        return MockReply(status=401, error=f"Incorrect API key provided: {SECRET}")

    with MockLLMServer(leak) as srv:
        async with LLMClient(config(srv, tmp_path)) as client:
            res = await client.chat(MSGS)
    assert res.status == "api_error" and res.error_kind == "auth" and srv.calls == 1
    assert SECRET not in res.error and "***" in res.error


def test_missing_key_without_base_url_is_input_error(monkeypatch):
    from reljudge.errors import InputError

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    client = LLMClient(ClientConfig(model="gpt-4o", cache_path=None))
    with pytest.raises(InputError, match="OPENAI_API_KEY"):
        client.open()


async def test_reasoning_model_quirks(server, tmp_path):
    async with LLMClient(config(server, tmp_path, model="openai/o4-mini", max_tokens=64)) as client:
        res = await client.chat(MSGS)
    body = server.requests[0].body
    assert "temperature" not in body and body["max_completion_tokens"] == 64 and "max_tokens" not in body
    assert res.params["temperature"] is None and res.params["max_tokens"] == 64


def test_chat_sync(server, tmp_path):
    from reljudge.llm import chat_sync

    res = chat_sync(config(server, tmp_path), MSGS)
    assert res.text == "The answer is 1"


async def test_result_knows_its_prompt_endpoint_and_cache_entry(server, tmp_path):
    async with LLMClient(config(server, tmp_path)) as client:
        res = await client.chat(MSGS)
        assert res.prompt == MSGS  # what the reader compares the answer with; never stored
        assert res.base_url == server.openai_url.lower().rstrip("/")
        assert res.cache_key is not None
        again = await client.chat(MSGS)
        assert again.cached and again.prompt == MSGS and again.cache_key == res.cache_key


async def test_forget_and_refresh_ask_the_provider_again(server, tmp_path):
    async with LLMClient(config(server, tmp_path)) as client:
        first = await client.chat(MSGS)
        assert (await client.chat(MSGS)).cached and server.calls == 1
        fresh = await client.chat(MSGS, refresh=True)  # bypasses the cached answer
        assert not fresh.cached and server.calls == 2
        assert client.forget(first) is True
        assert client.forget(first) is False  # already gone
        res = await client.chat(MSGS)
        assert not res.cached and server.calls == 3


async def test_an_answer_holds_its_slot_until_it_is_in_the_cache(tmp_path, monkeypatch):
    """At most `concurrency` answers are ever paid for but not yet durable: a request's slot is
    given back only once its answer is committed to the cache, so a process killed at any point
    pays again for no more than the requests in flight (issue: answers lost before a SIGKILL)."""
    from reljudge.llm.cache import ResponseCache

    entered = threading.Semaphore(0)
    release = threading.Event()
    put = ResponseCache.put

    def held_put(self, *args, **kwargs):
        entered.release()
        release.wait(HANG_GUARD_S)
        put(self, *args, **kwargs)

    with MockLLMServer(responders.fixed("1")) as srv:
        async with LLMClient(config(srv, tmp_path, concurrency=2)) as client:
            await client.chat([{"role": "user", "content": "the first request goes alone (a canary)"}])
            monkeypatch.setattr(ResponseCache, "put", held_put)
            srv.reset()
            calls = [
                asyncio.create_task(client.chat([{"role": "user", "content": f"item {i}"}])) for i in range(4)
            ]
            for _ in range(2):  # both slots' answers have arrived and wait for the cache
                assert await asyncio.to_thread(entered.acquire, True, HANG_GUARD_S)
            assert client._semaphore.locked()  # no slot is free while those answers are not durable
            assert srv.calls == 2
            release.set()
            results = await asyncio.gather(*calls)
    assert [r.status for r in results] == ["ok"] * 4 and srv.calls == 4
