"""``judge run --batch`` against a provider that answers slowly without end: a batch's status or
a file's content trickling one byte at a time is left when ``--batch-max-wait`` has passed (exit
code 75; the same command then finishes), and a file's content that never ends is read no
further than what the wave's answers can hold. Both adapters (the OpenAI SDK, LiteLLM); counted
on the mock server. The time bounds are generous guards against a hang, never margins: without
the deadlines each run takes minutes."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from _batch_run import batch_argv
from _cli import judge, records
from reljudge.errors import EXIT_OK
from reljudge.testing import MockLLMServer

ENV = {"OPENAI_API_KEY": "sk-test-batch"}
MODELS = ["openai/gpt-4o-mini", "litellm/openai/gpt-4o-mini"]
#: a run that takes longer hangs (the trickles below last minutes)
HANG_S = 60


def argv(srv: MockLLMServer, tmp_path: Path, model: str, *more: str) -> list[str]:
    return batch_argv(srv, tmp_path, *more, model=model, limit=6)


def timed(*args: str):
    started = time.monotonic()
    result = judge(*args, env=ENV)
    return result, time.monotonic() - started


@pytest.mark.slow
@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("slow", ["status", "content"])
def test_a_trickling_provider_is_left_at_batch_max_wait_and_the_same_command_finishes(tmp_path, slow, model):
    with MockLLMServer(models=("gpt-4o-mini",), batch_faults={"slow": slow, "trickle_s": 0.5}) as srv:
        args = argv(srv, tmp_path, model)
        result, took = timed(*args, "--batch-max-wait", "3")
        assert result.returncode == 75, result.output
        assert took < HANG_S, took
        assert "after --batch-max-wait 3 s (the provider did not answer in time" in result.output
        assert "Traceback" not in result.output
        srv.batches.slow = None
        result = judge(*args, env=ENV)
        assert result.returncode == EXIT_OK, result.output
        got = records(tmp_path / "run")
        assert len(got) == 6 and all(r.status == "ok" for r in got)
        assert len(srv.batches.submissions) == 6 and srv.batches.resubmitted == 0
        assert len(srv.batches.batches) == 1 and srv.calls == 0


@pytest.mark.slow
@pytest.mark.parametrize("model", MODELS)
def test_an_endless_output_file_is_read_no_further_than_the_wave_can_answer(tmp_path, model):
    with MockLLMServer(models=("gpt-4o-mini",), batch_faults={"slow": "endless"}) as srv:
        result, took = timed(*argv(srv, tmp_path, model))
        assert result.returncode == EXIT_OK, result.output
        assert took < HANG_S, took
        assert srv.batches.streamed < 512 * 2**20  # 7 answers' worth (56 MiB) and buffers, not 4 GiB
        got = records(tmp_path / "run")
        assert len(got) == 6 and all(r.status == "ok" for r in got)
        assert "was read no further than 56 MiB" in result.output  # the endless tail, said
        assert srv.batches.resubmitted == 0 and len(srv.batches.batches) == 1
