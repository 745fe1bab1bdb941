"""``judge sweep --max-cost USD``: one cost cap over a whole sweep.

The cap counts what every cell's records cost, in this session and the earlier ones (a cell's
run directory holds what it paid; answers from the response cache cost nothing), so it is the
sweep's total. All the sweep's clients (one per model) share one
`reljudge.llm.budget.CostBudget`: each request is reserved before it is sent and settled when
its answer is back, exactly as in ``judge run --max-cost``. When the next request does not fit,
the cells in progress stop (each saves its records, ``qrels.txt`` and manifest, state
``capped``), the cells not started are not started, and the command exits with code 3
(`reljudge.errors.EXIT_BUDGET`). The same command with a higher cap resumes every cell from its
records: no request is sent twice.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from reljudge.errors import InputError

if TYPE_CHECKING:
    from reljudge.llm.budget import CostBudget
    from reljudge.sweep.execute import SweepPlan


def sweep_spent(plan: SweepPlan) -> float:
    """What the records of the sweep's cells cost so far (every record, replaced ones too)."""
    from reljudge.io.rundir import stream_stats

    spent = 0.0
    for cell in plan.cells:
        path = cell.directory(plan.config.output_dir) / "judgments.jsonl"
        if path.exists():
            spent += stream_stats(path)[1].cost_usd
    return spent


def check_prices(plan: SweepPlan) -> None:
    """A cap needs a price for every model of the sweep: `InputError` naming the first without one."""
    from reljudge.llm.pricing import PriceTable, model_cost

    table = PriceTable()
    for model in sorted({cell.model_spec.model_string for cell in plan.cells}):
        if model_cost(model, 1_000_000, 1_000_000, table) == (0.0, False):
            raise InputError(
                f"--max-cost needs the price of {model}: it is not in litellm's model cost map",
                plan.config.source,
            )


def sweep_budget(plan: SweepPlan, cap: float) -> CostBudget:
    """The sweep's budget: ``cap`` USD, with what its cells spent before counted."""
    from reljudge.llm.budget import CostBudget

    check_prices(plan)
    return CostBudget(cap, sweep_spent(plan))


@dataclass(frozen=True)
class CappedSweep:
    """How far a sweep stopped at its cap got."""

    cap: float
    spent: float
    next_request: float | None  # None: batch mode (the next cell's wave did not fit)
    cells: int
    finished: int
    capped: int
    not_started: int
    records: int

    def message(self) -> str:
        nxt = (
            "Not one more request fits at the batch price"
            if self.next_request is None
            else f"The next request would cost about {usd(self.next_request)}"
        )
        return (
            f"stopped at the cost cap: {usd(self.spent)} spent of --max-cost {usd(self.cap)} (all cells of "
            f"this sweep); {self.finished} of {self.cells} cell(s) finished, {self.capped} stopped part-way, "
            f"{self.not_started} not started; {self.records} record(s) judged. {nxt}. Everything is saved: "
            "re-run the same command with a higher --max-cost to continue"
        )

    def as_dict(self) -> dict[str, Any]:
        return {k: round(v, 6) if isinstance(v, float) else v for k, v in self.__dict__.items()}


def capped_sweep(plan: SweepPlan, results: Mapping[str, Any], budget: CostBudget) -> CappedSweep | None:
    """How far the sweep got when its cap stopped it, None when it did not."""
    if budget.exhausted is None:
        return None
    states = [getattr(results.get(cell.id), "state", None) for cell in plan.cells]
    return CappedSweep(
        cap=budget.cap,
        spent=budget.spent,
        next_request=budget.exhausted.next_cost,
        cells=len(plan.cells),
        finished=sum(1 for s in states if s == "finished"),
        capped=sum(1 for s in states if s == "capped"),
        not_started=sum(1 for s in states if s is None),
        records=sum(getattr(r, "records", 0) for r in results.values()),
    )


def usd(value: float) -> str:
    """``$1.2346``; small amounts with more digits (``$0.000021``)."""
    return f"${value:.4f}" if value >= 0.01 or value == 0 else f"${value:.6f}"
