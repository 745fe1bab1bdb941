"""A recognisable fake API key must appear in no file a run writes: records, manifest, qrels,
the response cache (with its WAL), and the logs (stdout/stderr) -- even when the server puts
the key into its error messages, as OpenAI's 401 answers do."""

from __future__ import annotations

from pathlib import Path

import pytest

from _cli import judge
from _reliability import SECRET, make_dataset, run_args, sandbox
from reljudge.testing import AutoResponder, MockLLMServer, MockReply


def _leaky(auto: AutoResponder):
    def answer(req):
        n = req.index % 7
        if n == 0:  # 400, not 401: a 401 stops the job (fail fast; see test_llm_failfast.py)
            return MockReply(status=400, error=f"Incorrect API key provided: {SECRET}.")
        if n == 1:
            return MockReply(status=500, error=f"upstream failed for key={SECRET}")
        if n == 2:
            return MockReply(status=429, error=f"Rate limit for {SECRET}", headers={"Retry-After": "0"})
        return auto(req)

    return answer


def _files_containing(root: Path, needle: bytes) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and needle in p.read_bytes()]


@pytest.mark.parametrize("key_env", ["OPENAI_API_KEY", "MY_JUDGE_KEY"])
@pytest.mark.slow
def test_the_api_key_reaches_no_file_and_no_log(tmp_path, key_env):
    data = make_dataset(tmp_path / "data", 3, 10)
    out = tmp_path / "run"
    cache = tmp_path / "cache.sqlite"
    with MockLLMServer(_leaky(AutoResponder())) as srv:
        args = run_args(
            srv.openai_url,
            out,
            data,
            "--cache",
            str(cache),
            "--max-attempts",
            "2",
            "--max-failure-rate",
            "1",
            "--api-key-env",
            key_env,
        )
        proc = judge(*args, cwd=tmp_path, env=sandbox(tmp_path, **{key_env: SECRET}))
        assert proc.returncode == 0, proc.stderr
        again = judge(
            *args, "--retry-failed", "--json", cwd=tmp_path, env=sandbox(tmp_path, **{key_env: SECRET})
        )
        assert again.returncode == 0, again.stderr
        assert srv.calls > data.n_items  # errors happened, and were retried
    (tmp_path / "stdout.log").write_text(proc.stdout + again.stdout)
    (tmp_path / "stderr.log").write_text(proc.stderr + again.stderr)
    written = [p for p in tmp_path.rglob("*") if p.is_file() and "data" not in p.parts]
    assert {p.name for p in written} >= {"judgments.jsonl", "manifest.json", "qrels.txt", "cache.sqlite"}
    assert _files_containing(tmp_path, SECRET.encode()) == []
    # ... nor a recognisable part of it
    assert _files_containing(tmp_path, SECRET[10:30].encode()) == []
    # the failures were recorded, with the server's message, masked
    text = (out / "judgments.jsonl").read_text()
    assert "Incorrect API key provided: ***" in text
    assert key_env in (out / "manifest.json").read_text()  # the variable's name is fine


def test_a_key_given_inside_the_base_url_is_masked(tmp_path):
    data = make_dataset(tmp_path / "data", 1, 3)
    out = tmp_path / "run"
    with MockLLMServer() as srv:
        url = srv.openai_url.replace("http://", f"http://user:{SECRET}@")
        proc = judge(
            *run_args(url, out, data, "--cache", str(tmp_path / "c.sqlite")),
            cwd=tmp_path,
            env=sandbox(tmp_path),
        )
    assert proc.returncode == 0, proc.stderr
    (tmp_path / "logs.txt").write_text(proc.stdout + proc.stderr)
    assert _files_containing(tmp_path, SECRET.encode()) == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("http://bob:hunter2secret@127.0.0.1:8000/v1", "http://bob:***@127.0.0.1:8000/v1"),
        ("see https://a:pw@x.org/p and ftp://u@h/", "see https://a:***@x.org/p and ftp://u@h/"),
        ("postgresql+psycopg://me:p%40ss@db:5432/x", "postgresql+psycopg://me:***@db:5432/x"),
        ("http://127.0.0.1:8000/v1", "http://127.0.0.1:8000/v1"),  # a port is no password
        ("http://h:1/a:b@c", "http://h:1/a:b@c"),  # '@' in the path is no userinfo
    ],
)
def test_redact_text_masks_the_password_of_a_url(text, expected):
    from reljudge.io.redact import redact_text

    assert redact_text(text, env_secrets=[]) == expected


def test_a_plain_password_in_the_base_url_reaches_no_file(tmp_path):
    """A password that looks like nothing in particular, not in the environment: only its place
    in the URL (``scheme://user:password@``) says it is a secret."""
    password = "hunter2secret"
    data = make_dataset(tmp_path / "data", 1, 3)
    out = tmp_path / "run"
    with MockLLMServer() as srv:
        url = srv.openai_url.replace("http://", f"http://bob:{password}@")
        proc = judge(
            *run_args(url, out, data, "--cache", str(tmp_path / "c.sqlite")),
            cwd=tmp_path,
            env=sandbox(tmp_path),
        )
    assert proc.returncode == 0, proc.stderr
    (tmp_path / "logs.txt").write_text(proc.stdout + proc.stderr)
    assert _files_containing(tmp_path, password.encode()) == []
    manifest = (out / "manifest.json").read_text()
    assert "http://bob:***@127.0.0.1" in manifest  # the URL itself is kept, with the password masked


@pytest.mark.slow
def test_redaction_is_linear_in_the_length_of_the_text():
    # an unbounded URL scheme made every word boundary of a long dotted text scan to its end:
    # 100 KB of "a." took ~30 s; 1 MB would take about an hour. A subprocess with a generous
    # limit fails a regression instead of hanging the suite.
    import subprocess
    import sys

    code = (
        "from reljudge.io.redact import redact_text; redact_text('a.' * 500_000); redact_text('a:' * 500_000)"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=300)


def test_known_secrets_mask_what_one_client_knows(monkeypatch):
    """The LLM client's secrets, by value (`reljudge.io.redact.KnownSecrets`): an error message
    gets every known secret, credential-looking strings and short ``sk-`` keys masked, then is
    cut; an answer and its logprobs only lose exact matches of secrets of 8+ characters."""
    from base64 import b64encode

    from reljudge.io.redact import KnownSecrets

    monkeypatch.setenv("MY_SERVICE_TOKEN", "envsecretvalue42")
    known = KnownSecrets("EMPTY", "http://bob:pa%2Fss-word@h/v1")
    basic = b64encode(b"bob:pa/ss-word").decode()
    assert {"EMPTY", "pa%2Fss-word", "pa/ss-word", basic, "envsecretvalue42"} <= set(known.all)
    assert "EMPTY" not in known.in_answers  # a placeholder, no secret worth changing an answer for
    message = known.message(f"bad key EMPTY, sk-abc123 pa/ss-word {basic} envsecretvalue42 " + "x" * 50, 60)
    assert "EMPTY" not in message and "sk-abc123" not in message and "envsecretvalue42" not in message
    assert "pa/ss-word" not in message and basic not in message and message.endswith("...")
    assert known.answer("EMPTY sk-abc123 pa/ss-word") == "EMPTY sk-abc123 ***"  # exact matches only
    tokens = [{"token": "pa/ss", "logprob": -0.1, "top_logprobs": []}, {"token": "-word", "logprob": -0.2}]
    assert known.logprobs(tokens) is None  # the secret is spelled across two tokens
    fine = [{"token": "1", "logprob": -0.1, "top_logprobs": [{"token": "2", "logprob": -2.0}]}]
    assert known.logprobs(fine) is fine
