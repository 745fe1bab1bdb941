"""``--max-cost`` with ``--batch``: a wave is sent only when its bound fits under the cap.

A request's bound is what it could have cost (`reljudge.llm.usage_bound`: its prompt's bound and
its answer's token limit, `UNBOUNDED_ANSWER_TOKENS` without one), at the batch price
(`reljudge.llm.pricing.batch_price`); the usage of its answer is clamped to the same bound when
the wave is ingested, and an answer without usage is charged it (`wave_bounds`). What
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

from reljudge.llm.pricing import batch_price, price_cost
from reljudge.llm.usage_bound import UsageBound, answer_budget, own_endpoint, prompt_bound

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


def line_bound(body: Any, counter: Any, exact: bool) -> UsageBound:
    """The `UsageBound` of one request line's body (``exact``: the provider's own endpoint)."""
    body = body if isinstance(body, dict) else {}
    messages = [m for m in body.get("messages", []) if isinstance(m, dict)]
    return UsageBound(prompt_bound(messages, counter, exact), answer_budget(body))


def request_bound(line: bytes, counter: Any, price: Any, backend: str, exact: bool = False) -> float:
    """The bound of one request line in USD (see the module docstring)."""
    bound = line_bound(json.loads(line)["body"], counter, exact)
    return price_cost(price, backend, bound.prompt_tokens, bound.answer_tokens)[0]


def wave_bounds(session: BatchSession, path: Any) -> dict[str, UsageBound]:
    """The `UsageBound` of each request of a wave's request file, by custom_id: what its answer's
    usage is clamped to when the wave is ingested (`reljudge.llm.batch.ingest.Ingestor`)."""
    from reljudge.llm.tokens import TokenCounter

    client = session.client
    exact = own_endpoint(client.config.base_url)
    counter = TokenCounter(client.model) if exact else None
    out: dict[str, UsageBound] = {}
    with path.open("rb") as handle:
        for line in handle:
            try:
                data = json.loads(line)
            except ValueError:
                continue
            if isinstance(data, dict) and isinstance(data.get("custom_id"), str):
                out[data["custom_id"]] = line_bound(data.get("body"), counter, exact)
    return out


def usage_warning(client: Any, report: Any) -> None:
    """Count the usage anomalies of an ingested wave (`reljudge.llm.batch.ingest.IngestReport`) in
    the client's stats, and warn once a run about each kind."""
    for kind, n in sorted(report.anomalies.items()):
        if kind == "over" and report.over is not None:
            prompt, answer, bound_prompt, bound_answer = report.over
            text = (
                f"the provider reported {prompt:,} prompt + {answer:,} completion tokens for a batch request that "
                f"could have used at most {bound_prompt:,} + {bound_answer:,}; such usage is clamped to that bound "
                "(its cost is an estimate)"
            )
        else:
            text = (
                "a batch answer came without usage; such an answer is charged what the request could have cost "
                "(its prompt's bound and answer budget at the batch price: an estimate)"
            )
        client.usage_anomaly(kind, text, count=n)


def fit_waves(
    session: BatchSession, state: BatchState, cap: float, waves: list[Wave], summary: RunSummary
) -> None:
    """Reserve the new ``waves`` under ``cap``, cutting them where the cap is reached."""
    from reljudge.llm.tokens import TokenCounter

    client = session.client
    price = batch_price(client._results.price)
    counter = TokenCounter(client.model)
    exact = own_endpoint(client.config.base_url)
    spent = spent_usd(session, state) - sum(w.cost_usd for w in waves)
    room = cap - spent
    kept: list[Wave] = []
    for wave in waves:
        path = session.batch_dir / wave.file
        reserved, lines, size, cut = 0.0, 0, 0, False
        with path.open("rb") as handle:
            for line in handle:
                bound = request_bound(line, counter, price, client.backend_name, exact)
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
