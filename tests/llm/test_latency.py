"""``latency_s`` is the provider's time from when a call is sent, not the wait for a free
concurrency slot (a one-slot local server behind ``--concurrency 1``). Event-driven: the first
answer is held until the second call is known to wait for the slot."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from reljudge.llm import ClientConfig, LLMClient
from reljudge.testing import MockLLMServer, MockReply

HOLD_S = 0.5  # how long, at least, the second call waits for the slot


@pytest.mark.slow
async def test_latency_runs_from_send_not_from_the_slot_wait(tmp_path):
    release = threading.Event()
    first_seen = threading.Event()

    def responder(req):
        if req.index == 0:
            first_seen.set()
            release.wait(60)  # generous bound: released by the test below
        return MockReply(text="1")

    with MockLLMServer(responder) as srv:
        cfg = ClientConfig(
            model="openai/mock",
            base_url=srv.openai_url,
            api_key="sk-test",
            concurrency=1,
            use_cache=False,
            timeout_s=120,
        )
        async with LLMClient(cfg) as client:
            first = asyncio.create_task(client.chat([{"role": "user", "content": "a"}]))
            while not first_seen.is_set():
                await asyncio.sleep(0.01)
            began = time.monotonic()
            second = asyncio.create_task(client.chat([{"role": "user", "content": "b"}]))
            await asyncio.sleep(HOLD_S)  # the second call waits for the slot all this time
            assert len(srv.requests) == 1
            release.set()
            await first
            result = await second
            total = time.monotonic() - began
    assert result.status == "ok"
    # the wait for the slot (at least HOLD_S by construction) is not in latency_s
    assert total - result.latency_s >= HOLD_S
