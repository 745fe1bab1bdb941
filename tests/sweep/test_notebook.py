"""A sweep started from a notebook cell (inside a running event loop) runs: its cells on a loop
of their own in a worker thread, as `reljudge.run.run_job` does."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from reljudge.sweep.api import plan_sweep, run_sweep
from reljudge.sweep.config import load_sweep_config
from reljudge.testing import MockLLMServer


@pytest.mark.slow
def test_run_sweep_works_inside_a_running_event_loop(tmp_path: Path):
    with MockLLMServer() as srv:
        cfg = tmp_path / "sweep.yaml"
        cfg.write_text(
            f"""
name: nb
output: out
cache: cache.sqlite
datasets: [dl19-sample]
models:
  - {{name: mock, model: openai/mock-model, base_url: "{srv.openai_url}"}}
methods: [binary]
prompts:
  - id: inline
    binary: {{user: "Query: {{query}}\\nPassage: {{document}}\\nJust answer 1 for yes and 0 for no."}}
sampling: {{topics: 1, per_grade: 1}}
analysis: {{plots: false}}
""",
            encoding="utf-8",
        )
        plan, _ = plan_sweep(load_sweep_config(cfg))

        async def notebook_cell():
            return run_sweep(plan, plots=False)

        done = asyncio.run(notebook_cell())
    assert done is not None and srv.calls > 0
    assert json.loads((tmp_path / "out" / "sweep.json").read_text())["cells"]
