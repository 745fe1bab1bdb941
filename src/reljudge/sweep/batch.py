"""``judge sweep --batch``: every cell of a sweep through the provider's Batch API.

Each cell is one ``judge run --batch`` job (`reljudge.run.batch.run_batch_async`) on the cell's
run directory, with the cell's own request lines (``custom_id`` = the response-cache key, the
body exactly what the synchronous sweep would send), waves and ``batch/state.json``. The cells
go **one after the other**: a cell's waves are sent, polled and ingested, and its records made,
before the next cell collects anything. That is the simplest path that is correct under every
kill: each cell's state file says what was sent for it, a sweep started again re-attaches to the
waves of the cell it was in (the cells before it make their records from the cache and send
nothing), and the sweep's one cost cap is split exactly (below). Its price is time: a sweep waits
for one batch window per cell and round rather than one for all cells. (Sharing waves between
cells would need one state over several run directories; see the README.)

``--max-cost``: one cap over the sweep, at the batch price. Before a cell runs, its cap is the
sweep's cap less what every other cell has spent (its records' cost, or what its waves were
reserved, whichever is larger: `cell_spent`), so that the cell's waves are reserved against what
is left of the sweep's cap (`reljudge.run.batch_cost.fit_waves`). When not one request of a cell
fits, the sweep stops (`SweepBatchCapped`, exit code 3); the cells after it are not started; the
same command with a higher cap goes on, and no request is submitted twice.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from reljudge.errors import InputError

if TYPE_CHECKING:
    from reljudge.run.batch import BatchLimits
    from reljudge.sweep.budget import CappedSweep
    from reljudge.sweep.execute import SweepPlan
    from reljudge.sweep.grid import Cell


class SweepBatchCapped(Exception):
    """A cell's next wave does not fit under the sweep's ``--max-cost``: ``capped`` says how far the
    sweep got, ``results`` holds the summaries of the cells that ran."""

    def __init__(self, capped: CappedSweep, results: dict[str, Any]) -> None:
        super().__init__(capped.message())
        self.capped = capped
        self.results = results


def check_batch_models(plan: SweepPlan) -> None:
    """Every model of the sweep must speak OpenAI's batch format: `InputError` before anything is
    sent, naming the first that does not."""
    from reljudge.llm.routing import resolve_model

    for model in sorted({cell.model_spec.model_string for cell in plan.cells}):
        backend, _ = resolve_model(model)
        if backend != "openai":
            raise InputError(
                f"--batch sends OpenAI batch requests: {model} uses the {backend} backend (use an OpenAI "
                "model or openai/<name> with base_url)",
                plan.config.source,
            )


def cell_spent(plan: SweepPlan, cell: Cell) -> float:
    """What a cell has spent: its records' cost or what its batch waves were reserved under the cap,
    whichever is larger (`reljudge.run.batch_cost.spent_usd`)."""
    from reljudge.io.rundir import stream_stats
    from reljudge.run.batch_collect import BATCH_DIR
    from reljudge.run.batch_state import STATE_FILE, BatchState

    directory = cell.directory(plan.config.output_dir)
    path = directory / "judgments.jsonl"
    records = stream_stats(path)[1].cost_usd if path.exists() else 0.0
    state = directory / BATCH_DIR / STATE_FILE
    waves = BatchState.load(state).spent_usd if state.exists() else 0.0
    return max(records, waves)


async def run_cells_batch(
    plan: SweepPlan,
    limits: BatchLimits,
    *,
    max_cost: float | None = None,
    on_cell: Callable[[Cell, Any], None] | None = None,
    say: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Run every cell of ``plan`` through the Batch API, one after the other (see the module
    docstring); the cells' summaries by cell id. Raises `SweepBatchCapped` at the cap and lets
    `reljudge.run.batch.BatchPending` (``--batch-max-wait``) through."""
    from reljudge.run.batch import run_batch_async
    from reljudge.run.batch_cost import BatchCapped
    from reljudge.sweep.execute import cell_run_config, write_index

    check_batch_models(plan)
    if max_cost is not None:
        from reljudge.sweep.budget import check_prices

        check_prices(plan)
    write_index(plan)
    say = say or _stderr
    results: dict[str, Any] = {}
    for cell in plan.cells:
        config = cell_run_config(plan, cell).model_copy(update={"batch": True})
        if max_cost is not None:
            others = sum(cell_spent(plan, c) for c in plan.cells if c is not cell)
            config = config.model_copy(update={"max_cost": max(0.0, max_cost - others)})
        try:
            summary = await run_batch_async(config, limits, say=lambda text, c=cell: say(f"{c.id}: {text}"))
        except BatchCapped as stop:
            raise SweepBatchCapped(_capped(plan, results, stop.summary, max_cost or 0.0), results) from None
        results[cell.id] = summary
        if on_cell is not None:
            on_cell(cell, summary)
    return results


def _capped(plan: SweepPlan, results: dict[str, Any], last: Any, cap: float) -> CappedSweep:
    from reljudge.sweep.budget import CappedSweep

    stopped = 1 if last is not None else 0
    return CappedSweep(
        cap=cap,
        spent=sum(cell_spent(plan, c) for c in plan.cells),
        next_request=None,
        cells=len(plan.cells),
        finished=sum(1 for s in results.values() if getattr(s, "state", None) == "finished"),
        capped=len(results)
        - sum(1 for s in results.values() if getattr(s, "state", None) == "finished")
        + stopped,
        not_started=len(plan.cells) - len(results) - stopped,
        records=sum(getattr(s, "records", 0) for s in results.values()) + getattr(last, "records", 0),
    )


def _stderr(text: str) -> None:
    print(text, file=sys.stderr, flush=True)
