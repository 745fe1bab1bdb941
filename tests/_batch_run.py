"""The ``judge run --batch`` command line the batch-path tests run against the mock server:
UMBRELA on the bundled sample, into ``tmp_path/run`` with its own response cache, polled every
0.02 s."""

from __future__ import annotations

from pathlib import Path

from reljudge.testing import MockLLMServer

MODEL = "openai/gpt-4o-mini"
ENV = {"OPENAI_API_KEY": "sk-test-batch"}


def batch_argv(
    srv: MockLLMServer, tmp_path: Path, *more: str, model: str = MODEL, limit: int = 30
) -> list[str]:
    """``judge run ... --batch`` of the first ``limit`` items with ``model``, then ``more``."""
    return [
        "run", "--model", model, "--base-url", srv.openai_url, "--dataset", "dl19-sample",
        "--method", "umbrela", "--output", str(tmp_path / "run"), "--cache", str(tmp_path / "cache.sqlite"),
        "--no-progress", "--batch-poll", "0.02", "--limit", str(limit), "--batch", *more,
    ]  # fmt: skip
