"""`judge run` under hostile conditions (issue 9): damaged run directories and input files, a
provider that cannot serve the job, an unwritable output, signals, secrets in the command line,
resuming against another server, interrupted multi-stage runs, oversized inputs.

End-to-end tests run the CLI against the real mock LLM HTTP server (no patching of the client);
a few unit tests make the operating system fail where it cannot be made to fail for real.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from reljudge.cli import app
from reljudge.errors import EXIT_BAD_INPUT, InputError
from reljudge.io.judgments import read_judgments
from reljudge.testing import AutoResponder, MockLLMServer

SECRET = "sk-test-DO-NOT-LEAK-0123456789abcdef"
MODEL = "openai/mock-model"


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


def run(srv: MockLLMServer, out: Path, *args: str, base_url: str | None = None) -> tuple[int, str]:
    """`judge run` in-process; returns (exit code, stdout + stderr). InputError -> 2, as `main()` does."""
    argv = ["run", "--model", MODEL, "--base-url", base_url or srv.openai_url, "--output", str(out)]
    argv += ["--no-cache", "--no-progress", *args]
    result = CliRunner().invoke(app, argv, env={"OPENAI_API_KEY": SECRET})
    if isinstance(result.exception, InputError):
        return EXIT_BAD_INPUT, f"{result.output}error: {result.exception}"
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.output


def manifest(out: Path) -> dict:
    return json.loads((out / "manifest.json").read_text())


def qrels_lines(out: Path) -> list[list[str]]:
    return [line.split() for line in (out / "qrels.txt").read_text().splitlines() if line.strip()]


SAMPLE = ("--method", "binary", "--dataset", "dl19-sample")


# --- item 14: a complete last record without its newline ---------------------------------------


def test_a_last_record_without_its_newline_is_kept_and_not_paid_again(srv, tmp_path):
    out = tmp_path / "run"
    code, output = run(srv, out, *SAMPLE, "--limit", "3")
    assert code == 0, output
    path = out / "judgments.jsonl"
    whole = path.read_bytes()
    path.write_bytes(whole[:-1])  # the last record is complete, only its newline is missing
    srv.reset()
    code, output = run(srv, out, *SAMPLE, "--limit", "5")
    assert code == 0, output
    assert srv.calls == 2  # the 3 records on disk are not asked again
    records = read_judgments(path)
    assert len(records) == 5 == len({r.key for r in records})
    assert path.read_bytes().startswith(whole)  # the record was kept, with its newline added
    assert manifest(out)["summary"]["judgments"] == 5
    assert len(qrels_lines(out)) == 5
