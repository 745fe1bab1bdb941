"""The mock LLM server over raw HTTP, its responders, and the `judge mock-server` command."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import httpx
import pytest

from reljudge.testing import (
    AutoResponder,
    FaultInjector,
    MockLLMServer,
    MockReply,
    MockRequest,
    PerPrompt,
    Scripted,
    responders,
)


def post(url: str, body: dict, timeout: float | httpx.Timeout = 60.0) -> httpx.Response:
    return httpx.post(url, json=body, timeout=timeout)


def test_openai_endpoint_and_models():
    with MockLLMServer(responders.fixed("Hello there, world")) as srv:
        r = post(
            f"{srv.openai_url}/chat/completions",
            {"model": "m1", "messages": [{"role": "user", "content": "Hi you"}]},
        )
        models = httpx.get(f"{srv.openai_url}/models").json()
        assert srv.calls == 1
    assert r.status_code == 200
    data = r.json()
    assert data["model"] == "m1" and data["object"] == "chat.completion"
    choice = data["choices"][0]
    assert choice["message"]["content"] == "Hello there, world" and choice["finish_reason"] == "stop"
    assert choice["logprobs"] is None
    assert data["usage"] == {
        "prompt_tokens": 5,
        "completion_tokens": 4,
        "total_tokens": 9,
    }  # Hi you +3; Hello there , world
    assert "mock-model" in [m["id"] for m in models["data"]]


def test_openai_logprobs_and_max_tokens():
    with MockLLMServer(responders.fixed("2 because reasons")) as srv:
        r = post(
            f"{srv.openai_url}/chat/completions",
            {
                "model": "m",
                "messages": [{"role": "user", "content": "x"}],
                "logprobs": True,
                "top_logprobs": 2,
                "max_tokens": 1,
            },
        ).json()
    choice = r["choices"][0]
    assert choice["message"]["content"] == "2" and choice["finish_reason"] == "length"
    (item,) = choice["logprobs"]["content"]
    assert item["token"] == "2" and item["top_logprobs"][0]["token"] == "2" and len(item["top_logprobs"]) == 2
    assert item["bytes"] == [50]


def test_ollama_endpoints_stream_and_not():
    with MockLLMServer(responders.fixed("one two three")) as srv:
        msgs = [{"role": "user", "content": "q"}]
        plain = post(
            f"{srv.ollama_url}/api/chat", {"model": "llama3.2", "messages": msgs, "stream": False}
        ).json()
        streamed = post(f"{srv.ollama_url}/api/chat", {"model": "llama3.2", "messages": msgs})
        tags = httpx.get(f"{srv.ollama_url}/api/tags").json()
    assert plain["message"]["content"] == "one two three" and plain["done"] is True
    assert plain["done_reason"] == "stop" and plain["eval_count"] == 3 and plain["prompt_eval_count"] == 4
    chunks = [json.loads(line) for line in streamed.text.splitlines()]
    assert "".join(c["message"]["content"] for c in chunks) == "one two three"
    assert [c["done"] for c in chunks] == [False, False, False, True]
    assert chunks[-1]["eval_count"] == 3
    assert "llama3.2" in [m["name"] for m in tags["models"]]


def test_ollama_stream_through_the_library():
    import ollama

    with MockLLMServer(responders.fixed("streamed answer here")) as srv:
        client = ollama.Client(host=srv.ollama_url)
        parts = [
            chunk.message.content
            for chunk in client.chat(model="m", messages=[{"role": "user", "content": "x"}], stream=True)
        ]
    assert "".join(parts) == "streamed answer here"


def test_errors_and_bad_requests():
    with MockLLMServer(lambda req: responders.rate_limited(retry_after=2)) as srv:
        r = post(
            f"{srv.openai_url}/chat/completions",
            {"model": "m", "messages": [{"role": "user", "content": "x"}]},
        )
        assert r.status_code == 429 and r.headers["retry-after"] == "2"
        assert r.json()["error"]["type"] == "rate_limit_error"
        r = post(f"{srv.ollama_url}/api/chat", {"model": "m", "messages": [{"role": "user", "content": "x"}]})
        assert r.status_code == 429 and r.json() == {"error": "Rate limit reached (mock)"}
        assert httpx.post(f"{srv.openai_url}/chat/completions", content=b"not json").status_code == 400
        assert httpx.get(f"{srv.url}/nowhere").status_code == 404
        assert srv.calls == 2  # malformed requests are not chat calls


def test_a_reply_is_a_responder():
    with MockLLMServer(responders.error(503, "down")) as srv:
        r = post(f"{srv.ollama_url}/api/chat", {"model": "m", "messages": [], "stream": False})
    assert r.status_code == 503 and r.json() == {"error": "down"}


def test_broken_responder_answers_500():
    def broken(req):
        raise RuntimeError("boom")

    with MockLLMServer(broken) as srv:
        r = post(f"{srv.openai_url}/chat/completions", {"model": "m", "messages": []})
    assert r.status_code == 500 and "boom" in r.json()["error"]["message"]


@pytest.mark.slow
def test_hang_and_latency():
    with MockLLMServer(lambda req: responders.hang()) as srv:
        with pytest.raises(httpx.ReadTimeout):  # the hang lasts until the server stops
            post(
                f"{srv.openai_url}/chat/completions",
                {"model": "m", "messages": []},
                timeout=httpx.Timeout(60.0, read=0.2),  # connecting may be slow on a busy machine
            )
    start = time.monotonic()
    with MockLLMServer(lambda req: MockReply(text="x", delay_s=0.1), latency_s=0.1) as srv:
        post(f"{srv.openai_url}/chat/completions", {"model": "m", "messages": []})
    assert time.monotonic() - start >= 0.2


def test_refuses_non_loopback_host():
    with pytest.raises(ValueError, match="loopback"):
        MockLLMServer(host="0.0.0.0")
    with pytest.raises(ValueError, match="loopback"):
        MockLLMServer(host="192.168.1.10")
    MockLLMServer(host="localhost")  # allowed (not started)


def _req(content: str, seen: int = 0, model: str = "m") -> MockRequest:
    return MockRequest(
        api="openai",
        model=model,
        messages=[{"role": "user", "content": content}],
        body={},
        index=0,
        seen=seen,
    )


def test_sequence_and_per_prompt():
    seq = Scripted(["a", responders.error(500), lambda req: "c"])
    assert [seq(_req("x")) for _ in range(4)] == ["a", responders.error(500), "c", "c"]
    per = PerPrompt(["first", "again"])
    assert (
        per(_req("x", seen=0)) == "first"
        and per(_req("y", seen=1)) == "again"
        and per(_req("z", seen=5)) == "again"
    )


def test_fault_injector_is_deterministic_and_eventually_succeeds():
    inner = responders.fixed("fine")
    a = FaultInjector(inner, rate_429=0.3, rate_5xx=0.2, rate_garbled=0.1, rate_empty=0.1, seed=3)
    b = FaultInjector(inner, rate_429=0.3, rate_5xx=0.2, rate_garbled=0.1, rate_empty=0.1, seed=3)
    draws_a = [a.fault_for(_req(f"p{i}", seen)) for i in range(50) for seen in range(3)]
    draws_b = [b.fault_for(_req(f"p{i}", seen)) for i in range(50) for seen in range(3)]
    assert draws_a == draws_b
    assert {"429", "5xx", "garbled", "empty", None} <= set(draws_a)
    share = sum(d is not None for d in draws_a) / len(draws_a)
    assert 0.5 < share < 0.9  # rates sum to 0.7
    other = FaultInjector(inner, rate_429=0.3, rate_5xx=0.2, rate_garbled=0.1, rate_empty=0.1, seed=4)
    assert draws_a != [other.fault_for(_req(f"p{i}", seen)) for i in range(50) for seen in range(3)]
    for i in range(50):  # a retry of the same prompt redraws: some attempt passes
        assert any(a.fault_for(_req(f"p{i}", seen)) is None for seen in range(30))
    garbled = next(a(_req(f"p{i}")) for i in range(50) if a.fault_for(_req(f"p{i}")) == "garbled")
    assert garbled.text.startswith("~") and not any(c.isdigit() for c in garbled.text)
    with pytest.raises(ValueError):
        FaultInjector(inner, rate_429=0.8, rate_5xx=0.5)


UMBRELA = (
    "Given a query and a passage, you must provide a score on an integer scale of 0 to 3 ...\n"
    "Query: {q}\nPassage: {p}\n\n... Provide each score in the format of: ##final score: score without providing any reasoning."
)
BINARY = (
    "Does the passage provide information that would be useful in answering the query? Just answer 1 for yes and 0 "
    "for no, without any explanation or extra verbiage.\nQuery:{q}\nPassage:{p}\n"
)
PAIRWISE = (
    "Select the passage that best answers the query. Just answer 1 or 2, without any explanation or extra verbiage.  "
    "If both passages are similar, select the simplest and clearest.\nQuestion:\n{q}\nPassage 1:\n{a}\nPassage 2:\n{b}\n"
)


def test_auto_responder_formats_and_determinism():
    auto = AutoResponder()
    grades = {auto(_req(UMBRELA.format(q="q", p=f"passage {i}"))).text for i in range(40)}
    assert grades == {f"##final score: {g}" for g in range(4)}
    same = [auto(_req(UMBRELA.format(q="q", p="fixed passage"))).text for _ in range(3)]
    assert len(set(same)) == 1
    binary = {auto(_req(BINARY.format(q="q", p=f"doc {i}"))).text for i in range(30)}
    assert binary == {"0", "1"}
    for i in range(20):
        ab = auto(_req(PAIRWISE.format(q="q", a=f"A{i}", b=f"B{i}"))).text
        ba = auto(_req(PAIRWISE.format(q="q", a=f"B{i}", b=f"A{i}"))).text
        assert {ab, ba} == {"1", "2"}  # consistent under swapping
    score = auto(
        _req("label each of the 3 nuggets either a vital or okay ...\nNugget List: ['a', 'b', 'c']")
    ).text
    assert len(json.loads(score)) == 3 and set(json.loads(score)) <= {"vital", "okay"}
    assign = auto(_req("label each nugget as support, partial_support, or not_support ... ['x', 'y']")).text
    assert len(json.loads(assign)) == 2 and set(json.loads(assign)) <= {
        "support",
        "partial_support",
        "not_support",
    }
    graded_json = auto(
        _req('Respond only in the following JSON format:\n```json\n{ "grade": int }\n```\nContext: abc')
    ).text
    assert '"grade"' in graded_json
    questions = auto(
        _req(
            "Generate 10 concise insightful questions ... Keep the questions short and in a Python list format."
        )
    ).text
    assert isinstance(json.loads(questions), list)
    assert auto(_req("tell me a joke")).text == auto.fallback
    auto.register("custom", lambda r: "MAGIC" in r.prompt, lambda r: "42")
    assert auto(_req("MAGIC ##final score")).text == "42"
    assert auto.hits["custom"] == 1 and auto.hits["umbrela"] >= 40


def _run_cli(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    # a real process: a mock-server that took the bad option would serve until the timeout
    return subprocess.run(
        [sys.executable, "-m", "reljudge", *args], capture_output=True, text=True, timeout=timeout
    )


def test_cli_mock_server_prints_urls_and_serves():
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    proc = subprocess.Popen(
        [sys.executable, "-m", "reljudge", "mock-server", "--responder", "fixed:hello", "--rate-429", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        first = proc.stdout.readline().strip()
        second = proc.stdout.readline().strip()
        assert first.startswith("openai_base_url=http://127.0.0.1:") and first.endswith("/v1")
        assert second.startswith("ollama_base_url=http://127.0.0.1:")
        url = first.split("=", 1)[1]
        r = post(f"{url}/chat/completions", {"model": "m", "messages": [{"role": "user", "content": "x"}]})
        assert r.json()["choices"][0]["message"]["content"] == "hello"
    finally:
        proc.terminate()
        proc.wait(timeout=60)


@pytest.mark.slow
def test_cli_mock_server_refuses_bad_options():
    res = _run_cli("mock-server", "--host", "0.0.0.0")
    assert res.returncode == 2 and "loopback" in res.stderr
    res = _run_cli("mock-server", "--responder", "nonsense")
    assert res.returncode == 2 and "--responder" in res.stderr
    res = _run_cli("mock-server", "--rate-429", "0.7", "--rate-5xx", "0.7")
    assert res.returncode == 2 and "sum" in res.stderr


# --- hostile modes (issue 9), at the HTTP level ---------------------------------------------------

CHAT = {
    "model": "m",
    "messages": [{"role": "system", "content": "sys"}, {"role": "user", "content": "Hi you"}],
}


def test_named_responders_and_unknown_names():
    assert set(responders.NAMES) >= {
        "auto", "echo", "fixed", "echo-all", "prompt-plus", "list-content", "int-content", "dict-content",
        "absurd-usage", "huge", "gzip-bomb", "think-bomb", "nesting-bomb", "unauthorized", "not-found",
        "blackhole", "key-echo", "redirect",
    }  # fmt: skip
    with pytest.raises(ValueError, match="unknown responder 'nope'.*gzip-bomb"):
        responders.named("nope")
    with pytest.raises(ValueError, match="absurd-usage"):
        responders.named("absurd-usage:2e5")
    with pytest.raises(ValueError, match="huge"):
        responders.named("huge:lots")
    assert responders.named("fixed:a:b")(None).text == "a:b"


@pytest.mark.parametrize("api", ["openai", "ollama"])
def test_echo_all_and_prompt_plus_return_the_prompt(api):
    for name, tail in (("echo-all", ""), ("prompt-plus", "\n")):
        with MockLLMServer(responders.named(name)) as srv:
            url = f"{srv.openai_url}/chat/completions" if api == "openai" else f"{srv.ollama_url}/api/chat"
            data = post(url, dict(CHAT, stream=False)).json()
        text = data["choices"][0]["message"]["content"] if api == "openai" else data["message"]["content"]
        assert text.startswith("sys\nHi you" + tail) and (name == "echo-all") == (text == "sys\nHi you")


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("list-content", list),
        ("int-content", int),
        ("dict-content", dict),
    ],
)
def test_content_shapes(name, expected):
    with MockLLMServer(responders.named(name)) as srv:
        oa = post(f"{srv.openai_url}/chat/completions", CHAT).json()
        ol = post(f"{srv.ollama_url}/api/chat", dict(CHAT, stream=False)).json()
    content = oa["choices"][0]["message"]["content"]
    assert isinstance(content, expected) and isinstance(ol["message"]["content"], expected)
    if expected is list:
        assert [p["type"] for p in content] == ["text", "image_url", "text"]


@pytest.mark.parametrize("variant", list(responders.ABSURD_USAGE))
def test_absurd_usage_sends_the_literal_numbers(variant):
    with MockLLMServer(responders.absurd_usage(variant, responders.fixed("1"))) as srv:
        oa = post(f"{srv.openai_url}/chat/completions", CHAT).text
        ol = post(f"{srv.ollama_url}/api/chat", dict(CHAT, stream=False)).text
    prompt, completion = responders.ABSURD_USAGE[variant]
    assert f'"prompt_tokens": {prompt}' in oa and f'"completion_tokens": {completion}' in oa
    assert f'"prompt_eval_count": {prompt}' in ol and f'"eval_count": {completion}' in ol


def test_absurd_usage_variants_take_turns():
    with MockLLMServer(responders.named("absurd-usage")) as srv:
        bodies = [post(f"{srv.openai_url}/chat/completions", CHAT).text for _ in range(4)]
    assert [
        any(f'"prompt_tokens": {p}' in b for b in bodies)
        for name, (p, _) in responders.ABSURD_USAGE.items()
        if name != "1e12"  # asked for by name only
    ] == [True] * 4


def test_huge_and_gzip_bomb_bodies():
    with MockLLMServer(responders.named("huge:2")) as srv:
        r = httpx.post(f"{srv.openai_url}/chat/completions", json=CHAT, timeout=30)
    assert int(r.headers["content-length"]) > 2 * 1024 * 1024
    with MockLLMServer(responders.named("gzip-bomb:16")) as srv:
        with httpx.stream("POST", f"{srv.openai_url}/chat/completions", json=CHAT, timeout=30) as r:
            raw = b"".join(r.iter_raw())
            assert r.headers["content-encoding"] == "gzip"
    assert len(raw) < 64 * 1024  # ~16 KiB on the wire ...
    import zlib

    inflated = zlib.decompressobj(zlib.MAX_WBITS | 16).decompress(raw)
    assert len(inflated) > 16 * 1024 * 1024  # ... 16 MiB once inflated
    assert json.loads(inflated)["choices"][0]["message"]["content"] == "x" * (16 * 1024 * 1024)


def test_think_and_nesting_bombs():
    assert responders.named("think-bomb")(None).text == "<think>" * 15000 + "##final score: 2"
    assert responders.named("nesting-bomb")(None).text == "<output>" * 1000 + "3" + "</output>" * 1000


def test_unauthorized_and_not_found_in_each_api():
    with MockLLMServer(responders.named("unauthorized")) as srv:
        oa = post(f"{srv.openai_url}/chat/completions", CHAT)
        ol = post(f"{srv.ollama_url}/api/chat", CHAT)
    assert oa.status_code == ol.status_code == 401
    assert oa.json()["error"]["type"] == "authentication_error"
    with MockLLMServer(responders.named("not-found")) as srv:
        oa = post(f"{srv.openai_url}/chat/completions", CHAT)
        ol = post(f"{srv.ollama_url}/api/chat", CHAT)
    assert oa.status_code == ol.status_code == 404
    assert oa.json()["error"]["code"] == "model_not_found" and "not found" in ol.json()["error"]


@pytest.mark.slow
def test_blackhole_never_answers_until_the_server_stops():
    srv = MockLLMServer(responders.named("blackhole")).start()
    try:
        with pytest.raises(httpx.ReadTimeout):
            post(f"{srv.openai_url}/chat/completions", CHAT, timeout=0.5)
        assert srv.calls == 1
    finally:
        srv.stop()  # releases the hanging handler


def test_key_echo_sees_the_header_the_record_does_not_keep():
    with MockLLMServer(responders.named("key-echo")) as srv:
        r = httpx.post(
            f"{srv.openai_url}/chat/completions", json=CHAT, headers={"Authorization": "Bearer sk-echo-me"}
        )
        req = srv.requests[0]
    assert "Bearer sk-echo-me" in r.json()["choices"][0]["message"]["content"]
    assert req.headers["authorization"] == "<redacted>" and req.raw_authorization is None
    assert "sk-echo-me" not in repr(req)


def test_redirect_modes():
    with MockLLMServer(responders.named("redirect")) as srv:
        r = httpx.post(f"{srv.openai_url}/chat/completions", json=CHAT, follow_redirects=False)
        assert r.status_code == 307
        assert r.headers["location"] == f"http://localhost:{srv.port}/moved/v1/chat/completions"
        moved = post(f"{srv.url}/moved/v1/chat/completions", CHAT)  # what a follower would get
        assert moved.status_code == 200
    with MockLLMServer(responders.named("redirect:same-host")) as srv:
        r = httpx.post(f"{srv.ollama_url}/api/chat", json=dict(CHAT, stream=False), follow_redirects=True)
        assert r.status_code == 200 and [q.path for q in srv.requests] == ["/api/chat", "/moved/api/chat"]


def test_anthropic_messages_route():
    body = {
        "model": "claude-x",
        "system": [{"type": "text", "text": "sys"}],
        "messages": [{"role": "user", "content": [{"type": "text", "text": "Hi you"}]}],
        "max_tokens": 2,
    }
    with MockLLMServer(responders.fixed("one two three")) as srv:
        data = post(f"{srv.url}/v1/messages", body).json()
        req = srv.requests[0]
    assert req.api == "anthropic" and req.messages == [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "Hi you"},
    ]
    assert data["content"] == [{"type": "text", "text": "one two"}] and data["stop_reason"] == "max_tokens"
    assert data["usage"]["output_tokens"] == 2


@pytest.mark.slow
def test_cli_mock_server_serves_a_hostile_mode():
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    proc = subprocess.Popen(
        [sys.executable, "-m", "reljudge", "mock-server", "--responder", "int-content"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        url = proc.stdout.readline().strip().split("=", 1)[1]
        r = post(f"{url}/chat/completions", CHAT)
        assert r.json()["choices"][0]["message"]["content"] == 3
    finally:
        proc.terminate()
        proc.wait(timeout=10)
