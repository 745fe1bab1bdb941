"""The end of a job (and its start): ``qrels.txt`` derived from the records, ``manifest.json``,
and the `RunSummary` -- from what the run directory holds now."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from reljudge.errors import EXIT_BUDGET, EXIT_FAILURE, EXIT_OK, InputError
from reljudge.io.rundir import RETRY_FAILED_STATUSES
from reljudge.records import STATUSES, utc_now
from reljudge.run.config import JobState
from reljudge.run.derive import derive_qrels, derive_streamed
from reljudge.run.errors import writing
from reljudge.run.identity import job_identity
from reljudge.run.prepare import PreparedJob
from reljudge.run.session import Session, read_back
from reljudge.run.summary import RunSummary, failure_rate

if TYPE_CHECKING:
    from reljudge.io.rundir import RecordStats
    from reljudge.llm.budget import BudgetExhausted
    from reljudge.llm.types import ProviderAbort


def write_manifest(
    job: PreparedJob,
    session: Session,
    state: str,
    results: Mapping[str, Any],
    stats: tuple[RecordStats, RecordStats] | None = None,
) -> None:
    """Write the run directory's manifest: the settings, the job's identity and pool, and
    ``results`` (what `finish` found; empty while the job is running)."""
    config = job.config
    earlier = job.manifest.get("extra") or {}
    extra: dict[str, Any] = {
        "state": state,
        "identity": job_identity(config, job.judge),
        "dataset": {"name": job.resolved.name, "sources": job.resolved.sources},
        "pool": {
            "spec": config.pool,
            "description": job.pool.description,
            "topics": len(job.pool.docs),
            "items": job.pool.n_items,
            "passages": job.passages.as_dict(),
        },
        "wall_time_s": earlier.get("wall_time_s", 0.0),
        **results,
    }
    settings = config.model_dump(mode="json", exclude={"command", "progress", "dry_run"})
    job.rundir.write_manifest(
        command=config.command or [],
        config=settings,
        started_at=session.started_at,
        finished_at=None if state == "running" else utc_now(),
        extra=extra,
        stats=stats,
    )


def finish(
    job: PreparedJob,
    session: Session,
    state: JobState,
    client_stats: Mapping[str, Any],
    abort: ProviderAbort | None = None,
    capped: BudgetExhausted | None = None,
) -> RunSummary:
    """Derive qrels and write the manifest from what the run directory holds now (one streamed
    pass over judgments.jsonl, see `reljudge.run.session.read_back`). ``capped``: the cost cap
    stopped the job (``state="capped"``)."""
    from reljudge.io.trec import write_qrels
    from reljudge.llm.pricing import price_known

    config = job.config
    back = read_back(job, session)
    statuses = back.latest.statuses
    ledger = session.ledger
    usage = ledger.usage.total()
    rate = failure_rate(statuses)
    qrels_info: dict[str, Any] = {"file": job.rundir.qrels_path.name, "float_policy": config.float_policy}
    qrels_pairs = incomplete = 0
    unwritable: OSError | None = None
    try:
        if back.labels is not None:  # gathered in the pass: written topic by topic
            topics, exclusions = derive_streamed(back.labels, config.float_policy, back.label_error)
            qrels_pairs = write_qrels(topics, job.rundir.qrels_path)
        else:
            qrels, exclusions = derive_qrels(
                job.judge, back.records, config.float_policy, resources=job.inputs.resources
            )
            del back.records[:]  # the label views are not needed any more
            qrels_pairs = write_qrels(qrels, job.rundir.qrels_path)
        incomplete = exclusions.pop("incomplete", 0)
        qrels_info.update(pairs=qrels_pairs, incomplete=incomplete, exclusions=exclusions)
    except InputError as err:  # e.g. contradicting labels: keep the records, report the problem
        qrels_info["error"] = str(err)
    except OSError as err:  # e.g. a full disk: the manifest says so (if it can be written)
        qrels_info["error"] = f"cannot write: {err.strerror or err}"
        unwritable = err
    wall = round(time.monotonic() - session.started, 3)
    spent = ledger.as_dict()
    summary = RunSummary(
        state=state,
        method=config.method,
        model=config.model,
        output_dir=job.rundir.path,
        items=job.pool.n_items,
        records=back.latest.judgments,
        new_records=session.new_records,
        statuses={s: statuses[s] for s in STATUSES if statuses[s]},
        fallbacks=dict(sorted(back.fallbacks.items())),
        usage=usage,
        total_usage=back.spent.total(),
        price_known=price_known(job.model, job.prices),
        cache_hits=ledger.cache_hits,
        retries=ledger.retries,
        reasks=ledger.reasks,
        retry_causes=spent["retry_causes"],
        failure_causes=spent["failure_causes"],
        wall_time_s=wall,
        failure_rate=rate,
        max_failure_rate=config.max_failure_rate,
        retryable_failures=sum(statuses[s] for s in RETRY_FAILED_STATUSES),
        api_error_kinds=dict(sorted(back.latest.api_error_kinds.items())),
        abort=abort_info(abort) if abort is not None else None,
        qrels_pairs=qrels_pairs,
        incomplete=incomplete,
        expected=dict(ledger.distributions) if config.scores == "expected" else None,
        budget=budget_info(config.max_cost, back.spent.total().cost_usd, capped),
        exit_code=_exit_code(state, rate, config.max_failure_rate),
    )
    earlier_wall = (job.manifest.get("extra") or {}).get("wall_time_s", 0.0)
    results = {
        "parse_fallbacks": summary.fallbacks,
        "failure_rate": round(rate, 6),
        "max_failure_rate": config.max_failure_rate,
        "tokens": {
            "prompt": summary.total_usage.prompt_tokens,
            "completion": summary.total_usage.completion_tokens,
            # parts of those the provider reported: prompt tokens read from its cache (priced as
            # cached input), completion tokens spent reasoning
            **(
                {"cached": summary.total_usage.cached_tokens}
                if summary.total_usage.cached_tokens is not None
                else {}
            ),
            **(
                {"reasoning": summary.total_usage.reasoning_tokens}
                if summary.total_usage.reasoning_tokens is not None
                else {}
            ),
        },
        "cost_usd": round(summary.total_usage.cost_usd, 6),
        "price_known": summary.price_known,
        # where the price came from (litellm's map and its version, or --prices) and its figures
        "price": job.prices.quote(job.model).as_dict(),
        "wall_time_s": round(earlier_wall + wall, 3),
        "qrels": qrels_info,
        "api_error_kinds": summary.api_error_kinds,
        **({"abort": summary.abort} if summary.abort is not None else {}),
        **({"budget": summary.budget} if summary.budget is not None else {}),
        "last_session": {
            "state": state,
            "new_records": summary.new_records,
            **spent,
            "wall_time_s": wall,
            "client": dict(client_stats),
        },
    }
    write_manifest(job, session, state, results, stats=(back.latest, back.every))
    if unwritable is not None:
        with writing(job.rundir.qrels_path):
            raise unwritable
    return summary


def _exit_code(state: JobState, rate: float, max_rate: float) -> int:
    if state == "capped":
        return EXIT_BUDGET
    return EXIT_OK if state == "finished" and rate <= max_rate else EXIT_FAILURE


def budget_info(cap: float | None, spent: float, capped: BudgetExhausted | None) -> dict[str, Any] | None:
    """The cost cap of a job as the summary and manifest hold it: the cap, what the run
    directory's records cost (all sessions), and, when the cap stopped the job, the estimated
    cost of the request that did not fit."""
    if cap is None:
        return None
    info: dict[str, Any] = {"max_cost_usd": cap, "spent_usd": round(spent, 6), "reached": capped is not None}
    if capped is not None:
        info["next_request_usd"] = round(capped.next_cost, 6)
    return info


def abort_info(abort: ProviderAbort) -> dict[str, Any]:
    """The provider's error that aborted a job, as the summary and manifest hold it."""
    return {
        "kind": abort.kind,
        "message": abort.message,
        "status_code": abort.status_code,
        "hint": abort.hint,
    }
