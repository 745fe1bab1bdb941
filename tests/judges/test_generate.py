"""``judge generate`` end to end against the mock LLM server (a real HTTP server on 127.0.0.1):
dry-run counts, answers.tsv read back by the answers reader, provenance, a re-run with 0 calls,
the adversarial prompt, resume after SIGKILL without a repeated call, and bad input (exit 2)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

import _cli
from reljudge.cli import app
from reljudge.errors import EXIT_BAD_INPUT
from reljudge.io.answers import read_answers_tsv
from reljudge.io.judgments import read_judgments
from reljudge.prompts import get_prompt
from reljudge.prompts.parsing import parse_answer_text
from reljudge.testing import AutoResponder, MockLLMServer, MockReply

SECRET = "sk-test-generate-0123456789"
MODEL = "openai/mock-model"
#: the topics of the bundled dl19-sample dataset
N_TOPICS = 5


@pytest.fixture(scope="module")
def server():
    with MockLLMServer() as srv:
        yield srv


@pytest.fixture()
def srv(server):
    server.responder = AutoResponder()
    server.reset()
    return server


def generate(srv: MockLLMServer, out: Path, *args: str) -> tuple[int, str]:
    argv = ["generate", "--model", MODEL, "--base-url", srv.openai_url, "--dataset", "dl19-sample"]
    argv += ["--output", str(out), "--cache", str(out.parent / "cache.sqlite"), "--no-progress", *args]
    ran = _cli.judge(*argv, env={"OPENAI_API_KEY": SECRET})
    return ran.returncode, ran.output


def test_dry_run_states_the_calls_and_writes_nothing(srv, tmp_path):
    out = tmp_path / "gen"
    code, text = generate(srv, out, "--dry-run", "--json")
    assert code == 0, text
    summary = json.loads(text)
    assert summary["state"] == "dry-run"
    assert summary["estimate"]["calls"] == N_TOPICS  # one call per topic, exactly
    assert summary["estimate"]["prompt_tokens"] > 0
    assert srv.calls == 0 and not out.exists()
    code, text = generate(srv, out, "--dry-run", "--topics-limit", "2", "--prices", _prices(tmp_path))
    assert code == 0 and "LLM calls: 2" in text and "$" in text


def _prices(tmp_path: Path) -> str:
    path = tmp_path / "prices.json"
    path.write_text(json.dumps({"mock-model": {"input": 1.0, "output": 2.0}}))
    return str(path)


def test_generate_writes_answers_with_provenance_and_a_rerun_makes_no_call(srv, tmp_path):
    out = tmp_path / "neutral"
    code, text = generate(srv, out, "--name", "mock-neutral", "--answers", str(tmp_path / "copy.tsv"))
    assert code == 0, text
    assert srv.calls == N_TOPICS
    assert "answers: 5" in text
    answers = read_answers_tsv(out / "answers.tsv")
    assert [a.system for a in answers] == ["mock-neutral"] * N_TOPICS
    assert len({a.qid for a in answers}) == N_TOPICS
    assert all(a.text.startswith("In short,") for a in answers)
    assert (tmp_path / "copy.tsv").read_bytes() == (out / "answers.tsv").read_bytes()
    records = read_judgments(out / "judgments.jsonl")
    assert {r.method for r in records} == {"answer"} and all(r.status == "ok" for r in records)
    prompt = get_prompt("generate/neutral")
    for r in records:
        assert r.label is None and r.extra["answer"] == r.raw
        p = r.provenance
        assert p.prompt_id == "generate/neutral" and p.prompt_sha256 == prompt.sha256
        assert p.model == "mock-model" and p.usage.calls == 1 and p.messages_sha256
        assert p.params["max_tokens"] == 512  # the answer budget bounds every answer
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["config"]["method"] == "generate"
    for path in out.rglob("*"):
        assert SECRET not in path.read_text(errors="replace")

    srv.reset()
    code, text = generate(srv, out, "--name", "mock-neutral")
    assert code == 0, text
    assert srv.calls == 0 and "0 new in this run" in text
    assert read_answers_tsv(out / "answers.tsv") == answers


def test_the_adversarial_prompt_is_labelled_and_answers_differently(srv, tmp_path):
    prompt = get_prompt("generate/adversarial")
    assert "ADVERSARIAL" in prompt.title and "deliberately wrong" in prompt.render(query="q")[0]["content"]
    code, text = generate(srv, tmp_path / "liar", "--prompt", "generate/adversarial", "--name", "liar")
    assert code == 0, text
    answers = read_answers_tsv(tmp_path / "liar" / "answers.tsv")
    assert len(answers) == N_TOPICS and all(a.system == "liar" for a in answers)
    assert all(a.text.startswith("Contrary to what you may read") for a in answers)


def test_an_empty_answer_is_asked_again_then_recorded_unparsed(srv, tmp_path):
    srv.responder = lambda req: MockReply(text="   ")
    code, text = generate(srv, tmp_path / "empty", "--max-failure-rate", "1")
    assert code == 0, text
    assert srv.calls == 2 * N_TOPICS  # each empty answer is re-asked once, bypassing the cache
    records = read_judgments(tmp_path / "empty" / "judgments.jsonl")
    assert all(r.status == "unparsed" and "answer" not in r.extra for r in records)
    assert (tmp_path / "empty" / "answers.tsv").read_text() == ""
    srv.responder = AutoResponder()  # the provider recovers: --retry-failed asks those topics again
    srv.reset()
    code, text = generate(srv, tmp_path / "empty", "--retry-failed")
    assert code == 0, text
    assert srv.calls == N_TOPICS and len(read_answers_tsv(tmp_path / "empty" / "answers.tsv")) == N_TOPICS


def test_a_prompt_that_is_not_an_answer_prompt_is_bad_input(srv, tmp_path):
    code, text = generate(srv, tmp_path / "x", "--prompt", "umbrela/bing-zeroshot")
    assert code == EXIT_BAD_INPUT and "needs answer output" in text
    assert srv.calls == 0


def test_bad_topics_file_is_file_line_error_exit_2(tmp_path):
    topics = tmp_path / "topics.tsv"
    topics.write_text("q1\tfine\nq1\tagain\n")
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 1\n")
    corpus = tmp_path / "corpus.tsv"
    corpus.write_text("d1\tsome text\n")
    env = {**os.environ, "OPENAI_API_KEY": SECRET}
    args = ["generate", "--model", MODEL, "--base-url", "http://127.0.0.1:9/v1", "--topics", str(topics)]
    args += ["--qrels", str(qrels), "--corpus", str(corpus), "--output", str(tmp_path / "out")]
    done = subprocess.run(
        [sys.executable, "-m", "reljudge", *args], env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 2, done.stderr
    assert f"error: {topics}:2: duplicate topic id" in done.stderr
    assert not (tmp_path / "out" / "answers.tsv").exists()


class _Gate:
    """Answers like the auto responder, but holds request number ``at`` (0-based) until
    released: the process is killed while that request is in flight, unanswered."""

    def __init__(self, at: int) -> None:
        self.at = at
        self.auto = AutoResponder()
        self.release = threading.Event()
        self.held: str | None = None

    def __call__(self, req):
        if req.index == self.at and self.held is None:
            self.held = req.content_key
            self.release.wait(timeout=600)  # released when the test is done with it
            return MockReply(status=500, error="the client was killed")
        return self.auto(req)


def _wait(condition, proc: subprocess.Popen, what: str, timeout: float = 300) -> None:
    """Wait for ``condition`` (event-driven polling with a generous bound, not a timing margin)."""
    deadline = time.monotonic() + timeout
    while not condition():
        if proc.poll() is not None:
            raise AssertionError(f"the process ended before {what}: {proc.communicate()}")
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def _lines(path: Path) -> int:
    return path.read_bytes().count(b"\n") if path.exists() else 0


@pytest.mark.slow
def test_resume_after_sigkill_repeats_no_answered_call(tmp_path):
    out = tmp_path / "gen"
    env = {**os.environ, "OPENAI_API_KEY": SECRET}
    gate = _Gate(at=2)
    with MockLLMServer(gate) as srv:
        args = [sys.executable, "-m", "reljudge", "generate", "--model", MODEL, "--base-url", srv.openai_url]
        args += ["--dataset", "dl19-sample", "--output", str(out), "--cache", str(tmp_path / "cache.sqlite")]
        args += ["--concurrency", "1", "--no-progress", "--name", "neutral"]
        proc = subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            _wait(lambda: gate.held is not None, proc, "the held request")
            _wait(lambda: _lines(out / "judgments.jsonl") >= 2, proc, "two records")
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.communicate(timeout=120)
        assert proc.returncode == -signal.SIGKILL
        gate.release.set()
        first = [r.content_key for r in srv.requests]
        answered = [k for k in first if k != gate.held]
        assert len(first) == 3 and len(answered) == 2
        saved = read_judgments(out / "judgments.jsonl")
        assert len(saved) == 2

        srv.reset()
        done = subprocess.run(args, env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        second = [r.content_key for r in srv.requests]
        assert not set(second) & set(answered), "an answered call was made again"
        assert len(second) == len(set(second)) == N_TOPICS - 2  # the held one (never answered) and the rest
        assert gate.held in second
        answers = read_answers_tsv(out / "answers.tsv")
        assert len(answers) == N_TOPICS and len({a.qid for a in answers}) == N_TOPICS

        srv.reset()
        again = subprocess.run(args, env=env, capture_output=True, text=True, timeout=300)
        assert again.returncode == 0, again.stderr
        assert srv.calls == 0


def test_parse_answer_text():
    assert parse_answer_text("  An answer.\n").items == ("An answer.",)
    assert parse_answer_text("<think>hidden</think> Shown.").items == ("Shown.",)
    assert parse_answer_text("").status == "unparsed"
    assert parse_answer_text("<think>only reasoning</think>").status == "unparsed"
    assert parse_answer_text("I'm sorry, I can't answer that.").status == "ok"  # kept as the answer


def test_an_answer_restating_its_question_is_not_an_echo_but_a_repeated_prompt_is():
    from reljudge.judges.reading import read_text

    prompt = get_prompt("generate/neutral")
    query = "who formed the commonwealth of independent states"
    messages = prompt.render(query=query)
    restated = f"The question '{query}' has a short answer: Russia, Ukraine and Belarus formed it in 1991."
    reading = read_text(restated, prompt.output.parse, prompt=messages, template=prompt)
    assert reading.parsed.status == "ok" and not reading.echo
    echoed = f"Answer the question concisely: {query}"
    reading = read_text(echoed, prompt.output.parse, prompt=messages, template=prompt)
    assert reading.echo and reading.parsed.status == "unparsed"


def test_topics_alone_are_enough_and_a_larger_limit_extends_the_run(srv, tmp_path):
    topics = tmp_path / "topics.tsv"
    topics.write_text("q1\twhat is a sigmet\nq2\twho formed the cis\nq3\twhy is the sky blue\n")
    out = tmp_path / "gen"
    base = ["generate", "--model", MODEL, "--base-url", srv.openai_url, "--topics", str(topics)]
    base += ["--output", str(out), "--no-cache", "--no-progress"]
    result = CliRunner().invoke(app, [*base, "--limit", "1"], env={"OPENAI_API_KEY": SECRET})
    assert result.exit_code == 0, result.output
    assert "1 item(s) (every topic)" not in result.output  # a real run, not a dry run
    assert srv.calls == 1 and [a.qid for a in read_answers_tsv(out / "answers.tsv")] == ["q1"]
    result = CliRunner().invoke(app, base, env={"OPENAI_API_KEY": SECRET})
    assert result.exit_code == 0, result.output
    assert srv.calls == 3  # q2 and q3 only: q1 is not asked again
    assert [a.qid for a in read_answers_tsv(out / "answers.tsv")] == ["q1", "q2", "q3"]
    dry = CliRunner().invoke(app, [*base, "--dry-run"], env={"OPENAI_API_KEY": SECRET})
    assert "3 topic(s), 3 item(s) (every topic)" in dry.output


def test_a_huge_answer_is_kept_bounded_and_a_truncated_one_is_no_answer(srv, tmp_path):
    from reljudge.io.answers import MAX_ANSWER_CHARS

    srv.responder = lambda req: MockReply(text="word " * 50_000)  # 250,000 characters
    code, text = generate(srv, tmp_path / "huge", "--topics-limit", "1", "-o", "max_tokens=100000")
    assert code == 0, text
    (record,) = read_judgments(tmp_path / "huge" / "judgments.jsonl")
    assert record.provenance.params["max_tokens"] == 100_000  # the generation option reaches the request
    assert len(record.extra["answer"]) == MAX_ANSWER_CHARS and record.extra["answer_chars"] == 249_999
    (answer,) = read_answers_tsv(tmp_path / "huge" / "answers.tsv")
    assert len(answer.text) <= MAX_ANSWER_CHARS
    # at the default budget (512 tokens) the provider cuts the answer: a failure, not an answer
    code, text = generate(srv, tmp_path / "cut", "--topics-limit", "1", "--max-failure-rate", "1")
    assert code == 0, text
    (record,) = read_judgments(tmp_path / "cut" / "judgments.jsonl")
    assert record.status == "truncated" and "answer" not in record.extra
    assert (tmp_path / "cut" / "answers.tsv").read_text() == ""


def test_the_mock_answers_both_generation_prompts_with_their_own_rule():
    from reljudge.testing.exchange import MockRequest

    auto = AutoResponder()
    for prompt_id, rule, start in (
        ("generate/neutral", "generate-answer", "In short,"),
        ("generate/adversarial", "generate-adversarial", "Contrary to what you may read"),
    ):
        messages = get_prompt(prompt_id).render(query="why is the sky blue")
        req = MockRequest(api="openai", model="m", messages=messages, body={}, index=0, seen=0)
        assert auto.rule_for(req).name == rule
        text = auto(req).text
        assert text.startswith(start) and "sky" in text
        assert auto(req).text == text  # deterministic


@pytest.mark.slow
def test_sigterm_keeps_the_answers_so_far(tmp_path):
    out = tmp_path / "gen"
    env = {**os.environ, "OPENAI_API_KEY": SECRET}
    gate = _Gate(at=2)
    with MockLLMServer(gate) as srv:
        args = [sys.executable, "-m", "reljudge", "generate", "--model", MODEL, "--base-url", srv.openai_url]
        args += ["--dataset", "dl19-sample", "--output", str(out), "--no-cache", "--concurrency", "1"]
        args += ["--no-progress", "--name", "neutral"]
        proc = subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            _wait(lambda: gate.held is not None, proc, "the held request")
            _wait(lambda: _lines(out / "judgments.jsonl") >= 2, proc, "two records")
            proc.send_signal(signal.SIGTERM)
            _, stderr = proc.communicate(timeout=300)
        finally:
            gate.release.set()
            if proc.poll() is None:
                proc.kill()
                proc.communicate(timeout=60)
        assert proc.returncode == 143, stderr
        assert "answers so far: 2" in stderr
        assert [a.system for a in read_answers_tsv(out / "answers.tsv")] == ["neutral", "neutral"]


def test_answers_file_lists_topics_by_id_whatever_order_the_records_came_in(tmp_path):
    from reljudge.io.judgments import JudgmentWriter
    from reljudge.records import Judgment
    from reljudge.run.generated_answers import write_run_answers

    run = tmp_path / "run"
    with JudgmentWriter(run / "judgments.jsonl") as writer:  # the order a batch may answer in
        for qid in ("20", "3", "b", "100", "a"):
            writer.write(Judgment(qid=qid, method="answer", extra={"answer": f"answer {qid}"}))
    write_run_answers(run, "generate", system="s")
    lines = (run / "answers.tsv").read_text().splitlines()
    assert [line.split("\t")[1] for line in lines] == ["3", "20", "100", "a", "b"]
