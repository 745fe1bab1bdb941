"""``judge run --batch`` when a create fails after the provider made the batch (the mock server
makes it, then answers 500): the batch is found by its input file when the provider drops its
metadata; when the provider does not list it either, the wave is reported lost and never created
again blindly, until ``--batch-resend-lost`` says so (a provider that honours the create's
``Idempotency-Key`` then answers with the first batch). Counted on the server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from _batch_run import batch_argv
from _cli import judge, records
from reljudge.errors import EXIT_OK
from reljudge.testing import MockLLMServer

ENV = {"OPENAI_API_KEY": "sk-test-batch"}
MODELS = ["openai/gpt-4o-mini", "litellm/openai/gpt-4o-mini"]


def argv(srv: MockLLMServer, tmp_path: Path, model: str, *more: str) -> list[str]:
    return batch_argv(srv, tmp_path, *more, model=model, limit=15)


def steps(tmp_path: Path) -> list[str]:
    state = json.loads((tmp_path / "run" / "batch" / "state.json").read_text())
    return [w["step"] for w in state["waves"]]


def finished_once(srv: MockLLMServer, tmp_path: Path) -> None:
    got = records(tmp_path / "run")
    assert len(got) == 15 and len({r.key for r in got}) == 15 and all(r.status == "ok" for r in got)
    assert len(srv.batches.submissions) == 15 and srv.batches.resubmitted == 0  # nothing paid twice
    assert len(srv.batches.batches) == 1 and srv.calls == 0


@pytest.mark.slow
@pytest.mark.parametrize("model", MODELS)
def test_a_lost_create_whose_batch_lost_its_metadata_is_found_by_its_input_file(tmp_path, model):
    faults = {"lose_creates": 1, "drop_metadata": True}
    with MockLLMServer(models=("gpt-4o-mini",), batch_faults=faults) as srv:
        result = judge(*argv(srv, tmp_path, model), env=ENV)
        assert result.returncode == EXIT_OK, result.output
        finished_once(srv, tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("model", MODELS)
def test_a_lost_create_the_provider_does_not_list_is_reported_and_sent_again_only_when_told(tmp_path, model):
    faults = {"lose_creates": 1, "unlisted": True, "idempotency": True}
    with MockLLMServer(models=("gpt-4o-mini",), batch_faults=faults) as srv:
        args = argv(srv, tmp_path, model)
        for _ in range(3):  # the first run and every resume: reported, nothing created again
            result = judge(*args, env=ENV)
            assert result.returncode == 1, result.output
            assert "error: the batch API:" in result.output and "--batch-resend-lost" in result.output
            assert "input file file-mock" in result.output and "Traceback" not in result.output
            assert steps(tmp_path) == ["lost"]
            assert srv.batches.calls["POST batches"] == 1 and len(srv.batches.batches) == 1
        result = judge(*args, "--batch-resend-lost", env=ENV)  # said knowingly; the key finds it
        assert result.returncode == EXIT_OK, result.output
        finished_once(srv, tmp_path)
        assert srv.batches.calls["POST batches"] == 2


@pytest.mark.slow
def test_without_an_idempotent_provider_the_told_resend_is_the_only_second_payment(tmp_path):
    faults = {"lose_creates": 1, "unlisted": True}
    with MockLLMServer(models=("gpt-4o-mini",), batch_faults=faults) as srv:
        args = argv(srv, tmp_path, MODELS[0])
        result = judge(*args, env=ENV)
        assert result.returncode == 1 and steps(tmp_path) == ["lost"], result.output
        result = judge(*args, "--batch-resend-lost", env=ENV)
        assert result.returncode == EXIT_OK, result.output
        assert len(records(tmp_path / "run")) == 15
        assert len(srv.batches.batches) == 2 and srv.batches.resubmitted == 15  # the user said so
