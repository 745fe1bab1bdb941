"""A sweep's cells share their inputs (`SharedInputs`): each cell prepared with the shared
inputs holds what it holds when prepared alone, and estimates the same calls and tokens."""

from __future__ import annotations

from pathlib import Path

from reljudge.run import estimate_job, prepare
from reljudge.run.inputs import SharedInputs
from reljudge.sweep import execute
from reljudge.sweep.config import load_sweep_config

SAMPLE = Path(__file__).resolve().parents[2] / "examples" / "sweep-sample.yaml"


def test_cells_prepared_with_shared_inputs_equal_cells_prepared_alone(tmp_path):
    config = load_sweep_config(SAMPLE)
    plan = execute.plan(config, inputs_root=tmp_path / "inputs")
    shared = SharedInputs()
    assert len(plan.cells) > 3
    for cell in plan.cells:
        run_config = execute.cell_run_config(plan, cell, dry_run=True)
        alone = prepare(run_config)
        together = prepare(run_config, shared=shared)
        assert together.pool.docs == alone.pool.docs and together.pool.pairs == alone.pool.pairs
        assert dict(together.inputs.corpus) == dict(alone.inputs.corpus)
        assert together.inputs.corpus.path == alone.inputs.corpus.path
        assert dict(together.inputs.topics) == dict(alone.inputs.topics)
        assert together.passages.as_dict() == alone.passages.as_dict()
        est_alone = estimate_job(alone.config, alone.judge, alone.inputs, alone.pool)
        est_together = estimate_job(together.config, together.judge, together.inputs, together.pool)
        assert est_together == est_alone
    assert len(shared._inputs) == 1  # one dataset, resolved once for every cell
