"""The mock server's own rate limit (`reljudge.testing.ratelimit`): buckets on a test clock, and
429 answers with Retry-After and x-ratelimit-* headers over real HTTP."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest

from reljudge.testing import MockLLMServer
from reljudge.testing.ratelimit import ServerRateLimit


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_requests_per_minute_refill_continuously():
    clock = Clock()
    limit = ServerRateLimit(rpm=600, burst_s=1.0, clock=clock)  # 10 a second, a burst of 10
    verdicts = [limit.admit(1) for _ in range(11)]
    for _ in range(10):
        limit.release()
    assert [v.admitted for v in verdicts] == [True] * 10 + [False]
    refused = verdicts[-1]
    assert refused.refused_by == "requests" and refused.headers["Retry-After"] == "1"
    assert refused.headers["x-ratelimit-limit-requests"] == "600"
    assert refused.headers["x-ratelimit-remaining-requests"] == "0"
    assert refused.headers["x-ratelimit-reset-requests"].endswith("s")
    clock.now = 0.1  # one more request's worth
    assert limit.admit(1).admitted and not limit.admit(1).admitted


def test_tokens_per_minute():
    clock = Clock()
    limit = ServerRateLimit(tpm=6000, burst_s=1.0, clock=clock)  # 100 tokens a second
    assert limit.admit(80).admitted
    verdict = limit.admit(80)
    assert not verdict.admitted and verdict.refused_by == "tokens"
    assert verdict.headers["x-ratelimit-remaining-tokens"] == "20"
    clock.now = 0.6
    assert limit.admit(80).admitted


def test_connections():
    limit = ServerRateLimit(max_connections=2, clock=Clock())
    assert limit.admit(1).admitted and limit.admit(1).admitted
    assert limit.admit(1).refused_by == "connections"
    limit.release()
    assert limit.admit(1).admitted
    assert limit.refused == {"requests": 0, "tokens": 0, "connections": 1}


@pytest.mark.parametrize("bad", [{"rpm": 0}, {"tpm": -1}, {"max_connections": 0}, {"burst_s": 0}])
def test_bad_limits_are_refused(bad):
    with pytest.raises(ValueError):
        ServerRateLimit(**bad)


def _post(url: str) -> tuple[int, dict[str, str], dict]:
    body = json.dumps({"model": "mock-model", "messages": [{"role": "user", "content": "hi"}]}).encode()
    request = urllib.request.Request(
        url + "/chat/completions", data=body, headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as resp:
            return resp.status, {k.lower(): v for k, v in resp.headers.items()}, json.loads(resp.read())
    except urllib.error.HTTPError as err:
        return err.code, {k.lower(): v for k, v in err.headers.items()}, json.loads(err.read())


def test_the_server_answers_429_over_its_limit():
    # a burst of 2 requests at 1 a minute: the third is refused for ~60 s, whatever the machine's speed
    with MockLLMServer(lambda req: "1", rpm=1, rate_burst_s=120) as srv:
        answers = [_post(srv.openai_url) for _ in range(3)]
        assert srv.rate_limit.refused["requests"] == 1
    assert [a[0] for a in answers] == [200, 200, 429]
    ok_headers = answers[0][1]
    assert ok_headers["x-ratelimit-limit-requests"] == "1"
    assert ok_headers["x-ratelimit-remaining-requests"] == "1"
    status, headers, body = answers[2]
    assert int(headers["retry-after"]) >= 1
    assert headers["x-ratelimit-remaining-requests"] == "0"
    assert body["error"]["code"] == "rate_limit_exceeded"


def test_a_limit_without_rate_headers_sends_only_429_and_retry_after():
    """vLLM/Ollama/LiteLLM-style: the limit holds, but no x-ratelimit-* header tells the client."""
    with MockLLMServer(lambda req: "1", rpm=1, rate_burst_s=120, rate_headers=False) as srv:
        answers = [_post(srv.openai_url) for _ in range(3)]
    assert [a[0] for a in answers] == [200, 200, 429]
    for _, headers, _ in answers:
        assert not any(name.startswith("x-ratelimit") for name in headers)
    assert int(answers[2][1]["retry-after"]) >= 1


def test_without_limits_no_rate_headers():
    with MockLLMServer(lambda req: "1") as srv:
        status, headers, _ = _post(srv.openai_url)
    assert status == 200 and not any(name.startswith("x-ratelimit") for name in headers)


@pytest.mark.parametrize("option", [["--rpm", "0"], ["--tpm", "-5"], ["--max-connections", "0"]])
def test_mock_server_command_refuses_bad_limits(option):
    import os
    import subprocess
    import sys

    # a real process: a mock-server that took the bad limit would serve until the timeout
    done = subprocess.run([sys.executable, "-m", "reljudge", "mock-server", *option],
                          capture_output=True, text=True, env=os.environ, timeout=300)  # fmt: skip
    assert done.returncode == 2 and "must be > 0" in done.stderr, done.stderr
