"""A sweep started from a notebook cell (inside a running event loop) runs: its cells on a loop
of their own in a worker thread, as `reljudge.run.run_job` does. And a warning about the model's
price is said once for the sweep, not once per cell."""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path

import pytest

from reljudge.sweep.api import plan_sweep, run_sweep
from reljudge.sweep.config import load_sweep_config
from reljudge.testing import MockLLMServer


def _sweep(tmp_path: Path, url: str, model: str = "openai/mock-model") -> Path:
    cfg = tmp_path / "sweep.yaml"
    cfg.write_text(
        f"""
name: nb
output: out
cache: cache.sqlite
datasets: [dl19-sample]
models:
  - {{name: mock, model: {model}, base_url: "{url}"}}
methods: [binary]
prompts:
  - id: inline
    binary: {{user: "Query: {{query}}\\nPassage: {{document}}\\nJust answer 1 for yes and 0 for no."}}
  - id: other
    binary: {{user: "Is this passage relevant? {{document}} Query: {{query}} Answer 1 or 0."}}
sampling: {{topics: 1, per_grade: 1}}
analysis: {{plots: false}}
""",
        encoding="utf-8",
    )
    return cfg


@pytest.mark.slow
def test_run_sweep_works_inside_a_running_event_loop(tmp_path: Path):
    with MockLLMServer() as srv:
        plan, _ = plan_sweep(load_sweep_config(_sweep(tmp_path, srv.openai_url)))

        async def notebook_cell():
            return run_sweep(plan, plots=False)

        done = asyncio.run(notebook_cell())
    assert done is not None and srv.calls > 0
    assert json.loads((tmp_path / "out" / "sweep.json").read_text())["cells"]


@pytest.mark.slow
def test_a_price_from_another_model_is_said_once_per_sweep(tmp_path: Path, caplog):
    with MockLLMServer() as srv:
        plan, _ = plan_sweep(load_sweep_config(_sweep(tmp_path, srv.openai_url, "openai/gpt-4o-mnii")))
        assert len(plan.cells) == 2
        with caplog.at_level(logging.WARNING):
            run_sweep(plan, plots=False)
    said = [r.getMessage() for r in caplog.records if "priced as 'gpt-4o'" in r.getMessage()]
    assert len(said) == 1, said
