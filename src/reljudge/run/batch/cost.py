"""``--max-cost`` with ``--batch``: a wave is sent only when its bound fits under the cap.

A request's bound is its prompt tokens (the model's tokenizer where one is available offline,
`reljudge.llm.tokens`, else about 4 characters a token) plus its answer's token limit
(`UNBOUNDED_ANSWER_TOKENS` without one), at the batch price (`reljudge.llm.pricing.batch_price`). What
the run has spent is the larger of what its records cost and what its waves cost (the answers
of an ingested wave at the batch price, the bound of a wave not yet ingested). The first wave
that does not fit is cut to the requests that do, the later ones are dropped (their requests
are collected again by a later run); when not one request fits, the job stops (`BatchCapped`,
exit code 3), and the same command with a higher cap carries on.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from reljudge.llm.client import UNBOUNDED_ANSWER_TOKENS
from reljudge.llm.pricing import batch_price, price_cost

if TYPE_CHECKING:
    from reljudge.run.batch.seam import BatchSession
    from reljudge.run.batch.state import BatchState, Wave
    from reljudge.run.config import RunConfig
    from reljudge.run.summary import RunSummary


class BatchCapped(Exception):
    """No more requests fit under ``--max-cost`` (``summary``: the last pass's)."""

    def __init__(self, message: str, summary: RunSummary | None) -> None:
        super().__init__(message)
        self.summary = summary


def spent_usd(session: BatchSession, state: BatchState) -> float:
    """What the run directory has spent (see the module docstring)."""
    from reljudge.io.rundir import stream_stats

    path = session.dir / "judgments.jsonl"
    records = stream_stats(path)[1].cost_usd if path.exists() else 0.0
    return max(records, state.spent_usd)


def request_bound(line: bytes, counter: Any, price: Any, backend: str) -> float:
    """The bound of one request line (see the module docstring)."""
    body = json.loads(line)["body"]
    limit = body.get("max_completion_tokens", body.get("max_tokens"))
    answer = limit if isinstance(limit, int) and limit > 0 else UNBOUNDED_ANSWER_TOKENS
    messages = [m for m in body.get("messages", []) if isinstance(m, dict)]
    return price_cost(price, backend, counter.messages(messages), answer)[0]


def fit_waves(
    session: BatchSession, state: BatchState, cap: float, waves: list[Wave], summary: RunSummary
) -> None:
    """Reserve the new ``waves`` under ``cap``, cutting them where the cap is reached."""
    from reljudge.llm.tokens import TokenCounter

    client = session.client
    price = batch_price(client._results.price)
    counter = TokenCounter(client.model)
    spent = spent_usd(session, state) - sum(w.cost_usd for w in waves)
    room = cap - spent
    kept: list[Wave] = []
    for wave in waves:
        path = session.batch_dir / wave.file
        reserved, lines, size, cut = 0.0, 0, 0, False
        with path.open("rb") as handle:
            for line in handle:
                bound = request_bound(line, counter, price, client.backend_name)
                if reserved + bound > room:
                    cut = True
                    break
                reserved += bound
                lines += 1
                size += len(line)
        if lines:
            if cut:
                _truncate(path, size)
            wave.lines, wave.bytes, wave.cost_usd, wave.tokens = lines, size, reserved, size // 4 + 1
            room -= reserved
            kept.append(wave)
        if cut or not lines:
            break
    for wave in waves[len(kept) :]:
        (session.batch_dir / wave.file).unlink(missing_ok=True)
        state.waves.remove(wave)
    state.save()
    if not kept:
        raise BatchCapped(
            f"stopped at the cost cap: ${spent:.4f} spent of --max-cost ${cap:.4f} (all runs in this directory, "
            f"batch prices); {summary.records} record(s) for {summary.items} pooled item(s); the next request "
            "would not fit. Everything is saved: re-run the same command with a higher --max-cost to continue",
            summary,
        )


def _truncate(path: Any, size: int) -> None:
    with path.open("r+b") as handle:
        handle.truncate(size)


def confirm_batch_job(config: RunConfig, confirm: Callable[[dict[str, Any]], bool]) -> None:
    """On a terminal (``confirm``, `reljudge.cli.confirm.run_confirmation`), ask before a new
    batch job starts, with its estimate at the batch price; a job that has records or batches in
    its run directory resumes without asking. No: `NotConfirmed`, nothing sent or written."""
    from reljudge.run.estimate import NotConfirmed, estimate_job
    from reljudge.run.prepare import prepare

    job = prepare(config, read_existing=False)
    if job.rundir.judgments_path.exists() or (job.rundir.path / "batch").exists():
        return
    if not confirm(
        estimate_job(job.config, job.judge, job.inputs, job.pool, job.prices, batch=True, model=job.model)
    ):
        raise NotConfirmed("not confirmed: nothing was sent and nothing was written")
