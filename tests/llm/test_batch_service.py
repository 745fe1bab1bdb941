"""`reljudge.llm.batch.service.BatchService` against the mock server's Batch API: what must not
happen twice (an upload, a batch's creation) is sent once, whatever the SDK's retry policy; ids a
provider sends are checked."""

from __future__ import annotations

import asyncio
import time

import pytest

from reljudge.llm.batch.lines import request_line
from reljudge.llm.batch.service import BatchService, _text_id
from reljudge.llm.types import ProviderError
from reljudge.testing import MockLLMServer

SECRET = "sk-batch-service-secret-123456"


def test_a_create_whose_answer_is_lost_is_sent_once_not_retried_by_the_sdk(tmp_path):
    with MockLLMServer(models=("m",)) as srv:
        requests = tmp_path / "wave.jsonl"
        requests.write_bytes(
            request_line("a" * 64, {"model": "m", "messages": [{"role": "user", "content": "hi"}]})
        )

        async def go() -> None:
            # the timeout only ends the wait for an answer the server holds back until released
            service = BatchService(base_url=srv.openai_url, api_key=SECRET, timeout_s=0.5)
            try:
                file_id = await service.upload(requests, "wave.jsonl")
                srv.batches.hold("create")
                with pytest.raises(ProviderError):
                    await service.create(file_id, {"reljudge_run": "r", "reljudge_wave": "0"})
            finally:
                srv.batches.release()
                await service.aclose()

        asyncio.run(go())
        # each attempt is counted when it arrives, before the hold: one create request, one batch
        assert srv.batches.calls["POST batches"] == 1


def test_ids_are_checked_and_an_id_holding_a_secret_is_refused():
    assert _text_id("batch_6721a1b2c3") == "batch_6721a1b2c3"
    assert _text_id("file-bGl0ZWxsbTpmaWxlOm9wZW5haQ==") == "file-bGl0ZWxsbTpmaWxlOm9wZW5haQ=="
    for bad in ("", "a/b", "x" * 201, "id with spaces", "id\n", 7, None):
        with pytest.raises(ProviderError):
            _text_id(bad)
    service = BatchService(
        base_url="http://127.0.0.1:9/v1", api_key=SECRET, redact=lambda t: t.replace(SECRET, "***")
    )
    with pytest.raises(ProviderError, match="holding a secret"):
        service._id(f"batch_{SECRET}")
    assert service._id("batch_ok") == "batch_ok"
    asyncio.run(service.aclose())


def test_a_long_cut_off_answer_is_logged_within_bounds_and_never_sent_again(tmp_path, monkeypatch):
    import json

    from reljudge.io.judgments import read_judgments
    from reljudge.llm.batch.failures import MAX_ENTRY_BYTES
    from reljudge.run import RunConfig
    from reljudge.run.batch.passes import BatchLimits, run_batch_async
    from reljudge.testing import MockReply

    def long_cut_off(req):  # 60,000 words, wide characters, cut at the token limit
        body = {"id": "c1", "object": "chat.completion", "created": 0, "model": "gpt-4o-mini",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": "関連 " * 60_000},
                             "finish_reason": "length"}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 60_000, "total_tokens": 60_010}}  # fmt: skip
        return MockReply(body=json.dumps(body).encode(), headers={"Content-Type": "application/json"})

    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    with MockLLMServer(long_cut_off, models=("gpt-4o-mini",)) as srv:
        cfg = RunConfig(
            method="umbrela", model="openai/gpt-4o-mini", base_url=srv.openai_url, dataset="dl19-sample",
            limit=2, output=tmp_path / "b", cache_path=tmp_path / "b.sqlite", progress=False,
        )  # fmt: skip
        asyncio.run(run_batch_async(cfg, BatchLimits(poll_s=0.01), say=lambda _: None))
        assert srv.batches.resubmitted == 0 and sum(srv.batches.submissions.values()) == 2
    log = (tmp_path / "b" / "batch" / "failures.jsonl").read_bytes().splitlines()
    assert len(log) == 2 and all(len(line) < MAX_ENTRY_BYTES for line in log)
    assert [r.status for r in read_judgments(tmp_path / "b" / "judgments.jsonl")] == ["truncated"] * 2


def test_a_run_killed_between_splitting_and_reserving_its_waves_sends_nothing_over_the_cap(
    tmp_path, monkeypatch
):
    import reljudge.run.batch.passes as batch_module
    from reljudge.run import RunConfig
    from reljudge.run.batch.cost import BatchCapped
    from reljudge.run.batch.passes import BatchLimits, run_batch_async

    class Killed(BaseException):
        pass

    def killed(*args, **kwargs):  # the process dies where the cap would reserve the new waves
        raise Killed

    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    with MockLLMServer(models=("gpt-4o-mini",)) as srv:
        cfg = RunConfig(
            method="umbrela", model="openai/gpt-4o-mini", base_url=srv.openai_url, dataset="dl19-sample",
            limit=40, output=tmp_path / "b", cache_path=tmp_path / "b.sqlite", progress=False, max_cost=0.000001,
        )  # fmt: skip
        with monkeypatch.context() as patch:
            patch.setattr(batch_module, "fit_waves", killed)
            with pytest.raises(Killed):
                asyncio.run(run_batch_async(cfg, BatchLimits(poll_s=0.01), say=lambda _: None))
        with pytest.raises(BatchCapped):  # the same command: the cap holds, nothing goes out
            asyncio.run(run_batch_async(cfg, BatchLimits(poll_s=0.01), say=lambda _: None))
        assert sum(srv.batches.submissions.values()) == 0 and srv.batches.calls["POST batches"] == 0


@pytest.mark.slow
def test_every_call_has_a_total_deadline_however_slowly_the_provider_answers(tmp_path):
    from reljudge.llm.batch.service import CallTimedOut

    with MockLLMServer(models=("m",)) as srv:
        requests = tmp_path / "wave.jsonl"
        requests.write_bytes(
            request_line("a" * 64, {"model": "m", "messages": [{"role": "user", "content": "hi"}]})
        )

        async def go() -> None:
            # each byte comes within the client's timeout (a read's); the call as a whole does not
            service = BatchService(base_url=srv.openai_url, api_key=SECRET, timeout_s=1.0)
            try:
                file_id = await service.upload(requests, "wave.jsonl")
                batch = await service.create(file_id, {"reljudge_run": "r", "reljudge_wave": "0"})
                srv.batches.trickle_s = 0.2
                srv.batches.slow = "status"
                with pytest.raises(CallTimedOut) as cut:  # the call's own bound: 2 timeouts
                    await service.retrieve(batch.id)
                assert not cut.value.waited
                service.deadline = time.monotonic() + 0.5
                with pytest.raises(CallTimedOut) as cut:  # the caller's deadline comes first
                    await service.retrieve(batch.id)
                assert cut.value.waited
            finally:
                srv.batches.slow = None
                await service.aclose()

        asyncio.run(go())
