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
    PerPrompt,
    Scripted,
    responders,
)
from reljudge.testing.server import MockRequest


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


def test_cli_mock_server_refuses_bad_options():
    res = _run_cli("mock-server", "--host", "0.0.0.0")
    assert res.returncode == 2 and "loopback" in res.stderr
    res = _run_cli("mock-server", "--responder", "nonsense")
    assert res.returncode == 2 and "--responder" in res.stderr
    res = _run_cli("mock-server", "--rate-429", "0.7", "--rate-5xx", "0.7")
    assert res.returncode == 2 and "sum" in res.stderr
