"""`judge run` under hostile conditions (issue 9): damaged run directories and input files, a
provider that cannot serve the job, an unwritable output, signals, secrets in the command line,
resuming against another server, interrupted multi-stage runs, oversized inputs.

End-to-end tests run the CLI against the real mock LLM HTTP server (no patching of the client);
a few unit tests make the operating system fail where it cannot be made to fail for real.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from _cli import judge
from reljudge.errors import EXIT_BAD_INPUT
from reljudge.io.judgments import read_judgments
from reljudge.testing import AutoResponder, MockLLMServer, MockReply, responders

SECRET = "sk-test-DO-NOT-LEAK-0123456789abcdef"
MODEL = "openai/mock-model"
ENV = {"OPENAI_API_KEY": SECRET}


@pytest.fixture(scope="module")
def server():
    with MockLLMServer() as srv:
        yield srv


@pytest.fixture()
def srv(server):
    server.responder = AutoResponder()
    server.latency_s = 0.0
    server.reset()
    return server


def run_args(srv: MockLLMServer, out: Path, *args: str, base_url: str | None = None) -> list[str]:
    """``judge run`` of the mock model on ``base_url`` (the server's), writing to ``out``, no cache."""
    argv = ["run", "--model", MODEL, "--base-url", base_url or srv.openai_url, "--output", str(out)]
    return [*argv, "--no-cache", "--no-progress", *args]


def manifest(out: Path) -> dict:
    return json.loads((out / "manifest.json").read_text())


def qrels_lines(out: Path) -> list[list[str]]:
    return [line.split() for line in (out / "qrels.txt").read_text().splitlines() if line.strip()]


SAMPLE = ("--method", "binary", "--dataset", "dl19-sample")


# --- item 14: a complete last record without its newline ---------------------------------------


def test_a_last_record_without_its_newline_is_kept_and_not_paid_again(srv, tmp_path):
    out = tmp_path / "run"
    result = judge(*run_args(srv, out, *SAMPLE, "--limit", "3"), env=ENV)
    assert result.returncode == 0, result.output
    path = out / "judgments.jsonl"
    whole = path.read_bytes()
    path.write_bytes(whole[:-1])  # the last record is complete, only its newline is missing
    srv.reset()
    result = judge(*run_args(srv, out, *SAMPLE, "--limit", "5"), env=ENV)
    assert result.returncode == 0, result.output
    assert srv.calls == 2  # the 3 records on disk are not asked again
    records = read_judgments(path)
    assert len(records) == 5 == len({r.key for r in records})
    assert path.read_bytes().startswith(whole)  # the record was kept, with its newline added
    assert manifest(out)["summary"]["judgments"] == 5
    assert len(qrels_lines(out)) == 5


# --- item 15: input files with a BOM, corrupt gzip bodies ---------------------------------------

SAMPLE_DIR = Path(__file__).resolve().parents[2] / "src" / "reljudge" / "data" / "dl19-sample"


def test_a_bom_at_the_start_of_the_topics_and_qrels_drops_nothing(srv, tmp_path):
    bom = b"\xef\xbb\xbf"
    topics, qrels = tmp_path / "topics.tsv", tmp_path / "qrels.txt"
    topics.write_bytes(bom + (SAMPLE_DIR / "topics.tsv").read_bytes())
    qrels.write_bytes(bom + (SAMPLE_DIR / "qrels.txt").read_bytes())
    first_qid = (SAMPLE_DIR / "topics.tsv").read_text().split("\t", 1)[0]
    first_judged = (SAMPLE_DIR / "qrels.txt").read_text().split()[0]  # not the same topic
    out = tmp_path / "run"
    args = ("--method", "binary", "--topics", str(topics), "--qrels", str(qrels))
    result = judge(
        *run_args(srv, out, *args, "--corpus", str(SAMPLE_DIR / "passages.tsv"), "--limit", "2"), env=ENV
    )
    assert result.returncode == 0, result.output
    assert {r.qid for r in read_judgments(out / "judgments.jsonl")} == {first_qid}  # the pool's first
    assert manifest(out)["extra"]["pool"]["topics"] == 1
    from reljudge.datasets import load_dataset

    data = load_dataset(None, topics=topics, qrels=qrels)
    assert first_qid in data.topics and first_judged in data.qrels
    assert len(data.topics) == 5 and sum(len(d) for d in data.qrels.values()) == 684


def test_a_corrupt_gzip_corpus_is_bad_input_not_a_traceback(tmp_path):
    import gzip

    packed = gzip.compress((SAMPLE_DIR / "passages.tsv").read_bytes())
    corpus = tmp_path / "passages.tsv.gz"
    corpus.write_bytes(packed[:200] + bytes(b ^ 0xFF for b in packed[200:260]) + packed[260:])
    out = tmp_path / "run"
    proc = judge(
        "run", "--method", "binary", "--model", MODEL, "--base-url", "http://127.0.0.1:9/v1",
        "--dataset", "dl19-sample", "--corpus", str(corpus), "--output", str(out),
        cwd=tmp_path, env={**ENV, "RELJUDGE_CACHE": str(tmp_path / "cache.sqlite")},
    )  # fmt: skip
    assert proc.returncode == EXIT_BAD_INPUT, proc.stderr
    assert "Traceback" not in proc.stderr
    assert f"error: {corpus}:" in proc.stderr and "corrupt gzip data" in proc.stderr
    assert not out.exists()


# --- item 16: secrets in --param and counters in the manifest -----------------------------------


def test_a_credential_param_is_refused_and_never_written(srv, tmp_path):
    """A credential given as a request field would be sent in every request body (and batch
    file): it is refused, naming the way keys are given (--api-key-env), and echoed nowhere."""
    out = tmp_path / "run"
    param_secret, inline_secret = "plain-param-secret-1", "plain-param-secret-2"
    for option in (("--param", f"api_key={param_secret}"), (f"--param=access_token={inline_secret}",)):
        proc = judge(
            "run", "--model", MODEL, "--base-url", srv.openai_url, "--output", str(out), "--no-cache",
            *SAMPLE, "--limit", "2", *option, "--param", "top_p=1",
            cwd=tmp_path, env={**ENV, "RELJUDGE_CACHE": str(tmp_path / "cache.sqlite")},
        )  # fmt: skip
        assert proc.returncode == 2 and "--api-key-env" in proc.output, proc.output
        assert param_secret not in proc.output and inline_secret not in proc.output
    assert srv.calls == 0 and not (out / "judgments.jsonl").exists()


# --- item 12: --retry-failed asks unparsed answers again ----------------------------------------


def test_retry_failed_asks_unparsed_answers_again_and_a_plain_resume_keeps_them(srv, tmp_path):
    srv.responder = responders.fixed("hmm, hard to say")
    out = tmp_path / "run"
    args = (*SAMPLE, "--limit", "4", "--max-failure-rate", "1")
    result = judge(*run_args(srv, out, *args), env=ENV)
    assert result.returncode == 0, result.output
    assert {r.status for r in read_judgments(out / "judgments.jsonl")} == {"unparsed"}
    srv.responder = AutoResponder()
    srv.reset()
    result = judge(*run_args(srv, out, *args), env=ENV)  # a plain resume keeps them
    assert result.returncode == 0 and srv.calls == 0, result.output
    result = judge(*run_args(srv, out, *args, "--retry-failed"), env=ENV)
    assert result.returncode == 0, result.output
    assert srv.calls == 4
    latest = {r.key: r for r in read_judgments(out / "judgments.jsonl")}
    assert {r.status for r in latest.values()} == {"ok"}
    assert len(qrels_lines(out)) == 4


# --- item 11: a provider that cannot serve the job stops it -------------------------------------


class AbortingClient:
    """A stand-in for `LLMClient` that answers through a real client (against the mock server)
    until ``after`` calls, then raises `ProviderAbort` as the client does on a first 401."""

    def __init__(self, real, after: int):
        import asyncio

        self.real, self.after, self.calls = real, after, 0
        self.config = real.config
        self._turn = asyncio.Lock()  # one call at a time: the first ``after`` calls complete

    async def chat(self, messages, **kwargs):
        async with self._turn:
            self.calls += 1
            if self.calls > self.after:
                from reljudge.llm import ProviderAbort

                raise ProviderAbort(
                    "auth", "Incorrect API key provided: sk-***", status_code=401, hint="check --api-key-env"
                )
            return await self.real.chat(messages, **kwargs)


async def _run_with_abort(config, after: int, run_job_async=None):
    from reljudge.llm import LLMClient
    from reljudge.run import client_config
    from reljudge.run import run_job_async as the_runner

    async with LLMClient(client_config(config)) as real:
        return await (run_job_async or the_runner)(config, AbortingClient(real, after))


@pytest.mark.parametrize("method", ["binary", "exam"])
def test_a_provider_abort_stops_the_job_and_keeps_what_was_done(srv, tmp_path, method):
    import asyncio

    from reljudge.run import RunConfig, run_job

    config = RunConfig(
        method=method, model=MODEL, base_url=srv.openai_url, api_key_env=None, dataset="dl19-sample",
        output=tmp_path / "run", use_cache=False, progress=False, limit=6, concurrency=1,
    )  # fmt: skip
    summary = asyncio.run(_run_with_abort(config, after=3))
    assert summary.state == "aborted" and summary.exit_code == 1
    assert summary.abort == {
        "kind": "auth",
        "message": "Incorrect API key provided: sk-***",
        "status_code": 401,
        "hint": "check --api-key-env",
    }
    out = tmp_path / "run"
    saved = read_judgments(out / "judgments.jsonl")
    assert summary.new_records == len(saved) >= 1 and srv.calls == 3
    m = manifest(out)
    assert m["extra"]["state"] == "aborted" and m["extra"]["abort"]["kind"] == "auth"
    assert m["extra"]["last_session"]["state"] == "aborted"
    assert (out / "qrels.txt").exists()
    text = summary.render()
    assert text.count("re-run the same command") == 1 and "aborted: the provider cannot serve" in text
    # the same job, once the provider serves it again, resumes where it stopped
    srv.reset()
    done = run_job(config)
    assert done.state == "finished" and done.exit_code == 0, done.render()
    assert "abort" not in manifest(out)["extra"]
    records = read_judgments(out / "judgments.jsonl")
    assert len({r.key for r in records}) == len(records)  # nothing was judged twice


def test_judge_run_prints_the_provider_message_once_and_exits_1(srv, tmp_path, monkeypatch):
    import reljudge.run

    real = reljudge.run.run_job_async
    monkeypatch.setattr(reljudge.run, "run_job_async", lambda config, **_: _run_with_abort(config, 2, real))
    out = tmp_path / "run"
    argv = ["run", "--model", MODEL, "--base-url", srv.openai_url, "--output", str(out), "--no-cache",
            *SAMPLE, "--limit", "5", "--concurrency", "1"]  # fmt: skip
    result = judge(*argv, env={"OPENAI_API_KEY": SECRET})
    assert result.returncode == 1, result.output
    assert result.stderr.count("error: Incorrect API key provided: sk-*** (check --api-key-env)") == 1
    assert result.output.count("re-run the same command") == 1
    assert manifest(out)["extra"]["state"] == "aborted"
    assert len(read_judgments(out / "judgments.jsonl")) == 2


def test_the_summary_says_which_failures_retry_failed_fixes(srv, tmp_path):
    auto = AutoResponder()
    unreadable: set[str] = set()  # the prompt answered unreadably, again when it is asked again

    def mixed(req):
        if req.index == 1:
            return MockReply(status=400, error="unsupported parameter: seed")
        if req.index in (3, 5):
            return MockReply(status=500, error="mock outage")
        if req.index == 7 or req.content_key in unreadable:
            unreadable.add(req.content_key)
            return responders.fixed("hmm, hard to say")(req)
        return auto(req)

    srv.responder = mixed
    out = tmp_path / "run"
    args = [*SAMPLE, "--limit", "10", "--max-attempts", "1", "--max-failure-rate", "1", "--concurrency", "1"]
    result = judge(*run_args(srv, out, *args), env=ENV)
    assert result.returncode == 0, result.output
    assert "2 api_error record(s) failed for a transient reason (server 2): --retry-failed" in result.output
    assert "1 api_error record(s) failed for a reason a retry does not fix (bad_request 1)" in result.output
    assert "1 unparsed record(s): --retry-failed asks the model again" in result.output
    assert "transient reason (api_error/truncated)" not in result.output
    assert manifest(out)["extra"]["api_error_kinds"] == {"bad_request": 1, "server": 2}


def test_failure_advice_by_kind():
    from reljudge.run import failure_advice

    lines = failure_advice(
        {"api_error": 6, "truncated": 2, "unparsed": 1},
        {"timeout": 2, "connection": 1, "auth": 1, "context_length": 1, "invalid_response": 1},
    )
    assert lines[0].startswith(
        "3 api_error record(s) failed for a transient reason (connection 1, timeout 2)"
    )
    assert lines[1].startswith("2 api_error record(s) failed for a reason a retry does not fix")
    assert lines[2].startswith("1 api_error record(s) failed otherwise (invalid_response 1)")
    assert "larger --max-tokens" in lines[3] and "unparsed" in lines[4]
    assert failure_advice({"ok": 3}, {}) == []


# --- items 13 and 15: an output that cannot be written -----------------------------------------


def test_an_output_path_under_a_file_is_an_error_not_a_traceback(tmp_path):
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file\n")
    out = blocker / "run"
    proc = judge(
        "run", "--method", "binary", "--model", MODEL, "--base-url", "http://127.0.0.1:9/v1",
        "--dataset", "dl19-sample", "--limit", "2", "--output", str(out),
        cwd=tmp_path, env={**ENV, "RELJUDGE_CACHE": str(tmp_path / "cache.sqlite")},
    )  # fmt: skip
    assert proc.returncode == EXIT_BAD_INPUT, proc.stderr
    assert "Traceback" not in proc.stderr
    assert f"error: {out}: cannot write: Not a directory" in proc.stderr


def _enospc(path=None):
    import errno

    return OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), *([str(path)] if path else []))


def test_a_full_disk_while_judging_keeps_the_records_and_the_same_command_resumes(srv, tmp_path, monkeypatch):
    from reljudge.io.judgments import JudgmentWriter

    original = JudgmentWriter.write
    written = {"n": 0}

    def write(self, judgment):
        if written["n"] >= 3:
            raise _enospc()
        written["n"] += 1
        return original(self, judgment)

    monkeypatch.setattr(JudgmentWriter, "write", write)
    out = tmp_path / "run"
    args = (*SAMPLE, "--limit", "8", "--concurrency", "1")
    result = judge(*run_args(srv, out, *args), env=ENV)
    assert result.returncode == EXIT_BAD_INPUT, result.output
    assert f"error: {out / 'judgments.jsonl'}: cannot write: No space left on device" in result.output
    assert "re-run the same command to resume" in result.output
    saved = read_judgments(out / "judgments.jsonl")
    assert len(saved) == 3
    assert manifest(out)["extra"]["state"] == "failed"
    monkeypatch.setattr(JudgmentWriter, "write", original)  # space was made
    srv.reset()
    result = judge(*run_args(srv, out, *args), env=ENV)
    assert result.returncode == 0, result.output
    assert srv.calls == 5
    records = read_judgments(out / "judgments.jsonl")
    assert len(records) == 8 == len({r.key for r in records})


def test_a_full_disk_when_writing_qrels_is_an_error_and_the_manifest_says_so(srv, tmp_path, monkeypatch):
    import reljudge.io.trec

    def write_qrels(qrels, path, **kwargs):
        raise _enospc()

    monkeypatch.setattr(reljudge.io.trec, "write_qrels", write_qrels)
    out = tmp_path / "run"
    result = judge(*run_args(srv, out, *SAMPLE, "--limit", "3"), env=ENV)
    assert result.returncode == EXIT_BAD_INPUT, result.output
    assert f"error: {out / 'qrels.txt'}: cannot write: No space left on device" in result.output
    assert len(read_judgments(out / "judgments.jsonl")) == 3
    m = manifest(out)
    assert m["extra"]["state"] == "finished"
    assert m["extra"]["qrels"]["error"] == "cannot write: No space left on device"


def test_a_full_disk_when_writing_the_manifest_is_an_error(srv, tmp_path, monkeypatch):
    from reljudge.io.rundir import RunDir

    original = RunDir.write_manifest
    calls = {"n": 0}

    def write_manifest(self, **kwargs):
        calls["n"] += 1
        if calls["n"] > 1:  # the first one ("running") fits, the last one does not
            raise _enospc(self.manifest_path)
        return original(self, **kwargs)

    monkeypatch.setattr(RunDir, "write_manifest", write_manifest)
    out = tmp_path / "run"
    result = judge(*run_args(srv, out, *SAMPLE, "--limit", "3"), env=ENV)
    assert result.returncode == EXIT_BAD_INPUT, result.output
    assert f"error: {out / 'manifest.json'}: cannot write: No space left on device" in result.output
    assert len(read_judgments(out / "judgments.jsonl")) == 3


# --- item 15: SIGTERM and SIGHUP are treated like Ctrl-C; Ctrl-C ends cleanly --------------------


def _stop_mid_run(tmp_path: Path, signals: list[signal.Signals]) -> tuple:
    """Start `judge run` in a subprocess against a slow mock server, wait until records are on
    disk (no fixed sleep), send ``signals`` and wait for the process to end."""
    out = tmp_path / "run"
    with MockLLMServer(latency_s=0.3) as slow:
        args = ["run", "--method", "binary", "--model", MODEL, "--base-url", slow.openai_url,
                "--dataset", "dl19-sample", "--limit", "60", "--concurrency", "2", "--no-cache",
                "--output", str(out)]  # fmt: skip
        env = {**os.environ, "OPENAI_API_KEY": SECRET}
        proc = subprocess.Popen(
            [sys.executable, "-m", "reljudge", *args],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
        )  # fmt: skip
        path = out / "judgments.jsonl"
        deadline = time.monotonic() + 180
        while not (path.exists() and path.read_bytes().count(b"\n") >= 3):
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "no record was written"
            time.sleep(0.05)
        for sig in signals:
            proc.send_signal(sig)
        stdout, stderr = proc.communicate(timeout=180)
        done = subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)
        saved = read_judgments(path)
        stopped = {
            "state": manifest(out)["extra"]["state"] if (out / "manifest.json").exists() else None,
            "qrels": len(qrels_lines(out)) if (out / "qrels.txt").exists() else None,
        }
        # the same command resumes: only the items not saved are asked
        slow.reset()
        slow.latency_s = 0.0
        resumed = subprocess.run(
            [sys.executable, "-m", "reljudge", *args], env=env, capture_output=True, text=True, timeout=180
        )
        assert resumed.returncode == 0, resumed.stderr
        assert slow.calls == 60 - len(saved)
    return done, out, saved, stopped


@pytest.mark.parametrize(
    ("signals", "code"),
    [
        ([signal.SIGINT], 130),
        ([signal.SIGTERM], 143),
        ([signal.SIGHUP], 129),
        ([signal.SIGINT, signal.SIGINT], 130),  # an impatient second Ctrl-C
    ],
    ids=["SIGINT", "SIGTERM", "SIGHUP", "SIGINT-twice"],
)
@pytest.mark.slow
def test_a_signal_stops_the_run_like_ctrl_c_and_the_same_command_resumes(tmp_path, signals, code):
    done, out, saved, stopped = _stop_mid_run(tmp_path, signals)
    assert done.returncode == code, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    assert done.stderr.count("re-run the same command") == 1, done.stderr
    assert f"stopped by {signals[0].name}" in done.stderr
    assert 3 <= len(saved) < 60
    # what the stopped run wrote: the manifest says interrupted, qrels hold the saved labels
    assert stopped == {"state": "interrupted", "qrels": len(saved)}
    records = read_judgments(out / "judgments.jsonl")
    assert len(records) == 60 == len({r.key for r in records})
    history = manifest(out)["history"]
    assert len(history) == 1 and history[0]["finished_at"] is not None


def test_run_stoppable_cancels_the_job_once_and_raises_stopped():
    import asyncio

    from reljudge.interrupts import Stopped, run_stoppable

    cleaned = []

    async def job():
        asyncio.get_running_loop().call_soon(os.kill, os.getpid(), signal.SIGTERM)
        try:
            await asyncio.sleep(3600)
        finally:
            os.kill(os.getpid(), signal.SIGTERM)  # a second signal during the clean-up
            await asyncio.sleep(0.01)  # the clean-up may await: it is not cancelled again
            cleaned.append(True)

    with pytest.raises(Stopped) as stop:
        run_stoppable(job)
    assert (stop.value.name, stop.value.exit_code, cleaned) == ("SIGTERM", 143, [True])
    assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL  # the handlers are removed again

    async def quick():
        return 42

    assert run_stoppable(quick) == 42


# --- item 17: the base URL is part of the job's identity ----------------------------------------


def test_resuming_against_another_server_is_refused(srv, tmp_path):
    out = tmp_path / "run"
    result = judge(*run_args(srv, out, *SAMPLE, "--limit", "2"), env=ENV)
    assert result.returncode == 0, result.output
    assert manifest(out)["extra"]["identity"]["base_url"] == srv.openai_url.rstrip("/")
    with MockLLMServer() as other:
        result = judge(*run_args(other, out, *SAMPLE, "--limit", "4", base_url=other.openai_url), env=ENV)
        assert result.returncode == EXIT_BAD_INPUT, result.output
        assert "holds a run made with other settings (base_url was" in result.output
        assert other.calls == 0
    # the same server, written differently (scheme case, trailing slash), is the same job
    srv.reset()
    same = srv.openai_url.replace("http:", "HTTP:") + "/"
    result = judge(*run_args(srv, out, *SAMPLE, "--limit", "4", base_url=same), env=ENV)
    assert result.returncode == 0, result.output
    assert srv.calls == 2


def test_a_run_directory_written_before_the_base_url_was_recorded_still_resumes(srv, tmp_path):
    out = tmp_path / "run"
    result = judge(*run_args(srv, out, *SAMPLE, "--limit", "2"), env=ENV)
    assert result.returncode == 0, result.output
    old = manifest(out)
    del old["extra"]["identity"]["base_url"]  # as written before this change
    (out / "manifest.json").write_text(json.dumps(old, indent=2))
    srv.reset()
    result = judge(*run_args(srv, out, *SAMPLE, "--limit", "3"), env=ENV)
    assert result.returncode == 0, result.output
    assert srv.calls == 1
    assert manifest(out)["extra"]["identity"]["base_url"] == srv.openai_url.rstrip("/")  # recorded now


def test_the_identity_holds_the_base_url_normalised_and_without_credentials():
    from reljudge.run import RunConfig

    config = RunConfig(method="binary", model=MODEL, base_url="HTTP://user:s3cret@Example.org:8000/v1/")
    assert config.identity()["base_url"] == "http://example.org:8000/v1"
    assert RunConfig(method="binary", model="gpt-4o").identity()["base_url"] == ""


@pytest.mark.parametrize(
    ("method", "options", "after"),
    [
        ("exam", {}, 1 + 4),  # the questions, then 4 of the passage's 8 grades
        ("exam", {"question_bank": "dataset"}, 4),  # a given bank: 4 of its questions graded
        ("nuggets", {}, 11),  # nuggets made and scored, then 1 of the 2 assignment batches
    ],
    ids=["exam", "exam-bank", "nuggets"],
)
def test_an_interrupted_multi_stage_run_leaves_incomplete_documents_out_of_qrels(
    srv, tmp_path, method, options, after
):
    import asyncio

    from reljudge.run import RunConfig, run_job

    config = RunConfig(
        method=method, model=MODEL, base_url=srv.openai_url, dataset="dl19-sample",
        output=tmp_path / "run", use_cache=False, progress=False, limit=1, concurrency=1, **options,
    )  # fmt: skip
    summary = asyncio.run(_run_with_abort(config, after=after))
    assert summary.state == "aborted"
    out = tmp_path / "run"
    labels = [r for r in read_judgments(out / "judgments.jsonl") if r.method in ("exam", "nugget-assignment")]
    assert labels, "the job stopped before any grade: the test would prove nothing"
    assert qrels_lines(out) == []  # the one passage has grades, but not all of them
    assert summary.incomplete == 1 and summary.qrels_pairs == 0
    assert manifest(out)["extra"]["qrels"]["incomplete"] == 1
    assert "1 document(s) left out of qrels.txt" in summary.render()
    done = run_job(config)  # completed: the passage is scored
    assert done.state == "finished" and done.incomplete == 0, done.render()
    assert len(qrels_lines(out)) == 1 and manifest(out)["extra"]["qrels"]["incomplete"] == 0


# --- item 19: read only the passages a job uses; oversized passages -----------------------------


def _big_dataset(root: Path, *, n_docs: int = 2000, long_chars: int = 30_000) -> Path:
    """5 topics with 3 judged passages each, in a corpus of ``n_docs`` passages; the second
    judged passage of topic q1 is ``long_chars`` characters long."""
    root.mkdir(parents=True)
    (root / "topics.tsv").write_text("".join(f"q{t}\tquery number {t}\n" for t in range(1, 6)))
    (root / "qrels.txt").write_text(
        "".join(f"q{t} 0 d{t}-{i} {i % 4}\n" for t in range(1, 6) for i in range(3))
    )
    with (root / "passages.tsv").open("w") as handle:
        for t in range(1, 6):
            for i in range(3):
                text = ("x" * long_chars) if (t, i) == (1, 1) else f"passage {i} of topic {t}"
                handle.write(f"d{t}-{i}\t{text}\n")
        for n in range(n_docs):
            handle.write(f"x{n}\tan unjudged passage number {n} that no job here reads\n")
    return root


def test_a_job_reads_only_the_passages_it_uses(tmp_path):
    from reljudge.run import RunConfig, prepare

    data = _big_dataset(tmp_path / "data")
    config = RunConfig(method="binary", model=MODEL, dataset=str(data), output=tmp_path / "run", limit=4)
    job = prepare(config)
    # the 4 pooled passages and the other judged passages of their topic: not the 2,000 others
    assert sorted(job.inputs.corpus) == ["d1-0", "d1-1", "d1-2", "d2-0", "d2-1", "d2-2"]
    assert job.passages.read == 4


@pytest.mark.slow
def test_long_passages_are_reported_and_can_be_cut(srv, tmp_path, caplog):
    import logging

    data = _big_dataset(tmp_path / "data")
    out = tmp_path / "run"
    args = ("--method", "binary", "--dataset", str(data), "--limit", "3")
    result = judge(*run_args(srv, out, *args, "--dry-run"), env=ENV)
    assert result.returncode == 0, result.output
    assert "passages: 1 of 3 longer than 20,000 characters (the longest, d1-1, has 30,000)" in result.output
    with caplog.at_level(logging.WARNING, logger="reljudge.run.job"):
        result = judge(*run_args(srv, out, *args), env=ENV)
    assert result.returncode == 0, result.output
    assert "1 pooled passage(s) are longer than 20,000 characters" in caplog.text
    assert max(len(r.prompt) for r in srv.requests) > 30_000
    assert manifest(out)["extra"]["pool"]["passages"]["longer"] == 1
    # cutting passages is another job: the run directory refuses it, another one takes it
    result = judge(*run_args(srv, out, *args, "--max-passage-chars", "2000"), env=ENV)
    assert result.returncode == EXIT_BAD_INPUT and "max_passage_chars was None, now 2000" in result.output
    srv.reset()
    cut = tmp_path / "cut"
    result = judge(
        *run_args(srv, cut, *args, "--max-passage-chars", "2000", "--warn-passage-chars", "1000"), env=ENV
    )
    assert result.returncode == 0, result.output
    assert max(len(r.prompt) for r in srv.requests) < 3_000
    passages = manifest(cut)["extra"]["pool"]["passages"]
    assert (passages["truncated"], passages["longer"], passages["longest"]) == (1, 1, ["d1-1", 2000])
    assert manifest(cut)["extra"]["identity"]["max_passage_chars"] == 2000
