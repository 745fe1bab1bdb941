"""``judge run --batch`` with a ``litellm/<provider>/<model>`` model: LiteLLM's batch API
(`reljudge.llm.batch.litellm_service`) against the mock server's /v1/files and /v1/batches (a real
HTTP server on 127.0.0.1; LiteLLM with ``custom_llm_provider="openai"`` and ``api_base`` = the
mock; nothing patched): the records and the cache keys of the synchronous LiteLLM path, a process
killed while polling finishing with no request submitted twice (counted on the server), the
refusal to send again a wave that cannot be found when listing is impossible, the refused
providers, the bounds, and no network connection but to the mock."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from _cli import judge, records
from reljudge.errors import EXIT_OK
from reljudge.llm.types import ProviderError
from reljudge.testing import MockLLMServer

MODEL = "litellm/openai/gpt-4o-mini"
SRC = str(Path(__file__).resolve().parents[3] / "src")
ENV = {"OPENAI_API_KEY": "sk-test-litellm-batch"}
#: a generous bound on waiting for the judge process to reach a hold point (never a margin)
REACH_S = 300
#: runs the CLI with an audit hook that notes every connection (and name lookup) that is not to
#: the loopback address, in the file named by the first argument
OFFLINE_RUNNER = """
import sys
log, sys.argv = sys.argv[1], [sys.argv[0], *sys.argv[2:]]
LOCAL = ("127.0.0.1", "localhost", "::1")
def hook(event, args):
    host = None
    if event == "socket.connect" and isinstance(args[1], tuple):
        host = args[1][0]
    elif event == "socket.getaddrinfo":
        host = args[0].decode() if isinstance(args[0], bytes) else args[0]
    if host is not None and str(host) not in LOCAL:
        with open(log, "a") as out:
            out.write(f"{event} {host}\\n")
sys.addaudithook(hook)
from reljudge.cli import main
main()
"""


@pytest.fixture()
def server():
    with MockLLMServer(models=("gpt-4o-mini",)) as srv:
        yield srv


def argv(srv: MockLLMServer, tmp_path: Path, name: str, *more: str, cache: str | None = None) -> list[str]:
    return [
        "run",
        "--model",
        MODEL,
        "--base-url",
        srv.openai_url,
        "--dataset",
        "dl19-sample",
        "--method",
        "umbrela",
        "--output",
        str(tmp_path / name),
        "--cache",
        str(tmp_path / f"{cache or name}.sqlite"),
        "--no-progress",
        "--batch-poll",
        "0.02",
        *more,
    ]


def latest(out: Path) -> dict[tuple, tuple]:
    return {r.key: (r.status, r.label, r.raw) for r in records(out)}


def wave_lines(out: Path) -> list[dict]:
    return [json.loads(line) for f in sorted((out / "batch").glob("wave-*.jsonl")) for line in f.open()]


@pytest.mark.slow
def test_a_litellm_batch_run_makes_the_records_and_cache_keys_of_the_synchronous_litellm_path(
    server, tmp_path
):
    result = judge(*argv(server, tmp_path, "sync", "--limit", "20"), env=ENV)
    assert result.returncode == EXIT_OK, result.output
    assert server.calls == 20
    sent = {json.dumps(r.body["messages"], sort_keys=True): r.body for r in server.requests}
    result = judge(
        *argv(server, tmp_path, "batch", "--limit", "20", "--batch", "--batch-limit", "requests=8"), env=ENV
    )
    assert result.returncode == EXIT_OK, result.output
    assert server.calls == 20  # the batch run sent no chat request
    assert sum(server.batches.submissions.values()) == 20 and server.batches.resubmitted == 0
    assert len(server.batches.batches) == 3 and server.batches.calls["POST files"] == 3
    assert latest(tmp_path / "batch") == latest(tmp_path / "sync")
    lines = wave_lines(tmp_path / "batch")
    assert len(lines) == 20
    for line in lines:  # each body is what LiteLLM sent for the same chat, model name and params included
        assert line["body"] == sent[json.dumps(line["body"]["messages"], sort_keys=True)]
        assert line["body"]["model"] == "gpt-4o-mini"
    # custom_id = the synchronous path's cache key: a synchronous run on the batch run's cache is all hits
    result = judge(*argv(server, tmp_path, "again", "--limit", "20", cache="batch"), env=ENV)
    assert result.returncode == EXIT_OK, result.output
    assert server.calls == 20 and "20 cache hits" in result.output
    assert latest(tmp_path / "again") == latest(tmp_path / "sync")


def _kill_at(server: MockLLMServer, point: str, args: list[str]) -> None:
    # a real process: what is tested is a SIGKILL at a remote step
    reached = server.batches.hold(point)
    env = {**os.environ, **ENV, "PYTHONPATH": SRC}
    proc = subprocess.Popen(
        [sys.executable, "-m", "reljudge", *args], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    try:
        assert reached.wait(REACH_S), f"the judge never reached {point}"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(REACH_S)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.stdout.close()  # type: ignore[union-attr]
    server.batches.release(point)


@pytest.mark.parametrize("point", ["create", "poll"])
@pytest.mark.slow
def test_killed_while_creating_or_polling_the_same_command_finishes_without_a_second_submission(
    server, tmp_path, point
):
    args = argv(server, tmp_path, "run", "--limit", "12", "--batch")
    _kill_at(server, point, args)
    result = judge(*args, env=ENV)
    assert result.returncode == EXIT_OK, result.output
    got = records(tmp_path / "run")
    assert len(got) == 12 and len({r.key for r in got}) == 12 and all(r.status == "ok" for r in got)
    assert len(server.batches.submissions) == 12 and server.batches.resubmitted == 0
    assert len(server.batches.batches) == 1  # the batch sent before the kill was found again
    assert server.batches.calls["POST files"] == 1 and server.batches.calls["POST batches"] == 1
    assert server.calls == 0


@pytest.mark.parametrize("point", ["upload", "create"])
@pytest.mark.slow
def test_without_a_listing_a_wave_that_may_have_been_sent_is_not_sent_again(
    server, tmp_path, monkeypatch, point
):
    from reljudge.llm.batch.litellm_service import LitellmBatchService

    args = argv(server, tmp_path, "run", "--limit", "12", "--batch")
    _kill_at(server, point, args)  # sent on the server, unknown to the run
    sent = (server.batches.calls["POST files"], server.batches.calls["POST batches"])
    assert sent == ((1, 1) if point == "create" else (1, 0))
    monkeypatch.setattr(LitellmBatchService, "can_list", False)
    result = judge(*args, env=ENV)
    assert result.returncode == 1 and "not sent again" in result.output and "resumes" not in result.output, (
        result.output
    )
    assert ("wave 0" if point == "create" else "wave00000.jsonl") in result.output
    assert (server.batches.calls["POST files"], server.batches.calls["POST batches"]) == sent  # nothing sent
    monkeypatch.setattr(LitellmBatchService, "can_list", True)
    result = judge(*args, env=ENV)  # where listing works, what was sent is found and the run finishes
    assert result.returncode == EXIT_OK, result.output
    assert len(records(tmp_path / "run")) == 12 and server.batches.resubmitted == 0
    assert server.batches.calls["POST files"] == 1 and server.batches.calls["POST batches"] == 1


@pytest.mark.slow
def test_a_litellm_batch_run_connects_to_nothing_but_the_endpoint(server, tmp_path):
    log = tmp_path / "connections.log"
    args = argv(server, tmp_path, "run", "--limit", "6", "--batch")
    env = {k: v for k, v in os.environ.items() if not k.startswith("LITELLM")}
    env.update(ENV, PYTHONPATH=SRC)
    done = subprocess.run(
        [sys.executable, "-c", OFFLINE_RUNNER, str(log), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=REACH_S,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert len(records(tmp_path / "run")) == 6 and server.batches.calls["POST batches"] == 1
    assert not log.exists(), log.read_text()


def test_the_hook_sees_a_connection_elsewhere(tmp_path):
    """The offline test's hook is not blind: a lookup of another host is noted."""
    log = tmp_path / "connections.log"
    probe = OFFLINE_RUNNER.replace(
        "from reljudge.cli import main\nmain()",
        "import socket\ntry:\n    socket.getaddrinfo('example.invalid', 443)\nexcept OSError:\n    pass",
    )
    subprocess.run([sys.executable, "-c", probe, str(log)], check=True, timeout=REACH_S)
    assert "example.invalid" in log.read_text()


@pytest.mark.parametrize(
    ("model", "why"),
    [
        ("litellm/anthropic/claude-3-5-haiku-latest", "no OpenAI-format batch API"),
        ("litellm/azure/my-deployment", "whole into memory"),
        ("litellm/vertex_ai/gemini-1.5-flash", "rewrites Vertex AI request files"),
    ],
)
def test_a_provider_without_a_usable_batch_api_is_refused_before_anything_is_sent(
    server, tmp_path, model, why
):
    args = argv(server, tmp_path, "run", "--limit", "2", "--batch")
    args[args.index(MODEL)] = model
    result = judge(*args, env=ENV)
    assert result.returncode == 2 and why in result.output and "openai, litellm_proxy" in result.output, (
        result.output
    )
    assert server.calls == 0 and not server.batches.calls


def test_a_hostile_batch_api_through_litellm_is_bounded_and_its_echoed_key_never_kept(tmp_path):
    with MockLLMServer(models=("gpt-4o-mini",), batch_hostile=True) as srv:
        result = judge(*argv(srv, tmp_path, "run", "--limit", "12", "--batch"), env=ENV)
        assert result.returncode == 1, result.output  # the request answered twice failed (1/12)
        assert "6 output line(s) rejected" in result.output
        got = records(tmp_path / "run")
        assert len(got) == 12 and sum(r.status == "ok" for r in got) == 11
        assert [r.status for r in got if r.status != "ok"] == ["api_error"]  # answered twice: no label
    secret = ENV["OPENAI_API_KEY"].encode()
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert secret not in path.read_bytes(), path
    # the echo was in the first answer, which the junk answers again: no record keeps either
    assert all(not r.raw for r in got if r.status == "api_error")


def test_a_litellm_download_stops_at_its_bound_and_errors_are_masked(server, tmp_path):
    from reljudge.llm.batch.litellm_service import LitellmBatchService

    path = tmp_path / "f.jsonl"
    path.write_bytes(b"".join(b'{"n": %05d}\n' % i for i in range(10_000)))  # 13 bytes a line
    key = "sk-secret-in-an-error"

    async def read(limit: int) -> list:
        service = LitellmBatchService(
            "openai/gpt-4o-mini", base_url=server.openai_url, api_key=key, max_download_bytes=limit
        )
        file_id = await service.upload(path, "f.jsonl")
        return [line async for line in service.lines(file_id)]

    assert len(asyncio.run(read(10**9))) == 10_000
    cut = asyncio.run(read(1000))
    assert len(cut) == 76 and cut[-1] == b'{"n": 00075}\n'

    async def poll_missing() -> None:
        service = LitellmBatchService(
            "openai/gpt-4o-mini",
            base_url=server.openai_url,
            api_key=key,
            redact=lambda text: text.replace("no-such", "***"),
        )
        await service.retrieve("batch-no-such")

    with pytest.raises(ProviderError) as raised:
        asyncio.run(poll_missing())
    assert (
        raised.value.kind == "bad_request"
        and "***" in str(raised.value)
        and "no-such" not in str(raised.value)
    )
