"""Optional: a real local model behind an OpenAI-compatible server (``../shared/tools/local-llm.sh
start`` prints its URL). Skipped unless ``RELJUDGE_LOCAL_LLM_URL`` is set; the model alias is
``RELJUDGE_LOCAL_LLM_MODEL`` (default ``gemma``). ``--scores expected`` and ``--samples 3`` run end
to end, with the answer constrained by a llama.cpp grammar (the base model does not keep to the
format otherwise), and a re-run makes 0 calls."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from _cli import judge
from reljudge.io.judgments import read_judgments

URL = os.environ.get("RELJUDGE_LOCAL_LLM_URL")
MODEL = "openai/" + os.environ.get("RELJUDGE_LOCAL_LLM_MODEL", "gemma")

pytestmark = pytest.mark.skipif(
    not URL, reason="set RELJUDGE_LOCAL_LLM_URL to a local OpenAI-compatible server"
)


def run(tmp_path: Path, out: str, *args: str) -> str:
    argv = [
        "run",
        "--model",
        MODEL,
        "--base-url",
        str(URL),
        "--output",
        str(tmp_path / out),
        "--cache",
        str(tmp_path / "cache.sqlite"),
        "--dataset",
        "dl19-sample",
        "--limit",
        "4",
        "--concurrency",
        "1",
        "--timeout",
        "600",
        "--constrain",
        "grammar",
        "--max-failure-rate",
        "1",
        *args,
    ]
    result = judge(*argv, env={"OPENAI_API_KEY": "local"})
    return result.output


def calls(output: str) -> int:
    found = re.search(r"this run: (\d+) calls", output)
    assert found, output
    return int(found.group(1))


@pytest.mark.parametrize("method", ["binary", "umbrela"])
def test_expected_and_samples_end_to_end(tmp_path, method):
    first = run(tmp_path, "e", "--method", method, "--scores", "expected")
    records = read_judgments(tmp_path / "e")
    ok = [r for r in records if r.status == "ok"]
    assert ok, first
    assert all("expected" in r.extra for r in ok), first
    for r in ok:
        info = r.extra["expected"]
        if "expected" in info:
            assert 0 <= info["outside"] <= 1 and abs(sum(info["p"].values()) - 1) < 1e-9
    assert calls(run(tmp_path, "e2", "--method", method, "--scores", "expected")) == 0
    sampled = run(tmp_path, "s", "--method", method, "--samples", "3", "--temperature", "0.8")
    assert all(len(r.extra["samples"]) == 3 for r in read_judgments(tmp_path / "s") if r.status == "ok"), (
        sampled
    )
    assert calls(run(tmp_path, "s2", "--method", method, "--samples", "3", "--temperature", "0.8")) == 0
