"""``judge run --batch`` end to end against the mock server's /v1/files and /v1/batches (a real
HTTP server on 127.0.0.1, the official openai SDK on the client side, nothing patched): the same
records as a synchronous run, partial failures resubmitted by ``--retry-failed`` and only those,
multi-stage methods in rounds, a process killed at each remote step finishing with no duplicated
record and no request submitted twice (counted on the server), and ``--max-cost``."""

from __future__ import annotations

import asyncio
import io
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import openai
import pytest

from _cli import judge, records
from reljudge.errors import EXIT_BUDGET, EXIT_OK
from reljudge.run import RunConfig
from reljudge.run.batch.passes import BatchLimits, run_batch_async
from reljudge.testing import MockLLMServer

MODEL = "openai/gpt-4o-mini"
SRC = str(Path(__file__).resolve().parents[3] / "src")
ENV = {"OPENAI_API_KEY": "sk-test-batch"}
#: a generous bound on waiting for the judge process to reach a hold point (never a margin)
REACH_S = 300


@pytest.fixture()
def server():
    with MockLLMServer(models=("gpt-4o-mini",)) as srv:
        yield srv


def argv(srv: MockLLMServer, tmp_path: Path, name: str, *more: str, method: str = "umbrela") -> list[str]:
    return [
        "run",
        "--model",
        MODEL,
        "--base-url",
        srv.openai_url,
        "--dataset",
        "dl19-sample",
        "--method",
        method,
        "--output",
        str(tmp_path / name),
        "--cache",
        str(tmp_path / f"{name}.sqlite"),
        "--no-progress",
        "--batch-poll",
        "0.02",
        *more,
    ]


def latest(out: Path) -> dict[tuple, tuple]:
    return {r.key: (r.status, r.label) for r in records(out)}


def test_a_batch_run_makes_the_records_of_a_synchronous_run(server, tmp_path):
    result = judge(*argv(server, tmp_path, "sync", "--limit", "60"), env=ENV)
    assert result.returncode == EXIT_OK, result.output
    assert server.calls == 60
    cfg = RunConfig(
        method="umbrela",
        model=MODEL,
        base_url=server.openai_url,
        dataset="dl19-sample",
        limit=60,
        output=tmp_path / "batch",
        cache_path=tmp_path / "batch.sqlite",
        progress=False,
    )
    os.environ.setdefault("OPENAI_API_KEY", ENV["OPENAI_API_KEY"])
    said: list[str] = []
    summary = asyncio.run(run_batch_async(cfg, BatchLimits(max_requests=25, poll_s=0.02), say=said.append))
    assert summary.exit_code == 0 and summary.records == 60
    assert server.calls == 60  # the batch run sent no chat request
    assert sum(server.batches.submissions.values()) == 60 and server.batches.resubmitted == 0
    assert len(server.batches.batches) == 3  # 60 requests in waves of at most 25
    assert latest(tmp_path / "batch") == latest(tmp_path / "sync")
    assert any("batches: 60/60 request(s) done" in line for line in said)
    state = json.loads((tmp_path / "batch" / "batch" / "state.json").read_text())
    assert [w["step"] for w in state["waves"]] == ["ingested"] * 3
    assert [w["lines"] for w in state["waves"]] == [25, 25, 10]


def test_failed_lines_become_api_errors_and_retry_failed_resubmits_only_them(tmp_path):
    with MockLLMServer(models=("gpt-4o-mini",), batch_failure_share=0.3) as srv:
        result = judge(*argv(srv, tmp_path, "run", "--limit", "40", "--batch"), env=ENV)
        assert result.returncode == 1, result.output  # the failure share is above --max-failure-rate
        first = records(tmp_path / "run")
        failed = {r.key for r in first if r.status == "api_error"}
        assert 0 < len(failed) < 40 and len(first) == 40
        assert "--retry-failed" in result.output
        result = judge(
            *argv(srv, tmp_path, "run", "--limit", "40", "--batch"), env=ENV
        )  # a resume keeps them
        assert result.returncode == 1 and len(srv.batches.batches) == 1
        result = judge(*argv(srv, tmp_path, "run", "--limit", "40", "--batch", "--retry-failed"), env=ENV)
        assert result.returncode == EXIT_OK, result.output
        counts = sorted(srv.batches.submissions.values())
        assert counts.count(2) == len(failed) and counts.count(1) == 40 - len(failed)  # only those again
        assert {k for k, (s, _) in latest(tmp_path / "run").items() if s == "ok"} == {r.key for r in first}
        assert srv.calls == 0


@pytest.mark.parametrize(
    ("method", "options"), [("exam", []), ("nuggets", []), ("pairwise", ["-o", "pairs=sampler"])]
)
@pytest.mark.slow
def test_a_multi_stage_method_finishes_in_batch_rounds(server, tmp_path, method, options):
    result = judge(*argv(server, tmp_path, "sync", "--topics-limit", "1", *options, method=method), env=ENV)
    assert result.returncode == EXIT_OK, result.output
    sync_calls = server.calls
    result = judge(
        *argv(server, tmp_path, "batch", "--topics-limit", "1", *options, "--batch", method=method), env=ENV
    )
    assert result.returncode == EXIT_OK, result.output
    assert server.calls == sync_calls  # no chat request from the batch run
    assert len(server.batches.batches) >= 2  # stages (or the sampler's rounds) in successive rounds
    assert sum(server.batches.submissions.values()) == sync_calls and server.batches.resubmitted == 0
    assert latest(tmp_path / "batch") == latest(tmp_path / "sync")
    # the summary counts every pass's requests, each once, as the server counted them
    assert f"this run: {sync_calls} calls" in result.output, result.output


@pytest.mark.parametrize("point", ["upload", "create", "poll", "content"])
@pytest.mark.slow
def test_killed_at_each_remote_step_the_same_command_finishes_without_a_second_submission(
    server, tmp_path, point
):
    args = argv(server, tmp_path, "run", "--limit", "30", "--batch")
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
    result = judge(*args, env=ENV)
    assert result.returncode == EXIT_OK, result.output
    got = records(tmp_path / "run")
    assert len(got) == 30 and len({r.key for r in got}) == 30  # no record twice
    assert all(r.status == "ok" for r in got)
    assert len(server.batches.submissions) == 30 and server.batches.resubmitted == 0
    assert len(server.batches.batches) == 1  # the batch sent before the kill was found again
    assert server.batches.calls["POST files"] == 1
    assert server.calls == 0


@pytest.mark.slow
def test_max_cost_stops_before_the_cap_and_a_higher_cap_resumes(server, tmp_path):
    result = judge(*argv(server, tmp_path, "run", "--limit", "40", "--dry-run", "--json"), env=ENV)
    estimate = json.loads(result.output)["estimate"]["cost_usd"]
    cap = estimate / 4  # the batch price is half: about half the requests fit
    result = judge(
        *argv(server, tmp_path, "run", "--limit", "40", "--batch", "--max-cost", f"{cap:.8f}"), env=ENV
    )
    assert result.returncode == EXIT_BUDGET, result.output
    assert "stopped at the cost cap" in result.output
    first = records(tmp_path / "run")
    spent = sum(r.provenance.usage.cost_usd for r in first)
    assert 0 < len(first) < 40 and spent <= cap
    result = judge(
        *argv(server, tmp_path, "run", "--limit", "40", "--batch", "--max-cost", f"{estimate * 4:.8f}"),
        env=ENV,
    )
    assert result.returncode == EXIT_OK, result.output
    assert len(records(tmp_path / "run")) == 40
    assert len(server.batches.submissions) == 40 and server.batches.resubmitted == 0


def test_batch_mode_needs_the_cache_and_an_openai_backend(server, tmp_path):
    result = judge(*argv(server, tmp_path, "run", "--limit", "2", "--batch", "--no-cache"), env=ENV)
    assert result.returncode == 2 and "needs the response cache" in result.output
    args = argv(server, tmp_path, "run2", "--limit", "2", "--batch")
    args[args.index(MODEL)] = "ollama/llama3.2"
    result = judge(*args, env=ENV)
    assert result.returncode == 2 and "openai" in result.output


def test_the_mock_batch_api_speaks_to_the_official_sdk(tmp_path):
    with MockLLMServer(models=("mock-model",), batch_failure_share=0.5) as srv:
        client = openai.OpenAI(base_url=srv.openai_url, api_key="sk-x")
        lines = b"".join(
            json.dumps(
                {
                    "custom_id": f"{i:064x}",
                    "method": "POST",
                    "url": "/v1/chat/completions",
                    "body": {"model": "mock-model", "messages": [{"role": "user", "content": f"hello {i}"}]},
                }
            ).encode()
            + b"\n"
            for i in range(20)
        )
        uploaded = client.files.create(file=("wave.jsonl", io.BytesIO(lines)), purpose="batch")
        assert uploaded.bytes == len(lines) and [f.filename for f in client.files.list(purpose="batch")] == [
            "wave.jsonl"
        ]
        batch = client.batches.create(
            input_file_id=uploaded.id,
            endpoint="/v1/chat/completions",
            completion_window="24h",
            metadata={"k": "v"},
        )
        done = srv.batches.hold("poll")
        srv.batches.release("poll")
        assert not done.is_set()
        while batch.status not in ("completed", "failed", "expired", "cancelled"):
            batch = client.batches.retrieve(batch.id)
        counts = batch.request_counts
        assert counts.total == 20 and counts.completed + counts.failed == 20 and 0 < counts.failed < 20
        output = client.files.content(batch.output_file_id).text.splitlines()
        errors = client.files.content(batch.error_file_id).text.splitlines()
        assert len(output) == counts.completed and len(errors) == counts.failed
        assert json.loads(output[0])["response"]["body"]["choices"][0]["message"]["content"]
        assert json.loads(errors[0])["response"]["status_code"] == 500
        assert [b.metadata for b in client.batches.list()] == [{"k": "v"}]
        assert srv.batches.resubmitted == 0 and srv.calls == 0


def test_a_hostile_batch_api_is_bounded_and_its_echoed_key_never_kept(tmp_path):
    with MockLLMServer(models=("gpt-4o-mini",), batch_hostile=True) as srv:
        result = judge(*argv(srv, tmp_path, "run", "--limit", "12", "--batch"), env=ENV)
        assert result.returncode == 1, result.output  # the request answered twice failed (1/12)
        assert (
            "6 output line(s) rejected" in result.output
        )  # not JSON, a list, nesting, 9 MiB, a stranger, a repeat
        got = records(tmp_path / "run")
        assert len(got) == 12 and sum(r.status == "ok" for r in got) == 11
        assert [r.status for r in got if r.status != "ok"] == ["api_error"]  # answered twice: no label
        assert srv.batches.resubmitted == 0
    secret = ENV["OPENAI_API_KEY"].encode()
    for path in tmp_path.rglob("*"):  # records, manifest, qrels, batch files, the cache (and its WAL)
        if path.is_file():
            assert secret not in path.read_bytes(), path
    # the echo was in the first answer, which the junk answers again: no record keeps either
    assert all(not r.raw for r in got if r.status == "api_error")


def test_a_download_stops_at_its_bound(server, tmp_path):
    from reljudge.llm.batch.service import BatchService

    path = tmp_path / "f.jsonl"
    path.write_bytes(b"".join(b'{"n": %05d}\n' % i for i in range(10_000)))  # 13 bytes a line

    async def read(limit: int) -> list:
        service = BatchService(base_url=server.openai_url, api_key="sk-x", max_download_bytes=limit)
        try:
            file_id = await service.upload(path, "f.jsonl")
            return [line async for line in service.lines(file_id)]
        finally:
            await service.aclose()

    assert len(asyncio.run(read(10**9))) == 10_000
    cut = asyncio.run(read(1000))
    assert len(cut) == 76 and cut[-1] == b'{"n": 00075}\n'  # whole lines within the first 1000 bytes


def test_a_run_without_batch_on_a_directory_with_batches_in_flight_is_refused(server, tmp_path):
    args = argv(server, tmp_path, "run", "--limit", "5", "--batch", "--batch-max-wait", "0.05")
    server.batches.completion_delay_s = 10**6  # the batch stays in progress
    result = judge(*args, env=ENV)
    assert (
        result.returncode == 75 and "re-attach" in result.output
    )  # --batch-max-wait passed: everything saved
    result = judge(*[a for a in args if a not in ("--batch", "--batch-max-wait", "0.05")], env=ENV)
    assert result.returncode == 2 and "in flight" in result.output and server.calls == 0
    job = [a for a in args if a not in ("--batch", "--batch-max-wait", "0.05", "--batch-poll", "0.02")]
    exported = tmp_path / "requests.jsonl"
    result = judge("batch", "export", *job[1:], "--requests", str(exported), env=ENV)  # nor to another engine
    assert result.returncode == 2 and "in flight" in result.output and not exported.exists()
    server.batches.completion_delay_s = 0.0
    result = judge(*args, env=ENV)
    assert result.returncode == EXIT_OK, result.output
    assert len(records(tmp_path / "run")) == 5 and server.batches.resubmitted == 0


def test_waves_wait_for_room_under_the_enqueued_token_limit(server, tmp_path):
    # a umbrela request line is about 1.8 kB (~450 tokens at 4 bytes a token): 10 fit in 6000
    # tokens, 20 do not, so the 3 waves of 10 go one after the other
    limits = ["--batch-limit", "requests=10", "--batch-limit", "tokens=6000"]
    result = judge(*argv(server, tmp_path, "run", "--limit", "30", "--batch", *limits), env=ENV)
    assert result.returncode == EXIT_OK, result.output
    kinds = [kind for kind, _ in server.batches.events]
    assert kinds == ["create", "content"] * 3  # each wave created once the one before was read
    assert len(records(tmp_path / "run")) == 30 and server.batches.resubmitted == 0
    server.batches.events.clear()
    result = judge(
        *argv(server, tmp_path, "run2", "--limit", "30", "--batch", "--batch-limit", "requests=10"), env=ENV
    )
    assert result.returncode == EXIT_OK, result.output
    assert [kind for kind, _ in server.batches.events] == ["create"] * 3 + ["content"] * 3  # all at once
    result = judge(
        *argv(server, tmp_path, "run3", "--limit", "3", "--batch", "--batch-limit", "pages=3"), env=ENV
    )
    assert result.returncode == 2 and "--batch-limit pages" in result.output


def test_a_batch_the_provider_fails_as_a_whole_gives_api_errors_that_retry_failed_sends_again(
    server, tmp_path
):
    server.batches.fail_next = 1
    result = judge(*argv(server, tmp_path, "run", "--limit", "6", "--batch"), env=ENV)
    assert result.returncode == 1 and "mock validation failure" in result.output
    got = records(tmp_path / "run")
    assert len(got) == 6 and {r.status for r in got} == {"api_error"}
    assert all("mock validation failure" in (r.error or "") for r in got)
    result = judge(*argv(server, tmp_path, "run", "--limit", "6", "--batch", "--retry-failed"), env=ENV)
    assert result.returncode == EXIT_OK, result.output
    assert {s for s, _ in latest(tmp_path / "run").values()} == {"ok"}
    assert sorted(server.batches.submissions.values()) == [1] * 6  # the failed batch answered nothing


def test_judge_generate_takes_batch_too(server, tmp_path):
    base = ["generate", "--model", MODEL, "--base-url", server.openai_url, "--dataset", "dl19-sample"]
    base += ["--topics-limit", "3", "--no-progress", "--batch-poll", "0.02", "--name", "system"]
    result = judge(*base, "--output", str(tmp_path / "sync"), "--cache", str(tmp_path / "s.sqlite"), env=ENV)
    assert result.returncode == EXIT_OK, result.output
    result = judge(
        *base, "--output", str(tmp_path / "batch"), "--cache", str(tmp_path / "b.sqlite"), "--batch", env=ENV
    )
    assert result.returncode == EXIT_OK, result.output
    assert server.calls == 3 and len(server.batches.submissions) == 3  # 3 answers each way
    sync = (tmp_path / "sync" / "answers.tsv").read_text()
    assert (tmp_path / "batch" / "answers.tsv").read_text() == sync and sync.count("\n") == 3


@pytest.mark.slow
def test_a_killed_retry_failed_run_started_again_does_not_send_its_new_failures_again(tmp_path):
    with MockLLMServer(models=("gpt-4o-mini",), batch_failure_share=0.5) as srv:
        base = argv(srv, tmp_path, "run", "--limit", "24", "--batch")
        result = judge(*base, env=ENV)
        failed = [r for r in records(tmp_path / "run") if r.status == "api_error"]
        assert result.returncode == 1 and len(failed) >= 4, result.output
        # the retry in two waves, one after the other (the token limit): the first fails as a
        # whole (its lines go to the new failure log), the run is killed reading the second
        per_wave = len(failed) // 2 + len(failed) % 2
        retry = [*base, "--retry-failed", "--batch-limit", f"requests={per_wave}"]
        retry += ["--batch-limit", f"tokens={per_wave * 700}"]  # ~450 tokens a request: one wave at a time
        srv.batches.fail_next = 1
        reached = srv.batches.hold("content")
        env = {**os.environ, **ENV, "PYTHONPATH": SRC}
        proc = subprocess.Popen(
            [sys.executable, "-m", "reljudge", *retry],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        try:
            assert reached.wait(REACH_S), "the retry never read its second wave"
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(REACH_S)
        finally:
            if proc.poll() is None:
                proc.kill()
            proc.stdout.close()  # type: ignore[union-attr]
        srv.batches.release("content")
        assert len(srv.batches.batches) == 3
        result = judge(*retry, env=ENV)  # the same command goes on with the retry's failure log
        assert result.returncode == 1, (
            result.output
        )  # the first wave's requests failed again: kept as api_error
        assert len(srv.batches.batches) == 3  # nothing sent again
        assert srv.batches.resubmitted == len(failed) - per_wave  # the second wave's, once each
        got = latest(tmp_path / "run")
        assert sum(1 for s, _ in got.values() if s == "api_error") == per_wave
        result = judge(*retry, env=ENV)  # a new --retry-failed run: a new log, so they go again
        assert result.returncode == EXIT_OK, result.output
        assert len(srv.batches.batches) == 4


def test_a_request_answered_twice_gets_no_label_and_retry_failed_asks_it_again(server, tmp_path):
    assert judge(*argv(server, tmp_path, "sync", "--limit", "24"), env=ENV).returncode == EXIT_OK
    truth = latest(tmp_path / "sync")
    with MockLLMServer(models=("gpt-4o-mini",), batch_duplicate_share=0.4) as srv:
        result = judge(*argv(srv, tmp_path, "run", "--limit", "24", "--batch"), env=ENV)
        assert result.returncode == 1, result.output  # the failures are above --max-failure-rate
        got = latest(tmp_path / "run")
        twice = {k for k, (status, _) in got.items() if status == "api_error"}
        assert 0 < len(twice) < 24 and "answered more than once" in result.output
        assert all(got[k] == truth[k] for k in got if k not in twice)  # no second answer became a label
        result = judge(*argv(srv, tmp_path, "run", "--limit", "24", "--batch", "--retry-failed"), env=ENV)
        assert result.returncode == EXIT_OK, result.output
        assert latest(tmp_path / "run") == truth
        counts = sorted(srv.batches.submissions.values())
        assert counts.count(2) == len(twice) and counts.count(1) == 24 - len(twice)  # only those again
        assert srv.calls == 0


def test_answers_of_another_model_are_refused_unless_accepted_by_name(tmp_path):
    with MockLLMServer(models=("gpt-4o-mini",), served_model="gpt-3.5-turbo-0125") as srv:
        result = judge(*argv(srv, tmp_path, "run", "--limit", "6", "--batch"), env=ENV)
        assert result.returncode == 1, result.output
        got = records(tmp_path / "run")
        assert len(got) == 6 and all(r.status == "api_error" and r.label is None for r in got)
        assert "gpt-3.5-turbo-0125" in (got[0].error or "")
        state = json.loads((tmp_path / "run" / "batch" / "state.json").read_text())
        assert state["waves"][0]["served"] == {"gpt-3.5-turbo-0125": 6}  # the served model is recorded
        # the synchronous path refuses them the same way, and nothing of theirs was cached
        result = judge(*argv(srv, tmp_path, "sync", "--limit", "6"), env=ENV)
        assert result.returncode == 1 and {r.status for r in records(tmp_path / "sync")} == {"api_error"}
        accept = ("--accept-served-model", "gpt-3.5-turbo-0125")
        result = judge(
            *argv(srv, tmp_path, "run", "--limit", "6", "--batch", "--retry-failed", *accept), env=ENV
        )
        assert result.returncode == EXIT_OK, result.output
        assert all(r.status == "ok" for r in records(tmp_path / "run")[-6:])
        assert srv.batches.resubmitted == 6 and srv.calls == 6  # the refused answers were asked once more
    with MockLLMServer(models=("gpt-4o-mini",), served_model="gpt-4o-mini-2024-07-18") as srv:
        result = judge(*argv(srv, tmp_path, "dated", "--limit", "6", "--batch"), env=ENV)
        assert result.returncode == EXIT_OK, result.output  # a dated snapshot is the same model
        result = judge(*argv(srv, tmp_path, "dated-sync", "--limit", "6"), env=ENV)
        assert result.returncode == EXIT_OK, result.output


def test_a_torn_last_line_of_the_failure_log_swallows_no_entry(tmp_path):
    with MockLLMServer(models=("gpt-4o-mini",), batch_failure_share=0.3) as srv:
        log = tmp_path / "run" / "batch" / "failures.jsonl"
        log.parent.mkdir(parents=True)
        log.write_bytes(b'{"kind": "other", "error": "a process killed mid-wri')  # torn by a kill
        result = judge(*argv(srv, tmp_path, "run", "--limit", "30", "--batch"), env=ENV)
        assert result.returncode == 1, result.output
        failed = sum(r.status == "api_error" for r in records(tmp_path / "run"))
        assert failed > 0
        for name in ("judgments.jsonl", "manifest.json", "qrels.txt"):  # as if killed before the records
            (tmp_path / "run" / name).unlink()
        result = judge(*argv(srv, tmp_path, "run", "--limit", "30", "--batch"), env=ENV)  # a resume
        assert result.returncode == 1, result.output
        assert srv.batches.resubmitted == 0  # every failure was read back: none sent again
        assert sum(srv.batches.submissions.values()) == 30


def test_a_full_disk_is_a_clean_error_and_the_same_command_resumes(server, tmp_path):
    full = Path("/dev/full")
    if not full.exists():
        pytest.skip("no /dev/full")
    pending = tmp_path / "run" / "batch" / "pending.jsonl"
    pending.parent.mkdir(parents=True)
    pending.symlink_to(full)  # writing the pass's requests: ENOSPC
    result = judge(*argv(server, tmp_path, "run", "--limit", "12", "--batch"), env=ENV)
    assert result.returncode == 2, result.output
    assert "error:" in result.output and "Traceback" not in result.output
    assert not server.batches.submissions
    pending.unlink()
    result = judge(*argv(server, tmp_path, "run", "--limit", "12", "--batch"), env=ENV)
    assert len(records(tmp_path / "run")) == 12, result.output
    assert sum(server.batches.submissions.values()) == 12 and server.batches.resubmitted == 0


def test_a_batch_runs_summary_counts_every_pass_once(tmp_path):
    with MockLLMServer(models=("gpt-4o-mini",), batch_failure_share=0.3) as srv:
        more = ("--limit", "30", "--batch", "--retry-failed", "--batch-limit", "requests=7")
        result = judge(*argv(srv, tmp_path, "run", *more[:-2]), env=ENV)
        first = sum(srv.batches.submissions.values())
        assert f"this run: {first} calls" in result.output, result.output
        result = judge(*argv(srv, tmp_path, "run", *more), env=ENV)
        assert result.returncode == EXIT_OK, result.output
        again = sum(srv.batches.submissions.values()) - first
        assert again > 0 and f"this run: {again} calls" in result.output, result.output


@pytest.mark.slow
@pytest.mark.parametrize("shape", ["no-usage", "1e12"])
def test_max_cost_holds_for_batch_answers_without_usage_or_with_absurd_usage(tmp_path, shape):
    from reljudge.llm.pricing import PriceTable, batch_price, price_cost
    from reljudge.llm.routing import resolve_model
    from reljudge.llm.usage_bound import answer_budget, bytes_bound
    from reljudge.testing import responders

    responder = responders.no_usage() if shape == "no-usage" else responders.absurd_usage("1e12")
    price = batch_price(PriceTable().quote(resolve_model(MODEL)).price)
    with MockLLMServer(responder, models=("gpt-4o-mini",)) as srv:
        more = ["--limit", "40", "--max-tokens", "64"]
        result = judge(*argv(srv, tmp_path, "run", *more, "--dry-run", "--json"), env=ENV)
        cap = json.loads(result.output)["estimate"]["cost_usd"] / 6  # the batch price is half
        result = judge(*argv(srv, tmp_path, "run", *more, "--batch", "--max-cost", f"{cap:.8f}"), env=ENV)
        assert result.returncode == EXIT_BUDGET, result.output
        assert result.output.count("warning:") == 1, result.output
        billed = price_cost(price, "openai", *srv.billed)[0]
        bodies = [
            json.loads(line)["body"]
            for item in list(srv.batches.files.values())
            if item["purpose"] == "batch"
            for line in item["path"].read_bytes().splitlines()
        ]
        worst = max(
            price_cost(price, "openai", bytes_bound(b["messages"]), answer_budget(b))[0] for b in bodies
        )
        submitted = sum(srv.batches.submissions.values())
        assert 0 < submitted < 40 and srv.batches.resubmitted == 0
        assert 0 < billed <= cap + worst, (billed, cap)
        # the same cap: nothing more is submitted (an answer without usage is not free)
        result = judge(*argv(srv, tmp_path, "run", *more, "--batch", "--max-cost", f"{cap:.8f}"), env=ENV)
        assert result.returncode == EXIT_BUDGET and sum(srv.batches.submissions.values()) == submitted
