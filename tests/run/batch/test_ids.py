"""``judge run --batch`` when the provider names a batch with an id that is not one (``.``,
``..``, a path, 300 characters): it is never saved (it would go into every poll's URL); the
batch is found again by its metadata and the run finishes. A batch state an older version saved
with such an id does not stick the run either. Counted on the mock server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from _batch_run import batch_argv
from _cli import judge, records
from reljudge.errors import EXIT_OK
from reljudge.llm.batch.service import is_provider_id
from reljudge.testing import MockLLMServer

ENV = {"OPENAI_API_KEY": "sk-test-batch"}
BAD = [".", "..", "../v1/files", "batch/../x", "b" * 300, "-rf", ""]


def argv(srv: MockLLMServer, tmp_path: Path, model: str = "openai/gpt-4o-mini", *more: str) -> list[str]:
    return batch_argv(srv, tmp_path, *more, model=model, limit=8)


def finished_once(srv: MockLLMServer, tmp_path: Path) -> None:
    got = records(tmp_path / "run")
    assert len(got) == 8 and all(r.status == "ok" for r in got)
    assert len(srv.batches.submissions) == 8 and srv.batches.resubmitted == 0
    assert len(srv.batches.batches) == 1 and srv.calls == 0
    state = json.loads((tmp_path / "run" / "batch" / "state.json").read_text())
    assert all(is_provider_id(w["batch_id"]) and is_provider_id(w["file_id"]) for w in state["waves"])


def test_ids_that_would_leave_their_url_path_are_not_ids():
    assert not any(is_provider_id(bad) for bad in BAD)
    assert all(is_provider_id(ok) for ok in ("batch_abc123", "file-bGl0ZWxsbTo=", "b" * 200, "a..b"))


@pytest.mark.slow
@pytest.mark.parametrize("model", ["openai/gpt-4o-mini", "litellm/openai/gpt-4o-mini"])
@pytest.mark.parametrize("bad", ["..", ".", "a/b", "b" * 300])
def test_a_batch_named_with_an_id_that_is_not_one_is_found_again_and_the_run_finishes(tmp_path, bad, model):
    with MockLLMServer(models=("gpt-4o-mini",), batch_faults={"bad_ids": (bad,)}) as srv:
        result = judge(*argv(srv, tmp_path, model), env=ENV)
        assert result.returncode == EXIT_OK, result.output
        finished_once(srv, tmp_path)


@pytest.mark.slow
def test_a_batch_state_holding_a_bad_id_from_an_older_version_does_not_stick_the_run(tmp_path):
    with MockLLMServer(models=("gpt-4o-mini",), batch_delay_s=3600) as srv:
        args = argv(srv, tmp_path)
        result = judge(*args, "--batch-max-wait", "0.1", env=ENV)
        assert result.returncode == 75, result.output  # the wave is sent and running
        path = tmp_path / "run" / "batch" / "state.json"
        state = json.loads(path.read_text())
        state["waves"][0]["batch_id"] = ".."  # what an older version saved
        path.write_text(json.dumps(state))
        srv.batches.completion_delay_s = 0
        result = judge(*args, env=ENV)
        assert result.returncode == EXIT_OK, result.output
        assert "held a batch id that is not one" in result.output
        finished_once(srv, tmp_path)
