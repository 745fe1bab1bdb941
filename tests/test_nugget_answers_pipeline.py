"""The answer pipeline end to end against the mock server: ``judge generate`` (two systems) ->
nugget evaluation of their answers (``judge run --method nuggets --answers``), killed with SIGKILL
while the mock holds an assignment request unanswered (an event, not a timing race) -> the same
command finishes without repeating an answered call -> a re-run makes 0 calls -> ``judge report``
shows the answers' records and scores."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from reljudge.io.answer_nugget_scores import read_answer_scores
from reljudge.io.rundir import RunDir
from reljudge.testing import AutoResponder, MockLLMServer, MockReply

MODEL = "openai/mock-model"
ENV = {**os.environ, "OPENAI_API_KEY": "sk-test-answer-pipeline"}


class _HoldAssignment:
    """Answers like the auto responder, but holds the assignment request number ``at`` (0-based,
    counting only nugget-assignment prompts) until released."""

    def __init__(self, at: int) -> None:
        self.at = at
        self.auto = AutoResponder()
        self.release = threading.Event()
        self.held: str | None = None
        self.assignments = 0
        self.lock = threading.Lock()

    def __call__(self, req):
        with self.lock:
            hold = "partial_support" in req.prompt and self.assignments == self.at and self.held is None
            if "partial_support" in req.prompt:
                self.assignments += 1
            if hold:
                self.held = req.content_key
        if hold:
            self.release.wait(timeout=600)  # released when the test is done with it
            return MockReply(status=500, error="the client was killed")
        return self.auto(req)


def _judge(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "reljudge", *args], env=ENV, capture_output=True, text=True, timeout=timeout
    )


def _wait(condition, proc: subprocess.Popen, what: str, timeout: float = 300) -> None:
    """Wait for ``condition`` (event-driven polling with a generous bound, not a timing margin)."""
    deadline = time.monotonic() + timeout
    while not condition():
        if proc.poll() is not None:
            raise AssertionError(f"the process ended before {what}: {proc.communicate()}")
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def _assignments_written(path: Path) -> int:
    return path.read_text().count('"nugget-assignment"') if path.exists() else 0


@pytest.mark.slow
def test_generate_then_nuggets_resume_after_sigkill_and_report(tmp_path):
    gate = _HoldAssignment(at=2)
    with MockLLMServer(gate) as srv:
        common = ["--model", MODEL, "--base-url", srv.openai_url, "--dataset", "dl19-sample", "--no-progress"]
        for name, extra in (("neutral", []), ("liar", ["--prompt", "generate/adversarial"])):
            done = _judge(
                "generate", *common, "--name", name, "--out", str(tmp_path / name),
                "--cache", str(tmp_path / "gen-cache.sqlite"), *extra,
            )  # fmt: skip
            assert done.returncode == 0, done.stderr
        generated = srv.calls
        assert generated == 10  # 5 topics x 2 systems
        out = tmp_path / "nuggets"
        args = [sys.executable, "-m", "reljudge", "run", "--method", "nuggets", *common]
        args += ["--answers", str(tmp_path / "neutral" / "answers.tsv")]
        args += ["--answers", str(tmp_path / "liar" / "answers.tsv")]
        args += ["--out", str(out), "--cache", str(tmp_path / "cache.sqlite"), "--concurrency", "1"]
        srv.reset()
        proc = subprocess.Popen(args, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            _wait(lambda: gate.held is not None, proc, "the held assignment request")
            _wait(lambda: _assignments_written(out / "judgments.jsonl") >= 1, proc, "an assignment record")
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.communicate(timeout=120)
        assert proc.returncode == -signal.SIGKILL
        gate.release.set()
        first = [r.content_key for r in srv.requests]
        answered = [k for k in first if k != gate.held]
        assert gate.held in first and len(answered) == len(first) - 1

        srv.reset()
        done = subprocess.run(args, env=ENV, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        second = [r.content_key for r in srv.requests]
        assert not set(second) & set(answered), "an answered call was made again"
        assert len(second) == len(set(second)) and gate.held in second
        table = read_answer_scores(out)
        assert {r["system"] for r in table["systems"]} == {"neutral", "liar"}
        assert all(r["topics"] == 5 for r in table["systems"]) and not table["incomplete"]
        assert "neutral" in done.stdout and "all-strict" in done.stdout

        srv.reset()
        again = subprocess.run(args, env=ENV, capture_output=True, text=True, timeout=300)
        assert again.returncode == 0, again.stderr
        assert srv.calls == 0 and read_answer_scores(out) == table

    records = [r for r in RunDir(out).judgments(latest=True) if r.method == "nugget-assignment"]
    assert {r.docid for r in records} == {"neutral", "liar"}
    report = _judge("report", str(out))
    assert report.returncode == 0, report.stderr
    html = (out / "report.html").read_text()
    assert "answer-nuggets-systems.csv" in html and "nugget-assignment" in html
    assert "liar" in html and "neutral" in html
