"""``judge sweep --max-cost``: one cost cap over the whole sweep (`reljudge.sweep.budget`), end to
end against the mock server with calls counted on the server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from _cli import cell_records, judge
from reljudge.errors import EXIT_BUDGET, EXIT_OK
from reljudge.testing import MockLLMServer

ENV = {"RELJUDGE_TEST_KEY": "sk-test"}


def write_sweep(tmp: Path, url: str, model: str = "openai/gpt-4o-mini") -> Path:
    cfg = tmp / "sweep.yaml"
    cfg.write_text(
        f"""
name: capped
output: out
cache: cache.sqlite
datasets: [dl19-sample]
models:
  - {{name: mini, model: {model}, base_url: "{url}", api_key_env: RELJUDGE_TEST_KEY, params: {{max_tokens: 20}}}}
  - {{name: nano, model: openai/gpt-4.1-nano, base_url: "{url}", api_key_env: RELJUDGE_TEST_KEY, params: {{max_tokens: 20}}}}
methods: [binary]
prompts:
  - id: short
    group: mine
    binary: {{user: "Query: {{query}}\\nPassage: {{document}}\\nAnswer 1 for yes and 0 for no."}}
  - id: long
    group: mine
    binary: {{user: "Is the passage relevant to the query?\\nQuery: {{query}}\\nPassage: {{document}}\\nJust answer 1 for yes and 0 for no."}}
sampling: {{topics: 3, per_grade: 3}}
limits: {{concurrency: 4, cells: 2}}
analysis: {{plots: false}}
""",
        encoding="utf-8",
    )
    return cfg


@pytest.mark.slow
def test_a_sweep_capped_at_half_its_estimate_stops_at_the_cap_and_resumes_without_a_repeated_call(tmp_path):
    with MockLLMServer(models=("gpt-4o-mini", "gpt-4.1-nano")) as server:
        cfg = write_sweep(tmp_path, server.openai_url)
        result = judge("sweep", cfg, "--dry-run", "--json", env=ENV)
        assert result.returncode == EXIT_OK, result.output
        estimate = json.loads(result.output)
        calls, cost = estimate["calls"], estimate["cost_usd"]
        assert estimate["cells"] == 4 and calls > 20 and cost > 0 and estimate["price_known"]
        cap = cost / 2

        result = judge("sweep", cfg, "--max-cost", f"{cap:.8f}", env=ENV)
        assert result.returncode == EXIT_BUDGET, result.output
        assert "stopped at the cost cap" in result.output and "higher --max-cost" in result.output
        done = cell_records(tmp_path / "out")
        spent = sum(r.provenance.usage.cost_usd for r in done)
        dearest = max(r.provenance.usage.cost_usd for r in done)
        assert 0 < len(done) < calls and server.calls == len(done)  # every call made has its record
        assert spent <= cap + dearest and cap - spent <= dearest  # within one request's cost of the cap
        assert not (tmp_path / "out" / "analysis").exists()  # no analysis of a part
        manifests = [json.loads(p.read_text()) for p in (tmp_path / "out").glob("cells/**/manifest.json")]
        assert "capped" in {m["extra"]["state"] for m in manifests}

        # the same cap: nothing more is sent
        result = judge("sweep", cfg, "--max-cost", f"{cap:.8f}", env=ENV)
        assert result.returncode == EXIT_BUDGET and server.calls == len(done), result.output

        result = judge("sweep", cfg, "--max-cost", f"{cost * 4:.8f}", env=ENV)
        assert result.returncode == EXIT_OK, result.output
        assert server.calls == calls == len(cell_records(tmp_path / "out"))  # every item once
        assert all(request.seen == 0 for request in server.requests)  # no request sent twice
        assert (tmp_path / "out" / "analysis").is_dir()


def test_a_sweep_cap_needs_a_price_for_every_model(tmp_path):
    with MockLLMServer(models=("mock-model", "gpt-4.1-nano")) as server:
        cfg = write_sweep(tmp_path, server.openai_url, model="openai/mock-model")
        result = judge("sweep", cfg, "--max-cost", "1", env=ENV)
        assert result.returncode == 2 and "--max-cost needs the price of openai/mock-model" in result.output
        assert server.calls == 0
