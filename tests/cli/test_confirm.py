"""``--yes`` / ``--confirm-above``: on a terminal a costly job asks ``Proceed? [y/N]``; not on a
terminal it proceeds. The terminal is a real pseudo-terminal (`os.openpty`) given to ``judge``
as stdin and stderr; the test answers when the question appears (no sleeps)."""

from __future__ import annotations

import os
import select
import subprocess
import sys
from pathlib import Path

import pytest

from _cli import judge
from reljudge.run.estimate import CONFIRM_PAIRWISE_CALLS, confirmation_reason
from reljudge.testing import MockLLMServer

SRC = str(Path(__file__).resolve().parents[2] / "src")
QUESTION = b"Proceed? [y/N]"


def judge_on_a_terminal(args: list[str], answer: bytes | None) -> tuple[int, bytes]:
    """Run ``judge ARGS`` with a pseudo-terminal as stdin and stderr; when the question appears,
    type ``answer``. Returns (exit code, everything the terminal showed)."""
    # a real process: what is tested is a terminal (the question asked on it, the answer typed)
    master, slave = os.openpty()
    env = {**os.environ, "PYTHONPATH": SRC, "OPENAI_API_KEY": "sk-test", "RELJUDGE_TEST_KEY": "sk-test"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "reljudge", *args], stdin=slave, stderr=slave, stdout=subprocess.PIPE, env=env
    )
    os.close(slave)
    shown, answered = b"", False
    try:
        while True:
            ready, _, _ = select.select([master], [], [], 300)  # a generous bound, not a timing
            if not ready:
                raise AssertionError(f"judge said nothing for 300 s: {shown[-500:]!r}")
            try:
                chunk = os.read(master, 4096)
            except OSError:  # the child closed the terminal (EIO): it has ended
                break
            if not chunk:
                break
            shown += chunk
            if QUESTION in shown and not answered:
                assert answer is not None, f"asked unexpectedly: {shown[-500:]!r}"
                os.write(master, answer)
                answered = True
    finally:
        os.close(master)
        stdout = proc.stdout.read() if proc.stdout else b""
        code = proc.wait(timeout=300)
    return code, shown + stdout


def run_args(server: MockLLMServer, out: Path, *extra: str) -> list[str]:
    return [
        "run",
        "--model",
        "openai/gpt-4o-mini",
        "--base-url",
        server.openai_url,
        "--dataset",
        "dl19-sample",
        "--method",
        "umbrela",
        "--limit",
        "3",
        "--no-cache",
        "--output",
        str(out),
        *extra,
    ]


@pytest.fixture()
def server():
    with MockLLMServer(models=("gpt-4o-mini",)) as srv:
        yield srv


@pytest.mark.slow
def test_on_a_terminal_a_costly_run_asks_and_no_stops_it(server, tmp_path):
    code, shown = judge_on_a_terminal(run_args(server, tmp_path / "r", "--confirm-above", "0"), b"n\n")
    assert QUESTION in shown and b"above --confirm-above $0.00" in shown and b"LLM calls: 3" in shown
    assert code == 1 and b"not confirmed" in shown
    assert server.calls == 0 and not (tmp_path / "r").exists()


@pytest.mark.slow
def test_on_a_terminal_yes_to_the_question_runs_the_job(server, tmp_path):
    code, shown = judge_on_a_terminal(run_args(server, tmp_path / "r", "--confirm-above", "0"), b"y\n")
    assert QUESTION in shown and code == 0, shown[-800:]
    assert server.calls == 3


@pytest.mark.slow
def test_on_a_terminal_yes_flag_and_a_cheap_job_do_not_ask(server, tmp_path):
    code, shown = judge_on_a_terminal(run_args(server, tmp_path / "a", "--confirm-above", "0", "--yes"), None)
    assert code == 0 and QUESTION not in shown and server.calls == 3
    code, shown = judge_on_a_terminal(run_args(server, tmp_path / "b"), None)  # $0.0002 < the default $5
    assert code == 0 and QUESTION not in shown and server.calls == 6


@pytest.mark.slow
def test_a_resumed_run_does_not_ask_again(server, tmp_path):
    code, _ = judge_on_a_terminal(run_args(server, tmp_path / "r", "--confirm-above", "0", "--yes"), None)
    assert code == 0
    code, shown = judge_on_a_terminal(run_args(server, tmp_path / "r", "--confirm-above", "0"), None)
    assert code == 0 and QUESTION not in shown and server.calls == 3


@pytest.mark.slow
def test_not_on_a_terminal_it_proceeds_without_asking(server, tmp_path):
    # a real process: what is tested is its standard input not being a terminal
    env = {**os.environ, "PYTHONPATH": SRC, "OPENAI_API_KEY": "sk-test"}
    done = subprocess.run(
        [sys.executable, "-m", "reljudge", *run_args(server, tmp_path / "r", "--confirm-above", "0")],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        env=env,
        timeout=300,
    )
    assert done.returncode == 0 and QUESTION not in done.stderr and server.calls == 3


def test_what_asks():
    assert confirmation_reason({"cost_usd": 5.01, "price_known": True}) is not None
    assert confirmation_reason({"cost_usd": 5.0, "price_known": True}) is None
    assert confirmation_reason({"cost_usd": 1.0, "price_known": True}, above=0.5) is not None
    assert confirmation_reason({"cost_usd": 0.0, "price_known": False}) is None
    big = {"cost_usd": 0.0, "price_known": True, "all_pairs": True, "calls": CONFIRM_PAIRWISE_CALLS + 1}
    assert "all pairs" in confirmation_reason(big)  # a free local model too
    assert confirmation_reason({**big, "calls": CONFIRM_PAIRWISE_CALLS}) is None
    assert confirmation_reason({**big, "all_pairs": False}) is None


def test_a_large_all_pairs_pool_is_flagged_in_the_estimate(tmp_path):
    import json

    argv = ["run", "--method", "pairwise", "--model", "ollama/llama3.2", "--dataset", "dl19-sample"]
    result = judge(*argv, "--dry-run", "--json", "--out", str(tmp_path / "r"))
    est = json.loads(result.output)["estimate"]
    assert est["all_pairs"] is True and est["calls"] > CONFIRM_PAIRWISE_CALLS
    assert "pairwise with all pairs" in confirmation_reason(est)
    result = judge(*argv, "-o", "pairs=sampler", "--dry-run", "--json", "--out", str(tmp_path / "r"))
    assert json.loads(result.output)["estimate"]["all_pairs"] is False


def write_sweep(tmp: Path, url: str) -> Path:
    cfg = tmp / "sweep.yaml"
    cfg.write_text(
        f"""
name: ask
output: out
cache: cache.sqlite
datasets: [dl19-sample]
models:
  - {{name: mini, model: openai/gpt-4o-mini, base_url: "{url}", api_key_env: RELJUDGE_TEST_KEY, params: {{max_tokens: 20}}}}
methods: [binary]
prompts:
  - id: short
    group: mine
    binary: {{user: "Query: {{query}}\\nPassage: {{document}}\\nAnswer 1 for yes and 0 for no."}}
sampling: {{topics: 1, per_grade: 1}}
analysis: {{plots: false}}
""",
        encoding="utf-8",
    )
    return cfg


@pytest.mark.slow
def test_on_a_terminal_a_costly_sweep_asks(server, tmp_path):
    cfg = write_sweep(tmp_path, server.openai_url)
    code, shown = judge_on_a_terminal(["sweep", str(cfg), "--confirm-above", "0", "--no-plots"], b"\n")
    assert QUESTION in shown and code == 1 and server.calls == 0  # an empty answer is no
    code, shown = judge_on_a_terminal(["sweep", str(cfg), "--confirm-above", "0", "--no-plots", "-y"], None)
    assert QUESTION not in shown and code == 0 and server.calls > 0, shown[-800:]


@pytest.mark.slow
def test_on_a_terminal_a_costly_batch_run_asks_at_the_batch_price_and_no_sends_nothing(server, tmp_path):
    args = run_args(server, tmp_path / "r", "--confirm-above", "0", "--batch", "--batch-poll", "0.05")
    args[args.index("--no-cache")] = "--cache"
    args.insert(args.index("--cache") + 1, str(tmp_path / "cache.sqlite"))
    code, shown = judge_on_a_terminal(args, b"n\n")
    assert QUESTION in shown and b"through the Batch API" in shown, shown[-800:]
    assert code == 1 and b"not confirmed" in shown
    assert sum(server.batches.submissions.values()) == 0 and server.calls == 0
    assert not (tmp_path / "r").exists()
    code, shown = judge_on_a_terminal(args, b"y\n")
    assert code == 0, shown[-800:]
    assert sum(server.batches.submissions.values()) == 3 and server.batches.resubmitted == 0
