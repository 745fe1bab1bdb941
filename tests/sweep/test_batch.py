"""``judge sweep --batch`` (`reljudge.sweep.batch`) end to end against the mock server's /v1/files
and /v1/batches (a real HTTP server on 127.0.0.1, the official openai SDK, nothing patched): the
same labels and summary tables as a synchronous sweep, a SIGKILL at each remote step (upload,
create, poll, download) followed by the same command with no request submitted twice (counted on the server), and one ``--max-cost`` over
the sweep that stops with exit code 3 and resumes with a higher cap."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from _cli import cell_records, judge
from reljudge.errors import EXIT_BUDGET, EXIT_OK
from reljudge.io.judgments import read_judgments
from reljudge.testing import MockLLMServer

SRC = str(Path(__file__).resolve().parents[2] / "src")
ENV = {"RELJUDGE_TEST_KEY": "sk-test-sweep-batch"}
#: a generous bound on waiting for the judge process to reach a hold point (never a margin)
REACH_S = 300
MODELS = ("gpt-4o-mini", "gpt-4.1-nano")

pytestmark = pytest.mark.slow


def write_sweep(tmp: Path, url: str, name: str, *, batch_key: bool = False) -> Path:
    cfg = tmp / f"{name}.yaml"
    limits = "{concurrency: 4, cells: 2" + (", batch: true}" if batch_key else "}")
    cfg.write_text(
        f"""
name: {name}
output: {name}
cache: {name}.sqlite
datasets: [dl19-sample]
models:
  - {{name: mini, model: openai/gpt-4o-mini, base_url: "{url}", api_key_env: RELJUDGE_TEST_KEY, params: {{max_tokens: 20}}}}
  - {{name: nano, model: openai/gpt-4.1-nano, base_url: "{url}", api_key_env: RELJUDGE_TEST_KEY, params: {{max_tokens: 20}}}}
methods: [binary, graded]
prompts:
  - id: short
    group: mine
    binary: {{user: "Query: {{query}}\\nPassage: {{document}}\\nAnswer 1 for yes and 0 for no."}}
    graded: {{user: "Query: {{query}}\\nPassage: {{document}}\\nGrade the passage from 0 to 3."}}
sampling: {{topics: 3, per_grade: 2}}
limits: {limits}
analysis: {{plots: false}}
""",
        encoding="utf-8",
    )
    return cfg


def labels(out: Path) -> dict[tuple, tuple]:
    """Each cell's latest (status, label) per item, by the cell's directory."""
    got: dict[tuple, tuple] = {}
    for path in sorted(out.glob("cells/**/judgments.jsonl")):
        cell = str(path.parent.relative_to(out))
        for r in read_judgments(path):
            got[(cell, r.key)] = (r.status, r.label)
    return got


def tables(text: str) -> dict:
    """The analysis tables of ``--json`` without what a batch pays less for (cost)."""
    data, _ = json.JSONDecoder().raw_decode(text[text.index("{\n") :])

    def strip(value):  # type: ignore[no-untyped-def]
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if "cost" not in k and k != "source"}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    return {k: strip(data[k]) for k in ("summary", "pooled", "cells", "rankings")}


def test_a_batch_sweep_gives_the_labels_and_tables_of_a_synchronous_sweep(tmp_path):
    with MockLLMServer(models=MODELS) as server:
        sync = judge("sweep", write_sweep(tmp_path, server.openai_url, "sync"), "--json", env=ENV)
        assert sync.returncode == EXIT_OK, sync.output
        sync_calls = server.calls
        assert sync_calls > 20
        # the YAML key (limits.batch) instead of --batch
        cfg = write_sweep(tmp_path, server.openai_url, "batch", batch_key=True)
        batch = judge("sweep", cfg, "--json", "--batch-poll", "0.02", env=ENV)
        assert batch.returncode == EXIT_OK, batch.output
        assert server.calls == sync_calls  # the batch sweep sent no chat request
        assert sum(server.batches.submissions.values()) == sync_calls and server.batches.resubmitted == 0
        assert len(server.batches.batches) == 4  # one batch per cell (2 models x 2 tasks)
        assert labels(tmp_path / "batch") == labels(tmp_path / "sync")
        assert tables(batch.output) == tables(sync.output)
        sync_cost = sum(r.provenance.usage.cost_usd for r in cell_records(tmp_path / "sync"))
        batch_cost = sum(r.provenance.usage.cost_usd for r in cell_records(tmp_path / "batch"))
        assert batch_cost == pytest.approx(sync_cost / 2, rel=1e-6)  # the batch price: half
        assert (tmp_path / "batch" / "analysis").is_dir()
        # done: the same command again submits nothing and writes the analysis again
        again = judge("sweep", cfg, "--json", "--batch-poll", "0.02", env=ENV)
        assert again.returncode == EXIT_OK and sum(server.batches.submissions.values()) == sync_calls, (
            again.output
        )
        assert len(server.batches.batches) == 4


@pytest.mark.parametrize("point", ["upload", "create", "poll", "content"])
def test_a_batch_sweep_killed_at_each_remote_step_finishes_with_no_request_submitted_twice(tmp_path, point):
    with MockLLMServer(models=MODELS) as server:
        cfg = write_sweep(tmp_path, server.openai_url, "run")
        args = ["sweep", str(cfg), "--batch", "--batch-poll", "0.02"]
        reached = server.batches.hold(point)
        env = {**os.environ, **ENV, "PYTHONPATH": SRC}
        proc = subprocess.Popen(
            [sys.executable, "-m", "reljudge", *args],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        try:
            assert reached.wait(REACH_S), f"the judge never reached {point}"
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(REACH_S)
        finally:
            if proc.poll() is None:
                proc.kill()
            proc.stdout.close()  # type: ignore[union-attr]
        server.batches.release(point)
        assert len(server.batches.batches) <= 2 and not cell_records(tmp_path / "run")  # cells: 2 at once
        result = judge("sweep", cfg, "--batch", "--batch-poll", "0.02", env=ENV)
        assert result.returncode == EXIT_OK, result.output
        got = cell_records(tmp_path / "run")
        assert len(got) == len(labels(tmp_path / "run")) > 20  # no record twice in a cell
        assert all(r.status == "ok" for r in got)
        assert len(server.batches.submissions) == len(got) and server.batches.resubmitted == 0
        assert len(server.batches.batches) == 4  # the batches sent before the kill were found again
        assert server.calls == 0
        assert (tmp_path / "run" / "analysis").is_dir()


def test_max_cost_over_a_batch_sweep_stops_at_the_cap_and_a_higher_cap_resumes(tmp_path):
    with MockLLMServer(models=MODELS) as server:
        cfg = write_sweep(tmp_path, server.openai_url, "cap")
        result = judge("sweep", cfg, "--batch", "--dry-run", "--max-cost", "1", env=ENV)
        assert result.returncode == EXIT_OK and "at the batch price" in result.output, result.output
        result = judge("sweep", cfg, "--dry-run", "--json", env=ENV)
        estimate = json.loads(result.output)
        batch = estimate["cost_usd_batch"]
        assert 0 < batch < estimate["cost_usd"]
        cap = batch / 4  # the first waves of two cells running at once do not fit together (a static
        # share per cell would let both reserve the whole cap: spent above it, checked below)

        result = judge("sweep", cfg, "--batch", "--batch-poll", "0.02", "--max-cost", f"{cap:.8f}", env=ENV)
        assert result.returncode == EXIT_BUDGET, result.output
        assert "stopped at the cost cap" in result.output and "higher --max-cost" in result.output
        first = cell_records(tmp_path / "cap")
        spent = sum(r.provenance.usage.cost_usd for r in first)
        dearest = max(r.provenance.usage.cost_usd for r in first)
        assert 0 < len(first) < estimate["calls"] and spent <= cap
        # cells stopped while others held reservations went again: the sweep stopped near the cap
        # (a request's bound, its prompt and 20 answer tokens, is under twice an answer's cost;
        # 3x leaves room for a longer passage; without the rounds the gap was 4.5x here)
        assert cap - spent <= 3 * dearest
        assert sum(server.batches.submissions.values()) == len(first)
        assert not (tmp_path / "cap" / "analysis").exists()  # no analysis of a part
        submitted = dict(server.batches.submissions)

        result = judge("sweep", cfg, "--batch", "--batch-poll", "0.02", "--max-cost", f"{cap:.8f}", env=ENV)
        assert result.returncode == EXIT_BUDGET, result.output  # the same cap: nothing more is submitted
        assert server.batches.submissions == submitted

        result = judge(
            "sweep", cfg, "--batch", "--batch-poll", "0.02", "--max-cost", f"{batch * 4:.8f}", env=ENV
        )
        assert result.returncode == EXIT_OK, result.output
        assert len(cell_records(tmp_path / "cap")) == estimate["calls"]
        assert len(server.batches.submissions) == estimate["calls"] and server.batches.resubmitted == 0
        assert server.calls == 0
        assert (tmp_path / "cap" / "analysis").is_dir()


def test_a_batch_sweep_needs_openai_models(tmp_path):
    cfg = tmp_path / "s.yaml"
    cfg.write_text(
        "datasets: [dl19-sample]\nmodels: [{model: ollama/llama3.2}]\nmethods: [binary]\n"
        "prompts: [{id: p, binary: {user: 'Q {query} P {document} 1 or 0'}}]\nsampling: {topics: 1, per_grade: 1}\n",
        encoding="utf-8",
    )
    result = judge("sweep", cfg, "--batch", "--dry-run", env=ENV)
    assert result.returncode == 2 and "OpenAI batch requests" in result.output


def test_a_batch_sweep_takes_the_litellm_models_judge_run_batch_takes(tmp_path):
    """A litellm/<provider>/<name> model goes through LiteLLM's batch API, as with ``judge run
    --batch``; a provider LiteLLM sends no OpenAI-format batches for is refused with the reason."""
    with MockLLMServer(models=MODELS) as server:
        cfg = write_sweep(tmp_path, server.openai_url, "lite")
        text = cfg.read_text(encoding="utf-8").replace("model: openai/", "model: litellm/openai/")
        cfg.write_text(text.replace("api_key_env: RELJUDGE_TEST_KEY", "api_key_env: OPENAI_API_KEY"))
        result = judge(
            "sweep", cfg, "--batch", "--batch-poll", "0.02", env={"OPENAI_API_KEY": "sk-test-lite"}
        )
        assert result.returncode == EXIT_OK, result.output
        assert server.calls == 0  # every request went through a batch
        assert sum(server.batches.submissions.values()) == len(cell_records(tmp_path / "lite")) > 20
        assert server.batches.resubmitted == 0
        refused = text.replace("output: lite", "output: refused")
        cfg.write_text(refused.replace("litellm/openai/gpt-4.1-nano", "litellm/azure/gpt-4.1-nano"))
        result = judge("sweep", cfg, "--batch", "--dry-run", env=ENV)
        assert result.returncode == 2, result.output
        assert "litellm/azure/gpt-4.1-nano" in result.output and "no bounded download" in result.output


def test_batch_max_wait_stops_a_sweep_with_exit_75_and_the_same_command_re_attaches(tmp_path):
    with MockLLMServer(models=MODELS) as server:
        server.batches.completion_delay_s = 1e9  # the batches never end while this holds
        cfg = write_sweep(tmp_path, server.openai_url, "wait")
        args = ("--batch", "--batch-poll", "0.02", "--batch-limit", "requests=10")
        result = judge("sweep", cfg, *args, "--batch-max-wait", "0.05", env=ENV)
        assert result.returncode == 75, result.output
        assert "run the same command again" in result.output
        result = judge("sweep", cfg, env=ENV)  # without --batch: refused, or the requests in flight go again
        assert result.returncode == 2 and "in flight" in result.output and "--batch" in result.output
        sent = sum(server.batches.submissions.values())
        assert sent > 0 and not cell_records(tmp_path / "wait")
        assert not (tmp_path / "wait" / "analysis").exists()
        server.batches.completion_delay_s = 0.0
        result = judge("sweep", cfg, *args, env=ENV)
        assert result.returncode == EXIT_OK, result.output
        got = cell_records(tmp_path / "wait")
        assert len(got) == len(server.batches.submissions) > sent and server.batches.resubmitted == 0
        assert all(0 < b["counts"][0] <= 10 for b in server.batches.batches.values())  # --batch-limit
        assert server.calls == 0


def test_a_batch_api_that_cannot_be_reached_is_an_error_of_the_command_not_a_traceback(tmp_path):
    with MockLLMServer(models=MODELS) as server:
        url = server.openai_url
    cfg = write_sweep(tmp_path, url, "gone")  # nobody listens there any more
    result = judge("sweep", cfg, "--batch", "--batch-poll", "0.02", "--yes", env=ENV)
    assert result.returncode == 1, result.output
    assert "error: the batch API" in result.output and "the same command resumes" in result.output


def test_a_lost_create_stops_a_sweep_until_the_resend_is_said(tmp_path):
    faults = {"lose_creates": 1, "unlisted": True, "idempotency": True}
    with MockLLMServer(models=MODELS, batch_faults=faults) as server:
        cfg = write_sweep(tmp_path, server.openai_url, "lost")
        args = ("--batch", "--batch-poll", "0.02")
        result = judge("sweep", cfg, *args, env=ENV)
        assert result.returncode == 1, result.output
        assert "--batch-resend-lost" in result.output and "the same command resumes" not in result.output
        creates = server.batches.calls["POST batches"]
        result = judge("sweep", cfg, *args, env=ENV)  # stopped again, nothing created again
        assert result.returncode == 1 and server.batches.calls["POST batches"] == creates
        result = judge("sweep", cfg, *args, "--batch-resend-lost", env=ENV)  # the key finds the first batch
        assert result.returncode == EXIT_OK, result.output
        assert len(cell_records(tmp_path / "lost")) == len(server.batches.submissions)
        assert server.batches.resubmitted == 0 and server.calls == 0


@pytest.mark.parametrize("shape", ["no-usage", "1e12"])
def test_max_cost_over_a_batch_sweep_holds_whatever_usage_the_provider_reports(tmp_path, shape):
    from reljudge.llm.pricing import PriceTable, batch_price, price_cost
    from reljudge.llm.routing import resolve_model
    from reljudge.llm.usage_bound import answer_budget, bytes_bound
    from reljudge.testing import responders

    responder = responders.no_usage() if shape == "no-usage" else responders.absurd_usage("1e12")
    with MockLLMServer(responder, models=MODELS) as server:
        cfg = write_sweep(tmp_path, server.openai_url, "hostile")
        result = judge("sweep", cfg, "--dry-run", "--json", env=ENV)
        cap = json.loads(result.output)["cost_usd_batch"] / 4
        result = judge("sweep", cfg, "--batch", "--batch-poll", "0.02", "--max-cost", f"{cap:.8f}", env=ENV)
        assert result.returncode == EXIT_BUDGET, result.output
        assert result.output.count("warning:") <= 2, result.output  # once per model's client at most
        # what the provider bills, counted on the server: both models at their batch price (the
        # dearer one's price for every token, an upper bound), within one request's worst case
        prices = [batch_price(PriceTable().quote(resolve_model(f"openai/{m}")).price) for m in MODELS]
        billed = max(price_cost(p, "openai", *server.billed)[0] for p in prices)
        bodies = [
            json.loads(line)["body"]
            for item in list(server.batches.files.values())
            if item["purpose"] == "batch"
            for line in item["path"].read_bytes().splitlines()
        ]
        worst = max(
            price_cost(p, "openai", bytes_bound(b["messages"]), answer_budget(b))[0]
            for b in bodies
            for p in prices
        )
        assert 0 < billed <= cap + worst, (billed, cap, worst)
        assert server.batches.resubmitted == 0
