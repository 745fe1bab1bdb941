"""Offline replay (``--cache-only``): the response cache keys an answer by the model, the messages
and the decoding parameters -- not the server's URL -- so a job run again against another
endpoint, or none, makes the same outputs from the cache alone, with no request sent; a request
the cache cannot answer stops the job naming the item. A cache written with the first key format
(which hashed the URL) still answers."""

from __future__ import annotations

import asyncio

import pytest

from _cli import judge
from reljudge.llm.cache import ResponseCache, legacy_cache_key
from reljudge.llm.client import LLMClient
from reljudge.llm.types import ClientConfig
from reljudge.testing import MockLLMServer, responders

DEAD = "http://127.0.0.1:9/v1"  # the discard port: nothing answers there


def _run(tmp_path, out, base_url, *extra):
    return judge(
        "run", "--method", "umbrela", "--model", "openai/mock", "--base-url", base_url,
        "--dataset", "dl19-sample", "--limit", "12", "--cache", tmp_path / "cache.sqlite",
        "--out", tmp_path / out, "--no-progress", *extra,
    )  # fmt: skip


@pytest.mark.slow
def test_a_replay_against_no_server_makes_the_same_qrels_from_the_cache_alone(tmp_path):
    with MockLLMServer(responders.fixed("##final score: 2")) as srv:
        first = _run(tmp_path, "live", srv.openai_url)
        assert first.returncode == 0, first.output
        asked = srv.calls
    assert asked == 12
    replay = _run(tmp_path, "replay", DEAD, "--cache-only")
    assert replay.returncode == 0, replay.output
    live, again = (tmp_path / d / "qrels.txt" for d in ("live", "replay"))
    assert again.read_bytes() == live.read_bytes() and live.read_text().count("\n") == 12
    # the live run directory itself accepts the replay (a declared replay may name another server)
    resumed = _run(tmp_path, "live", DEAD, "--cache-only", "--retry-failed")
    assert resumed.returncode == 0, resumed.output


def test_a_replay_that_misses_stops_naming_the_item_and_sends_nothing(tmp_path):
    with MockLLMServer(responders.fixed("##final score: 1")) as srv:
        assert _run(tmp_path, "live", srv.openai_url).returncode == 0
        before = srv.calls
        missed = judge(
            "run", "--method", "umbrela", "--model", "openai/mock", "--base-url", srv.openai_url,
            "--dataset", "dl19-sample", "--limit", "14", "--cache", tmp_path / "cache.sqlite",
            "--out", tmp_path / "more", "--no-progress", "--cache-only",
        )  # fmt: skip
        assert srv.calls == before  # not one request, though the server is there
    assert missed.returncode == 1, missed.output
    assert "--cache-only" in missed.output and "prompt umbrela/bing-zeroshot" in missed.output
    assert "query '" in missed.output


def test_cache_only_cannot_go_with_no_cache(tmp_path):
    ran = _run(tmp_path, "x", DEAD, "--cache-only", "--no-cache")
    assert ran.returncode == 2 and "--cache-only" in ran.output


def test_an_entry_stored_under_the_first_key_format_still_answers(tmp_path):
    """A cache an earlier version wrote (its keys hashed the base URL) is read, never paid again."""
    messages = [{"role": "user", "content": "is this relevant?"}]
    with MockLLMServer(responders.fixed("1")) as srv:
        config = ClientConfig(
            model="openai/mock", base_url=srv.openai_url, api_key="k", cache_path=tmp_path / "c.sqlite"
        )

        async def ask() -> tuple[str, bool]:
            async with LLMClient(config) as client:
                params = client.effective_params()
                legacy = legacy_cache_key("openai", "mock", client._keys.base_url, messages, params)
                with ResponseCache(tmp_path / "c.sqlite") as cache:
                    cache.put(legacy, "openai", "mock", {"text": "0", "finish_reason": "stop", "usage": {}})
                result = await client.chat(messages)
                return result.text, result.cached

        text, cached = asyncio.run(ask())
        assert srv.calls == 0
    assert (text, cached) == ("0", True)
