"""``judge sweep --batch``: every cell of a sweep through the provider's Batch API.

Each cell is one ``judge run --batch`` job (`reljudge.run.batch.passes.run_batch_async`) on the cell's
run directory, with the cell's own request lines (``custom_id`` = the response-cache key, the
body exactly what the synchronous sweep would send), waves and ``batch/state.json``. Up to
``limits.cells`` cells run at the same time, as in a synchronous sweep, so their batches are in
flight together and their waits overlap. Waves are not shared between cells: each cell's state
file alone says what was sent for it, so a sweep started again after a kill re-attaches to the
waves of every cell that was running (finished cells make their records from the cache and send
nothing), exactly as ``judge run --batch`` does. The price of that choice: a sweep of many small
cells makes many small batches (one or more per cell and round), and ``--batch-limit tokens=T``
holds per cell, not across cells.

``--max-cost``: one cap over the sweep, at the batch price. When a cell reserves its next waves
(`reljudge.run.batch.cost.fit_waves`), its cap is the sweep's cap less what every other cell
has spent or reserved (`cell_spent`: its records' cost, or the sum of its waves' reservations,
whichever is larger). That is read and used with no ``await`` in between, so two cells never
reserve the same room. When not one request of a cell fits, that cell stops, no new cell starts,
and the running ones go on until they finish or stop at the cap too. A reservation is a bound
(each request's prompt tokens and its answer's token limit), so once the running cells' waves are
ingested at what they cost, room may have come free: the cells not finished then go again, round
after round, until a round reserves no new wave. Then the sweep ends with `SweepBatchCapped`
(exit code 3), within one request's bound of the cap. The same command with a higher cap goes on,
and no request is submitted twice.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from reljudge.errors import InputError

if TYPE_CHECKING:
    from reljudge.run.batch.passes import BatchLimits
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
    """Every model of the sweep must be one whose requests its backend can send through a batch
    (`reljudge.llm.backends.capabilities`): `InputError` before anything is sent, naming the first
    that cannot."""
    from reljudge.llm.routing import resolve_model

    for model in sorted({cell.model_spec.model_string for cell in plan.cells}):
        resolved = resolve_model(model)
        backend = resolved.capabilities
        if not backend.sends_batches:
            raise InputError(
                f"--batch sends OpenAI batch requests: {model} uses the {resolved.backend} backend (use an "
                "OpenAI model, openai/<name> with base_url, or litellm/<provider>/<name>)",
                plan.config.source,
            )
        try:
            backend.check_batch_model(resolved.model)
        except ValueError as err:
            raise InputError(f"--batch: {model}: {err}", plan.config.source) from None


def refuse_live_batches(plan: SweepPlan) -> None:
    """A sweep without ``--batch`` whose cells have batches in flight would send their requests
    again: `InputError` before anything is sent, naming the first such cell."""
    from reljudge.run.batch.state import live_waves

    for cell in plan.cells:
        live = live_waves(cell.directory(plan.config.output_dir))
        if live:
            raise InputError(
                f"cell {cell.id} has {live} batch(es) in flight: run the same command with --batch to re-attach "
                "to them (without it their requests would be sent and paid again)",
                plan.config.source,
            )


def cell_spent(plan: SweepPlan, cell: Cell) -> float:
    """What a cell has spent: its records' cost or what its batch waves were reserved under the cap,
    whichever is larger (`reljudge.run.batch.cost.spent_usd`)."""
    from reljudge.io.rundir import stream_stats
    from reljudge.run.batch.seam import BATCH_DIR
    from reljudge.run.batch.state import STATE_FILE, BatchState

    directory = cell.directory(plan.config.output_dir)
    path = directory / "judgments.jsonl"
    records = stream_stats(path)[1].cost_usd if path.exists() else 0.0
    state = directory / BATCH_DIR / STATE_FILE
    # every wave reserved, prepared ones too: a cell's waves count the moment they are reserved
    waves = sum(w.cost_usd for w in BatchState.load(state).waves) if state.exists() else 0.0
    return max(records, waves)


def waves_reserved(plan: SweepPlan) -> int:
    """How many waves the sweep's cells have reserved so far (sent or to be sent)."""
    from reljudge.run.batch.seam import BATCH_DIR
    from reljudge.run.batch.state import STATE_FILE, BatchState

    paths = (cell.directory(plan.config.output_dir) / BATCH_DIR / STATE_FILE for cell in plan.cells)
    return sum(len(BatchState.load(path).waves) for path in paths if path.exists())


async def run_cells_batch(
    plan: SweepPlan,
    limits: BatchLimits,
    *,
    max_cost: float | None = None,
    on_cell: Callable[[Cell, Any], None] | None = None,
    say: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Run every cell of ``plan`` through the Batch API, up to ``limits.cells`` at the same time
    (see the module docstring); the cells' summaries by cell id. Raises `SweepBatchCapped` at the
    cap, and `reljudge.run.batch.passes.BatchPending` (``--batch-max-wait``) once every cell started has
    finished or stopped waiting."""
    import asyncio

    from reljudge.run.batch.cost import BatchCapped
    from reljudge.run.batch.passes import BatchPending, run_batch_async
    from reljudge.sweep.execute import cell_run_config, write_index

    check_batch_models(plan)
    if max_cost is not None:
        from reljudge.sweep.budget import check_prices

        check_prices(plan)
    write_index(plan)
    say = say or _stderr
    results: dict[str, Any] = {}
    stopped: dict[str, Any] = {}  # cells the cap stopped: their last pass's summary
    pending: list[BatchPending] = []
    gate = asyncio.Semaphore(plan.config.limits.cells)

    def cap_of(cell: Cell) -> Callable[[], float]:
        """The cell's cap when it reserves its next waves: the sweep's, less what the others spent
        or reserved. Read and used with no await in between, so cells never reserve the same room."""
        others = [c for c in plan.cells if c is not cell]
        return lambda: max(0.0, (max_cost or 0.0) - sum(cell_spent(plan, c) for c in others))

    async def one(cell: Cell) -> None:
        async with gate:
            if stopped or pending:  # the cap was reached or a wait ran out: no new cell starts
                return
            config = cell_run_config(plan, cell).model_copy(update={"batch": True})
            cap = None
            if max_cost is not None:
                cap = cap_of(cell)
                config = config.model_copy(update={"max_cost": cap()})
            try:
                summary = await run_batch_async(
                    config, limits, say=lambda text: say(f"{cell.id}: {text}"), cap=cap
                )
            except BatchCapped as stop:
                stopped[cell.id] = stop.summary
                return
            except BatchPending as wait:
                pending.append(wait)
                return
            results[cell.id] = summary
            if on_cell is not None:
                on_cell(cell, summary)

    while True:  # rounds: a cell the cap stopped while others held reservations tries again
        waves = waves_reserved(plan)
        stopped.clear()
        try:
            async with asyncio.TaskGroup() as group:
                for cell in plan.cells:
                    if cell.id not in results:
                        group.create_task(one(cell))
        except BaseExceptionGroup as failed:  # a cell's error (bad input, the Batch API) as itself
            raise failed.exceptions[0] from None
        if not stopped or pending or waves_reserved(plan) == waves:
            break  # done, waiting, or nothing more fitted in this round: the cap is reached
    if stopped:
        raise SweepBatchCapped(_capped(plan, results, stopped, max_cost or 0.0), results)
    if pending:
        raise pending[0]
    return results


def _capped(plan: SweepPlan, results: dict[str, Any], stopped: dict[str, Any], cap: float) -> CappedSweep:
    """How far the sweep got, from the cells' run directories (this session's and earlier ones)."""
    from reljudge.io.rundir import stream_stats
    from reljudge.sweep.budget import CappedSweep

    finished = sum(1 for s in results.values() if getattr(s, "state", None) == "finished")
    records, begun = 0, 0
    for cell in plan.cells:
        path = cell.directory(plan.config.output_dir) / "judgments.jsonl"
        if path.exists():
            records += stream_stats(path)[0].judgments
            begun += cell.id not in results
    return CappedSweep(
        cap=cap,
        spent=sum(cell_spent(plan, c) for c in plan.cells),
        next_request=None,
        cells=len(plan.cells),
        finished=finished,
        capped=len(results) - finished + begun,
        not_started=len(plan.cells) - len(results) - begun,
        records=records,
    )


def _stderr(text: str) -> None:
    print(text, file=sys.stderr, flush=True)
