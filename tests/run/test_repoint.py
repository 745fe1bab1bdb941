"""A run directory whose records are all failures (a first attempt at a wrong ``--base-url``) is
re-pointed at another server by the corrected command: said in one line, recorded in the
manifest, the failures kept as history and their items judged again. A directory with a
label keeps refusing another server, and nothing but the server may change."""

from __future__ import annotations

import json

import pytest

from _cli import judge, records
from reljudge.testing import MockLLMServer

ARGS = ["run", "--method", "umbrela", "--model", "openai/mock", "--dataset", "dl19-sample", "--limit", "3"]
FAST = ["--no-cache", "--max-attempts", "1", "--no-progress"]
KEY = {"OPENAI_API_KEY": "sk-test"}


@pytest.mark.slow
def test_a_directory_of_failures_is_repointed_by_the_corrected_command(tmp_path):
    out = tmp_path / "r"
    with MockLLMServer() as server:
        wrong = server.openai_url.removesuffix("/v1")  # the usual first mistake: no /v1
        first = judge(*ARGS, "--base-url", wrong, "--out", out, *FAST, env=KEY)
        assert first.returncode == 1, first.output
        failed = len(records(out))  # the job stops early when the server cannot serve it
        assert failed >= 1 and {r.status for r in records(out)} == {"api_error"}
        second = judge(*ARGS, "--base-url", server.openai_url, "--out", out, *FAST, env=KEY)
        assert second.returncode == 0, second.output
        told = [line for line in second.stderr.splitlines() if "re-pointed" in line]
        assert len(told) == 1 and wrong in told[0] and server.openai_url in told[0]
        assert "failed records stay in judgments.jsonl" in told[0]
        # append-only: the failures are still there, followed by the three labels
        statuses = [r.status for r in records(out)]
        assert statuses == ["api_error"] * failed + ["ok"] * 3
        manifest = json.loads((out / "manifest.json").read_text())
        assert manifest["extra"]["identity"]["base_url"].startswith(server.openai_url.rstrip("/"))
        (moved,) = manifest["extra"]["repointed"]
        assert (
            moved["base_url"]["was"].startswith(wrong)
            and moved["base_url"]["now"] != moved["base_url"]["was"]
        )
        # now that it holds labels, another server is refused again
        third = judge(*ARGS, "--base-url", wrong, "--out", out, *FAST, env=KEY)
        assert third.returncode == 2 and "only a directory without a successful record" in third.stderr
        assert len(records(out)) == failed + 3
        again = judge(*ARGS, "--base-url", server.openai_url, "--out", out, *FAST, env=KEY)
        assert again.returncode == 0 and "re-pointed" not in again.stderr
        assert "repointed" in json.loads((out / "manifest.json").read_text())["extra"]


@pytest.mark.slow
def test_only_the_server_may_change_in_a_directory_of_failures(tmp_path):
    out = tmp_path / "r"
    with MockLLMServer() as server:
        wrong = server.openai_url.removesuffix("/v1")
        assert judge(*ARGS, "--base-url", wrong, "--out", out, *FAST, env=KEY).returncode == 1
        other = judge(
            *ARGS, "--base-url", server.openai_url, "--temperature", "0.5", "--out", out, *FAST, env=KEY
        )
    assert other.returncode == 2 and "refusing to mix them" in other.stderr
    assert {r.status for r in records(out)} == {"api_error"}
