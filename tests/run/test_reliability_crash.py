"""Crash and resume: ``judge run`` killed with SIGKILL mid-way, then the same command again.

The final judgments must equal those of an uninterrupted run, with no record duplicated or
missing, and the server must see no second call for any item that was finished before the
kill (answers that arrived but were not yet written come from the response cache).
"""

from __future__ import annotations

import json
import signal
import subprocess
import time
from collections import Counter
from pathlib import Path

import pytest

from _cli import judge
from _reliability import (
    env,
    final_labels,
    item_of,
    judge_cmd,
    make_dataset,
    run_args,
    sandbox,
    wait_until_idle,
)
from reljudge.io.judgments import read_judgments
from reljudge.testing import MockLLMServer

pytestmark = pytest.mark.slow

N_TOPICS, DOCS = 30, 50  # 1,500 judgments


def _wait_for_lines(path: Path, n: int, proc: subprocess.Popen, timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"the run ended before it could be killed: {proc.stderr.read()}")
        if path.exists() and path.read_bytes().count(b"\n") >= n:
            return
        time.sleep(0.02)
    raise AssertionError("the run made too little progress to be killed mid-way")


@pytest.mark.slow
def test_sigkill_then_resume_equals_an_uninterrupted_run(tmp_path):
    data = make_dataset(tmp_path / "data", N_TOPICS, DOCS)
    n = data.n_items
    with MockLLMServer() as srv:
        # the reference: one uninterrupted run
        ref = tmp_path / "ref"
        done = judge(
            *run_args(srv.openai_url, ref, data, "--no-cache", "--concurrency", "16"),
            cwd=tmp_path,
            env=sandbox(tmp_path),
        )
        assert done.returncode == 0, done.stderr
        assert srv.calls == n
        expected = final_labels(ref)
        assert len(expected) == n

        # the same job, killed with SIGKILL after about a third of the records
        srv.reset()
        out = tmp_path / "run"
        cache = tmp_path / "cache.sqlite"
        args = run_args(srv.openai_url, out, data, "--cache", str(cache), "--concurrency", "16")
        proc = subprocess.Popen(
            judge_cmd(*args), env=env(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path
        )
        try:
            _wait_for_lines(out / "judgments.jsonl", n // 3, proc)
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.communicate(timeout=30)
        assert proc.returncode == -signal.SIGKILL
        wait_until_idle(srv)  # the requests that were in flight are registered (or dropped)
        first_calls = Counter(item_of(r) for r in srv.requests)
        assert None not in first_calls and max(first_calls.values()) == 1
        saved = read_judgments(out / "judgments.jsonl")  # a torn last line is skipped
        saved_items = {r.docid for r in saved}
        assert n // 3 <= len(saved) < n and len(saved_items) == len(saved)
        assert json.loads((out / "manifest.json").read_text())["extra"]["state"] == "running"

        # a torn last line, as a kill in the middle of a write leaves it (repaired on resume)
        raw = (out / "judgments.jsonl").read_bytes()
        if raw.endswith(b"\n"):
            (out / "judgments.jsonl").write_bytes(raw + b'{"qid": "q0", "docid": "d0-')

        # the same command again
        srv.reset()
        resumed = judge(*args, cwd=tmp_path, env=sandbox(tmp_path))
        assert resumed.returncode == 0, resumed.stderr
        second_calls = Counter(item_of(r) for r in srv.requests)
        assert not set(second_calls) & saved_items, "a finished item was sent to the server again"
        assert not second_calls or max(second_calls.values()) == 1
        manifest = json.loads((out / "manifest.json").read_text())
        session = manifest["extra"]["last_session"]
        # every item not saved before the kill came either from the cache or from one new call
        assert session["new_records"] == n - len(saved)
        assert session["cache_hits"] + srv.calls == n - len(saved)
        # no paid answer was lost: of the requests the server saw before the kill, only those in
        # flight are paid for again. A request keeps its concurrency slot until its answer is
        # committed to the response cache (`LLMClient._call`), so at any moment at most
        # `concurrency` requests are sent but not durable; answers that arrived and were cached
        # but not yet written as records come from the cache on resume. (Before, the slot was
        # given back on arrival and the cache write queued behind it: under load 17-38 answers
        # were paid twice.)
        answered_before = set(first_calls) - saved_items
        assert sum(second_calls[i] for i in answered_before) <= 16  # at most the requests in flight

    records = read_judgments(out / "judgments.jsonl")
    assert len(records) == n, "a record is duplicated or missing"
    assert len({r.key for r in records}) == n
    assert final_labels(out) == expected
    assert manifest["extra"]["state"] == "finished"
    assert manifest["summary"]["judgments"] == n
    assert len((out / "qrels.txt").read_text().splitlines()) == len(
        (ref / "qrels.txt").read_text().splitlines()
    )
