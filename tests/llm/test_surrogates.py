"""A provider's answer holding a JSON escape of half a UTF-16 pair (``\\udc80``), which no cache,
record or file can hold: read as U+FFFD (`reljudge.io.lines.replace_surrogates`), never a crash
at the cache's write (the mock server sends it: a responder's text is escaped by ``json.dumps``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from reljudge.io.lines import replace_surrogates
from reljudge.llm import ClientConfig, LLMClient, ResponseCache
from reljudge.testing import MockLLMServer

MSGS = [{"role": "user", "content": "Answer with ##final score: N."}]


@pytest.mark.slow
async def test_a_lone_surrogate_in_an_answer_is_read_as_a_replacement_character(tmp_path: Path) -> None:
    with MockLLMServer(lambda req: "##final score: 2 \udc80") as srv:
        cfg = ClientConfig(model="openai/gpt-4o-mini", base_url=srv.openai_url, api_key="x",
                           cache_path=tmp_path / "cache.sqlite", max_attempts=1)  # fmt: skip
        async with LLMClient(cfg) as client:
            res = await client.chat(MSGS)
        assert res.status == "ok" and res.text == "##final score: 2 \ufffd"
        async with LLMClient(cfg) as client:
            again = await client.chat(MSGS)
    assert again.cached and again.text == res.text and srv.calls == 1
    with ResponseCache(tmp_path / "cache.sqlite") as cache:
        assert cache.stats().entries == 1


def test_replace_surrogates_reaches_keys_and_lists_and_keeps_clean_values() -> None:
    clean = {"a": ["x", "é", {"b": 1}]}
    assert replace_surrogates(clean) == (clean, 0) and replace_surrogates(clean)[0] is clean
    assert replace_surrogates({"\ud800": ["ok", "a\udfffb"]}) == ({"\ufffd": ["ok", "a\ufffdb"]}, 2)
    assert replace_surrogates("\ud83d\ude00") == ("\ufffd\ufffd", 2)  # a pair left unjoined is two halves
