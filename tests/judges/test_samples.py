"""``judge run --samples N`` against the mock server: the majority label with the tie rule, the
agreement, every sample kept, each sample cached apart (a re-run makes 0 calls)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import _cli
from reljudge.errors import EXIT_BAD_INPUT
from reljudge.io.judgments import read_judgments
from reljudge.testing import MockLLMServer, MockReply

MODEL = "openai/mock-model"


def by_seed(answers: dict[int, str]):
    """Answer by the request's seed (42 = sample 0, 43 = sample 1, ...)."""
    return lambda req: MockReply(text=answers[int(req.body.get("seed", 42)) - 42])


def run(srv: MockLLMServer, out: Path, cache: Path, *args: str) -> tuple[int, str]:
    argv = [
        "run",
        "--model",
        MODEL,
        "--base-url",
        srv.openai_url,
        "--output",
        str(out),
        "--cache",
        str(cache),
        *args,
    ]
    ran = _cli.judge(*argv, env={"OPENAI_API_KEY": "sk-test"})
    return ran.returncode, ran.output


@pytest.mark.parametrize(
    ("answers", "label", "agreement"),
    [
        ({0: "1", 1: "1", 2: "0"}, 1, 2 / 3),
        ({0: "0", 1: "1", 2: "no idea at all"}, 0, 0.5),  # a tie among the readable goes to the lowest
    ],
)
def test_majority_agreement_and_samples_kept(tmp_path, answers, label, agreement):
    with MockLLMServer(by_seed(answers)) as srv:
        args = (
            "--method",
            "binary",
            "--dataset",
            "dl19-sample",
            "--limit",
            "2",
            "--samples",
            "3",
            "--temperature",
            "0.7",
            "--max-failure-rate",
            "1",
        )
        code, output = run(srv, tmp_path / "r", tmp_path / "c.sqlite", *args)
        assert code == 0, output
        unreadable = sum(1 for text in answers.values() if text not in ("0", "1"))
        # N samples are N calls, not retries; an unreadable sample asked again is a re-ask
        assert " 0 retries" in output
        if unreadable:
            assert f"re-asked: {2 * unreadable} answers" in output
        records = read_judgments(tmp_path / "r")
        assert len(records) == 2
        for r in records:
            assert r.label == label
            assert r.extra["agreement"] == pytest.approx(agreement)
            assert [s["seed"] for s in r.extra["samples"]] == [42, 43, 44]
            assert len(r.extra["samples"]) == 3
        calls = len(srv.requests)
        assert sorted({json.dumps(q.body.get("seed")) for q in srv.requests}) == ["42", "43", "44"]
        # a re-run in a new directory answers every readable sample from the cache: 0 calls when
        # all were readable (an unreadable answer is never cached: it is asked again, and re-asked)
        code, output = run(srv, tmp_path / "r2", tmp_path / "c.sqlite", *args)
        assert code == 0, output
        assert len(srv.requests) - calls == 2 * 2 * unreadable
        assert [r.label for r in read_judgments(tmp_path / "r2")] == [r.label for r in records]


def test_samples_need_a_temperature_and_a_pointwise_judge(tmp_path):
    with MockLLMServer(by_seed({0: "1"})) as srv:
        code, output = run(
            srv,
            tmp_path / "r",
            tmp_path / "c.sqlite",
            "--method",
            "binary",
            "--dataset",
            "dl19-sample",
            "--samples",
            "3",
            "--temperature",
            "0",
        )
        assert code == EXIT_BAD_INPUT and "--temperature above 0" in output
        code, output = run(
            srv,
            tmp_path / "r",
            tmp_path / "c.sqlite",
            "--method",
            "exam",
            "--dataset",
            "dl19-sample",
            "--samples",
            "3",
            "--temperature",
            "0.5",
        )
        assert code == EXIT_BAD_INPUT and "pointwise" in output
        assert not srv.requests


def test_dry_run_counts_every_sample(tmp_path):
    """--dry-run with --samples N states N calls per item, as many as the run then makes."""
    with MockLLMServer(by_seed({0: "1", 1: "0", 2: "1"})) as srv:
        args = ["--method", "binary", "--dataset", "dl19-sample", "--limit", "4", "--samples", "3"]
        args += ["--temperature", "0.7"]
        code, output = run(srv, tmp_path / "r", tmp_path / "c.sqlite", *args, "--dry-run")
        assert code == 0, output
        assert "LLM calls: 12" in output and "3 samples per item" in output
        code, output = run(srv, tmp_path / "r", tmp_path / "c.sqlite", *args)
        assert code == 0, output
        assert srv.calls == 12
