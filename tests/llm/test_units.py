"""Routing, pricing, retry policy pieces, the SQLite cache (incl. several processes) and `judge cache`."""

from __future__ import annotations

import json
import multiprocessing

import pytest

from _cli import judge
from reljudge.errors import InputError
from reljudge.llm import ClientConfig, Message, ResponseCache, load_prices, messages_sha256, resolve_model
from reljudge.llm.backends.base import classify_status, normalise_base_url
from reljudge.llm.cache import cache_key, legacy_cache_key
from reljudge.llm.pricing import PriceTable, cost_usd, merge_prices
from reljudge.llm.retry import parse_retry_after, retry_after_from_headers


@pytest.mark.parametrize(
    ("model", "backend", "name"),
    [
        ("gpt-4o", "openai", "gpt-4o"),
        ("openai/gpt-4o", "openai", "gpt-4o"),
        ("ollama/llama3.2", "ollama", "llama3.2"),
        ("litellm/anthropic/claude-3-5-haiku-latest", "litellm", "anthropic/claude-3-5-haiku-latest"),
        ("openai/meta-llama/Llama-3-8B", "openai", "meta-llama/Llama-3-8B"),
        ("Qwen/Qwen2.5-7B", "openai", "Qwen/Qwen2.5-7B"),
        ("OLLAMA/llama3.2:8b", "ollama", "llama3.2:8b"),
    ],
)
def test_resolve_model(model, backend, name):
    resolved = resolve_model(model)
    assert (resolved.backend, resolved.model, resolved.named) == (backend, name, model)


@pytest.mark.parametrize("bad", ["", "  ", "ollama/", "litellm/"])
def test_resolve_model_rejects(bad):
    with pytest.raises(ValueError):
        resolve_model(bad)


def test_price_lookup_and_cost():
    # prices from litellm's model cost map (litellm 1.106.2: gpt-4o $2.50/$10, gpt-4o-mini
    # $0.15/$0.60, gpt-4.1-mini $0.40/$1.60 per 1M tokens)
    table = PriceTable()
    assert table["gpt-4o-2024-08-06"] == table["gpt-4o"]
    assert table["gpt-4o-mini-2024-07-18"] == table["gpt-4o-mini"]
    assert table["gpt-4.1-mini"][:2] == (0.40, 1.60)
    assert table.quote("llama3.2").price is None
    assert cost_usd("openai", "gpt-4o", 1_000_000, 100_000, table) == (pytest.approx(3.5), True)
    assert cost_usd("openai", "mystery", 1000, 1000, table) == (0.0, False)
    assert cost_usd("ollama", "llama3.2", 1000, 1000, table) == (0.0, True)  # local
    table = merge_prices({"mystery": {"input": 1, "output": 2}})
    assert cost_usd("openai", "mystery", 1_000_000, 1_000_000, table) == (pytest.approx(3.0), True)


def test_load_prices_yaml_json_and_errors(tmp_path):
    y = tmp_path / "p.yaml"
    y.write_text("gpt-4o:\n  input: 1.0\n  output: 2.0\nmy-model: [0.5, 0.5]\n")
    table = load_prices(y)
    assert table["gpt-4o"].input == 1.0 and table["my-model"].output == 0.5
    assert table["gpt-4o-mini"].input == 0.15  # the map's, not in the file
    j = tmp_path / "p.json"
    j.write_text(json.dumps({"x": {"input": 3, "output": 4}}))
    assert load_prices(j)["x"].output == 4.0
    bad = tmp_path / "bad.yaml"
    bad.write_text("gpt-4o: cheap\n")
    with pytest.raises(InputError, match="gpt-4o"):
        load_prices(bad)
    with pytest.raises(InputError):
        load_prices(tmp_path / "missing.yaml")


def test_retry_after_parsing():
    assert parse_retry_after("2") == 2.0
    assert parse_retry_after("0.5") == 0.5
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0  # in the past
    assert parse_retry_after("soon") is None and parse_retry_after(None) is None
    assert retry_after_from_headers({"retry-after-ms": "250"}) == 0.25
    assert retry_after_from_headers({"retry-after": "3"}) == 3.0


def test_classify_status():
    assert classify_status(429, "slow down", 1.0).kind == "rate_limit"
    assert classify_status(429, "x").retryable
    assert classify_status(503, "x").kind == "server"
    assert classify_status(400, "This model's maximum context length is 8192").kind == "context_length"
    assert not classify_status(400, "context_length_exceeded").retryable
    assert classify_status(400, "flagged by content_filter").kind == "content_filter"
    assert classify_status(401, "no").kind == "auth"
    assert classify_status(404, "model not found").kind == "bad_request"
    assert not classify_status(404, "x").retryable


def test_normalise_base_url():
    assert normalise_base_url("HTTP://LocalHost:8000/v1/") == "http://localhost:8000/v1"
    assert normalise_base_url("https://user:pw@Host/v1") == "https://host/v1"
    assert normalise_base_url(None) == ""


def test_cache_key_excludes_key_and_url_and_depends_on_everything_else():
    msgs = [{"role": "user", "content": "x"}]
    base = cache_key("openai", "m", msgs, {"temperature": 0.0, "seed": 42})
    assert base == cache_key("openai", "m", msgs, {"seed": 42, "temperature": 0.0})  # order-insensitive
    assert base != cache_key("ollama", "m", msgs, {"temperature": 0.0, "seed": 42})
    assert base != cache_key("openai", "m2", msgs, {"temperature": 0.0, "seed": 42})
    assert base != cache_key(
        "openai", "m", [{"role": "system", "content": "x"}], {"temperature": 0.0, "seed": 42}
    )
    assert base != cache_key("openai", "m", msgs, {"temperature": 0.0, "seed": 42, "logprobs": True})
    # the first format hashed the base URL: an entry stored under it is found by its own key
    legacy = legacy_cache_key("openai", "m", "", msgs, {"temperature": 0.0, "seed": 42})
    assert legacy not in (
        base,
        legacy_cache_key("openai", "m", "http://h/v1", msgs, {"temperature": 0.0, "seed": 42}),
    )


def test_messages_and_config_validation():
    assert messages_sha256([Message.user("a")]) == messages_sha256(
        [Message.coerce({"role": "user", "content": "a"})]
    )
    with pytest.raises(ValueError):
        Message("robot", "x")
    with pytest.raises(ValueError):
        Message.coerce({"content": "x"})
    for bad in ({"concurrency": 0}, {"max_attempts": 0}, {"timeout_s": 0}, {"rpm": -1}, {"top_logprobs": 50}):
        with pytest.raises(ValueError):
            ClientConfig(model="gpt-4o", **bad)
    cfg = ClientConfig(
        model="gpt-4o", max_tokens=10, logprobs=True, top_logprobs=2, extra_params={"top_p": 1}
    )
    assert cfg.decoding_params() == {
        "temperature": 0.0,
        "seed": 42,
        "max_tokens": 10,
        "logprobs": True,
        "top_logprobs": 2,
        "top_p": 1,
    }
    assert "api_key" not in repr(ClientConfig(model="gpt-4o", api_key="sk-hidden-abcdef"))


def test_default_cache_path(monkeypatch, tmp_path):
    from reljudge.llm import default_cache_path

    monkeypatch.setenv("RELJUDGE_CACHE", str(tmp_path / "x.sqlite"))
    assert default_cache_path() == tmp_path / "x.sqlite"
    assert ClientConfig(model="gpt-4o").cache_path == tmp_path / "x.sqlite"
    monkeypatch.delenv("RELJUDGE_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert default_cache_path() == tmp_path / "reljudge" / "llm-cache.sqlite"


def _writer(path: str, worker: int, n: int) -> None:
    with ResponseCache(path) as cache:
        for i in range(n):
            cache.put(f"k{worker}-{i}", "openai", f"model-{worker % 2}", {"text": f"{worker}:{i}"})
            cache.put("shared", "openai", "model-0", {"text": "same"})
            assert cache.get(f"k{worker}-{i}") == {"text": f"{worker}:{i}"}


@pytest.mark.slow
def test_cache_is_safe_across_processes(tmp_path):
    path = tmp_path / "c.sqlite"
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(str(path), w, 40)) for w in range(3)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
    assert [p.exitcode for p in procs] == [0, 0, 0]
    with ResponseCache(path) as cache:
        stats = cache.stats()
        assert stats.entries == 3 * 40 + 1
        assert stats.by_model == {"openai/model-0": 81, "openai/model-1": 40}
        assert cache.clear("model-1") == 40
        assert cache.clear("openai/model-0") == 81
        assert cache.stats().entries == 0


def test_cli_cache_stats_and_clear(tmp_path):
    path = tmp_path / "c.sqlite"
    res = judge("cache", "stats", "--cache", str(path), "--json")
    assert res.returncode == 0 and json.loads(res.stdout)["entries"] == 0 and not path.exists()
    with ResponseCache(path) as cache:
        cache.put("a", "openai", "gpt-4o", {"text": "1"})
        cache.put("b", "openai", "gpt-4o", {"text": "2"})
        cache.put("c", "ollama", "llama3.2", {"text": "3"})
    res = judge("cache", "stats", "--cache", str(path))
    assert res.returncode == 0 and "entries: 3" in res.stdout and "openai/gpt-4o" in res.stdout
    stats = json.loads(judge("cache", "stats", "--cache", str(path), "--json").stdout)
    assert stats["by_model"] == {"openai/gpt-4o": 2, "ollama/llama3.2": 1} and stats["size_bytes"] > 0
    res = judge("cache", "clear", "--cache", str(path), input="n\n")
    assert res.returncode == 1 and "nothing deleted" in res.output
    res = judge("cache", "clear", "--cache", str(path), "--model", "ollama/llama3.2", "--yes")
    assert res.returncode == 0 and "deleted 1 entries" in res.stdout
    res = judge("cache", "clear", "--cache", str(path), "--yes")
    assert res.returncode == 0 and "deleted 2 entries" in res.stdout


def test_cli_cache_rejects_a_non_cache_file(tmp_path):
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"this is not sqlite at all" * 100)
    res = judge("cache", "stats", "--cache", str(junk))
    assert res.returncode == 2 and "not a reljudge cache" in res.stderr
