"""``judge doctor`` against the mock server: a good setup, an unreachable port, a model the
server does not serve, a URL without /v1; the key is never shown."""

from __future__ import annotations

import socket

import pytest

from _cli import judge
from reljudge.testing import MockLLMServer

SECRET = "sk-doctor-secret-0123456789"


@pytest.fixture()
def env(tmp_path):
    data = tmp_path / "data"
    (data / "trec-dl19").mkdir(parents=True)
    return {"OPENAI_API_KEY": SECRET, "RELJUDGE_CACHE": str(tmp_path / "c" / "cache.sqlite"),
            "RELJUDGE_DATA_DIR": str(data), "OPENAI_BASE_URL": None}  # fmt: skip


def _lines(ran):
    return {line.split()[1]: line for line in ran.stdout.splitlines() if line.split()}


@pytest.mark.slow
def test_a_good_setup_passes_every_check_and_never_shows_the_key(env, tmp_path):
    with MockLLMServer() as server:
        ran = judge("doctor", "--model", "openai/gpt-4o-mini", "--base-url", server.openai_url, env=env)
    assert ran.returncode == 0, ran.output
    lines = _lines(ran)
    assert all(line.startswith("ok") for line in lines.values()), ran.stdout
    assert "from $OPENAI_API_KEY" in lines["key"] and SECRET not in ran.output
    assert f"{server.openai_url}/models" in lines["endpoint"]
    assert "'gpt-4o-mini' among them" in lines["models"]
    assert "gpt-4o-mini" in lines["price"] and "$0.15 in" in lines["price"]
    assert str(tmp_path / "c" / "cache.sqlite") in lines["cache"] and "$RELJUDGE_CACHE" in lines["cache"]
    assert f"trec-dl19 in {tmp_path / 'data'}" in lines["data"]
    assert "all checks passed" in ran.stderr


def test_an_unreachable_port_fails_the_endpoint_check(env):
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    ran = judge(
        "doctor",
        "--model",
        "openai/m",
        "--base-url",
        f"http://127.0.0.1:{port}/v1",
        "--timeout",
        "5",
        env=env,
    )
    assert ran.returncode == 1
    line = _lines(ran)["endpoint"]
    assert line.startswith("FAIL") and "cannot connect" in line and "1 check(s) failed" in ran.stderr


def test_a_model_the_server_does_not_serve_fails_with_a_did_you_mean(env):
    with MockLLMServer(models=("gpt-4o-mini", "llama3.2")) as server:
        ran = judge("doctor", "--model", "openai/gpt-4o-mnii", "--base-url", server.openai_url, env=env)
    assert ran.returncode == 1
    lines = _lines(ran)
    assert lines["models"].startswith("FAIL") and "did you mean 'gpt-4o-mini'?" in lines["models"]
    # and its price is another model's: said, not failed
    assert lines["price"].startswith("WARN") and "priced as 'gpt-4o'" in lines["price"]


def test_a_url_without_v1_gets_the_hint_and_a_listed_key_is_masked(env):
    with MockLLMServer(models=("mock-model", SECRET)) as server:
        ran = judge("doctor", "--base-url", server.openai_url.removesuffix("/v1"), env=env)
        assert ran.returncode == 1 and "does --base-url end in /v1?" in _lines(ran)["endpoint"]
        ran = judge("doctor", "--model", "openai/mock-model", "--base-url", server.openai_url, env=env)
    assert ran.returncode == 0, ran.output
    assert SECRET not in ran.output and "***" in _lines(ran)["models"]


def test_no_key_for_the_provider_fails_the_key_check(env):
    ran = judge("doctor", "--model", "gpt-4o", "--timeout", "0.5", env={**env, "OPENAI_API_KEY": None})
    assert ran.returncode == 1
    assert _lines(ran)["key"].startswith("FAIL") and "export OPENAI_API_KEY=" in _lines(ran)["key"]
