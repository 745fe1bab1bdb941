"""``judge run --batch`` with a damaged response cache: the pass stops before anything more is
sent (``error:``, exit code 2, the file and how to go on), and once the file is moved away the
same command finishes, reading the answers its batches already brought again from the provider
instead of paying for them twice (counted on the mock server)."""

from __future__ import annotations

from pathlib import Path

import pytest

from _batch_run import batch_argv
from _cli import judge, records
from reljudge.errors import EXIT_BAD_INPUT, EXIT_OK
from reljudge.testing import MockLLMServer

MODEL = "openai/gpt-4o-mini"
ENV = {"OPENAI_API_KEY": "sk-test-batch"}


def argv(srv: MockLLMServer, tmp_path: Path, *more: str, limit: int = 30) -> list[str]:
    return batch_argv(srv, tmp_path, *more, limit=limit)


def damage(path: Path, page: int = 4096) -> None:
    """Overwrite every page of a cache file but its header page (as a failing disk might)."""
    data = bytearray(path.read_bytes())
    assert len(data) > 2 * page
    data[page:] = b"\xa5" * (len(data) - page)
    path.write_bytes(bytes(data))


@pytest.mark.slow
def test_a_damaged_cache_stops_the_pass_and_the_moved_away_cache_is_refilled_from_the_provider(tmp_path):
    with MockLLMServer(models=("gpt-4o-mini",)) as srv:
        args = argv(srv, tmp_path)
        result = judge(*args, env=ENV)
        assert result.returncode == EXIT_OK, result.output
        labels = {r.key: r.label for r in records(tmp_path / "run")}
        assert len(labels) == 30 and sum(srv.batches.submissions.values()) == 30
        # a run killed while its last pass wrote the records: 10 written, the answers of the
        # other 20 only in the cache, which is then damaged
        out = tmp_path / "run" / "judgments.jsonl"
        out.write_bytes(b"".join(out.read_bytes().splitlines(keepends=True)[:10]))
        cache = tmp_path / "cache.sqlite"
        assert not cache.with_name("cache.sqlite-wal").exists()  # checkpointed when the run ended
        damage(cache)

        for _ in range(2):  # stopped, and stopped again: nothing sent, nothing crashed
            result = judge(*args, env=ENV)
            assert result.returncode == EXIT_BAD_INPUT, result.output
            assert f"error: the response cache {cache} cannot be read" in result.output
            assert "judge cache clear" in result.output and "Traceback" not in result.output
            assert sum(srv.batches.submissions.values()) == 30 and len(srv.batches.batches) == 1
        assert len(records(tmp_path / "run")) == 10

        for path in tmp_path.glob("cache.sqlite*"):  # what the message says: move it away
            path.rename(path.with_name(path.name.replace("cache.sqlite", "damaged.sqlite")))
        result = judge(*args, env=ENV)
        assert result.returncode == EXIT_OK, result.output
        assert "20 of 20 answer(s) the response cache no longer holds read again" in result.output
        got = records(tmp_path / "run")
        assert {r.key: r.label for r in got} == labels and all(r.status == "ok" for r in got)
        assert len(got) == 30  # no record twice
        assert sum(srv.batches.submissions.values()) == 30 and srv.batches.resubmitted == 0  # none paid twice
        assert len(srv.batches.batches) == 1 and srv.calls == 0


@pytest.mark.slow
def test_a_cache_damaged_while_a_wave_runs_stops_its_ingestion_and_the_wave_is_ingested_again(tmp_path):
    with MockLLMServer(models=("gpt-4o-mini",)) as srv:
        result = judge(*argv(srv, tmp_path, limit=10), env=ENV)  # the cache holds 10 answers
        assert result.returncode == EXIT_OK, result.output
        srv.batches.completion_delay_s = 3600
        args = argv(srv, tmp_path)
        result = judge(*args, "--batch-max-wait", "0.2", env=ENV)
        assert result.returncode == 75, result.output  # the second wave is running
        damage(tmp_path / "cache.sqlite")
        srv.batches.completion_delay_s = 0

        result = judge(*args, env=ENV)  # the wave ends; its answers cannot be stored
        assert result.returncode == EXIT_BAD_INPUT, result.output
        assert "cannot be written" in result.output and "Traceback" not in result.output
        for path in tmp_path.glob("cache.sqlite*"):
            path.rename(path.with_name(path.name.replace("cache.sqlite", "damaged.sqlite")))
        result = judge(*args, env=ENV)
        assert result.returncode == EXIT_OK, result.output
        got = records(tmp_path / "run")
        assert len(got) == 30 and all(r.status == "ok" for r in got)
        assert sum(srv.batches.submissions.values()) == 30 and srv.batches.resubmitted == 0
        assert len(srv.batches.batches) == 2 and srv.calls == 0
