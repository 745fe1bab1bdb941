"""Two processes sharing one cache and output directory: the second one is refused by the run
directory's lock with a clear message (and the first finishes intact); two processes sharing
only the cache both finish, and the cache stays consistent."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest

from _cli import judge
from _reliability import MODEL, Gate, env, final_labels, judge_cmd, make_dataset, run_args, sandbox
from reljudge.errors import InputError
from reljudge.io.judgments import read_judgments
from reljudge.run import RunConfig, run_job_async
from reljudge.testing import AutoResponder, MockLLMServer


def _wait_for(path: Path, lines: int, proc: subprocess.Popen, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and path.read_bytes().count(b"\n") >= lines:
            return
        assert proc.poll() is None, "the first run ended too early"
        time.sleep(0.02)
    raise AssertionError("no progress")


@pytest.mark.slow
def test_a_second_process_on_the_same_run_directory_is_refused(tmp_path):
    data = make_dataset(tmp_path / "data", 6, 50)
    out, cache = tmp_path / "run", tmp_path / "cache.sqlite"
    gate = Gate(AutoResponder(), open_for=40)  # the first run cannot finish before the second is refused
    with MockLLMServer(gate) as srv:
        args = run_args(srv.openai_url, out, data, "--cache", str(cache), "--concurrency", "4")
        first = subprocess.Popen(
            judge_cmd(*args), env=env(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        try:
            _wait_for(out / "judgments.jsonl", 20, first)
            second = judge(*args, cwd=tmp_path, env=sandbox(tmp_path))
            assert first.poll() is None, "the test needs the first run still running"
        finally:
            gate.release()
            stdout, stderr = first.communicate(timeout=300)
        assert second.returncode == 2, second.stderr
        assert f"error: {out}: in use by another judge process (pid {first.pid}" in second.stderr
        assert "another --output" in second.stderr
        assert first.returncode == 0, stderr
        assert srv.calls == data.n_items  # the refused process called nothing
    records = read_judgments(out / "judgments.jsonl")
    assert len(records) == data.n_items == len({r.key for r in records})
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["extra"]["state"] == "finished" and "history" not in manifest
    # once the first is done, the same command is welcome again (and has nothing to do)
    again = judge(*args, cwd=tmp_path, env=sandbox(tmp_path))
    assert again.returncode == 0, again.stderr
    assert "0 new in this run" in again.stdout


@pytest.mark.slow
def test_two_processes_sharing_one_cache_both_finish_and_agree(tmp_path):
    data = make_dataset(tmp_path / "data", 8, 40)
    cache = tmp_path / "cache.sqlite"
    with MockLLMServer(latency_s=0.002) as srv:
        outs = [tmp_path / "a", tmp_path / "b"]
        procs = [
            subprocess.Popen(
                judge_cmd(*run_args(srv.openai_url, o, data, "--cache", str(cache), "--concurrency", "8")),
                env=env(tmp_path),
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for o in outs
        ]
        results = [p.communicate(timeout=120) for p in procs]
        for proc, (_, stderr) in zip(procs, results, strict=True):
            assert proc.returncode == 0, stderr
        assert data.n_items <= srv.calls <= 2 * data.n_items
    a, b = (final_labels(o) for o in outs)
    assert len(a) == data.n_items and a == b
    with sqlite3.connect(cache) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        (entries,) = conn.execute("SELECT COUNT(*) FROM responses").fetchone()
    assert entries == data.n_items  # one entry per distinct prompt, whoever stored it first
    stats = judge("cache", "stats", "--cache", str(cache), "--json", cwd=tmp_path, env=sandbox(tmp_path))
    assert stats.returncode == 0 and json.loads(stats.stdout)["entries"] == data.n_items


@pytest.mark.slow
def test_two_jobs_in_one_process_on_one_directory(tmp_path):
    data = make_dataset(tmp_path / "data", 2, 20)
    out = tmp_path / "run"
    with MockLLMServer(latency_s=0.01) as srv:
        config = RunConfig(
            method="binary",
            model=MODEL,
            base_url=srv.openai_url,
            topics=data.topics,
            qrels=data.qrels,
            corpus=data.corpus,
            output=out,
            use_cache=False,
            concurrency=2,
            progress=False,
        )

        async def both() -> list:
            return await asyncio.gather(run_job_async(config), run_job_async(config), return_exceptions=True)

        results = asyncio.run(both())
    errors = [r for r in results if isinstance(r, InputError)]
    summaries = [r for r in results if not isinstance(r, BaseException)]
    assert len(errors) == 1 and len(summaries) == 1, results
    assert "in use by another judge process" in str(errors[0])
    assert summaries[0].records == data.n_items
    assert len(read_judgments(out / "judgments.jsonl")) == data.n_items


@pytest.mark.parametrize("held", [True, False])
def test_lock_is_released_after_a_failed_or_finished_job(tmp_path, held):
    from reljudge.io.rundir import RunDir

    run = RunDir(tmp_path / "run")
    lock = run.lock()
    if held:
        with pytest.raises(InputError, match="in use by another judge process"):
            RunDir(tmp_path / "run").lock()
    lock.release()
    RunDir(tmp_path / "run").lock().release()
