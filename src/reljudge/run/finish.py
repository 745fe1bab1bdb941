"""The end of a job (and its start): ``qrels.txt`` derived from the records, ``manifest.json``,
and the `RunSummary` -- from what the run directory holds now.

One path for every judge: the judge's scorer (`reljudge.judges.base.Judge.scorer`, given the
job's pool as the order of the documents) gets the latest record of each key, label records
without their payload (`reljudge.io.judgments.BareRecord`), and its primary set becomes
``qrels.txt``, written topic by topic through the float policy (`job_qrels`,
`reljudge.io.trec.qrels_topics`). A session that started on an empty file handed each record to
the scorer as it wrote it (`reljudge.run.session.Session.scorer`), so nothing is read back; a
resumed one streams the file's latest records into a new scorer (`read_back`), counting them for
the manifest as it goes. Nothing holds the records: what the judge's scorer keeps is all that
grows (for a pointwise judge, one slot per pooled document).
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from reljudge.errors import EXIT_BUDGET, EXIT_FAILURE, EXIT_OK, InputError
from reljudge.io.rundir import RETRY_FAILED_STATUSES
from reljudge.records import STATUSES, Key, utc_now
from reljudge.run.config import JobState
from reljudge.run.errors import writing
from reljudge.run.identity import job_identity
from reljudge.run.prepare import PreparedJob, label_methods
from reljudge.run.session import ReadBack, Session
from reljudge.run.summary import RunSummary, failure_rate

if TYPE_CHECKING:
    from pathlib import Path

    from reljudge.io.rundir import RecordStats
    from reljudge.judges.base import RecordScorer
    from reljudge.llm.budget import BudgetExhausted
    from reljudge.llm.types import ProviderAbort


class NoQrels(InputError):
    """Why the records give no qrels (contradicting labels, an unknown float policy): the run
    keeps its records and its manifest says so."""


def read_back(job: PreparedJob, session: Session) -> tuple[ReadBack, Iterator[Any], RecordScorer | None]:
    """The counts of judgments.jsonl, the latest records the judge's scorer still needs, streamed
    in the order their keys first appear (label records as `BareRecord`s, stage records in full),
    and the scorer that already holds the others (None: a new one, `job_scorer`, gets them all).
    The counts are complete once the records are read to the end.

    When the session started on an empty file and wrote no key twice, the counts were kept as the
    records were written (`ReadBack.tally`), every record is a latest one and the scorer already
    has them all (`Session.scorer`): nothing is read. Otherwise which records are replaced by a
    later one of the same key is known from the start-of-session index plus the keys this
    session wrote (when it wrote one key twice, no built-in judge does, the file is indexed
    again); a replaced key's latest record is then found in a first pass that counts, and read
    again in its key's first place."""
    from reljudge.io.judgments import scan_bare_records

    hashes = sorted(session.key_hashes)
    twice = any(a == b for a, b in zip(hashes, hashes[1:], strict=False))
    del hashes
    if session.tally is not None and not twice and session.scorer is not None:
        return session.tally, iter(()), session.scorer
    session.scorer = None  # not the latest records only (a key written twice), or not all of them
    bare = frozenset(label_methods(job.judge))
    path = job.rundir.judgments_path
    if session.tally is not None and not twice:
        return session.tally, (record for _, record in scan_bare_records(path, bare)), None
    superseded = job.rundir.index().superseded if twice else session.superseded
    back = ReadBack.empty()
    if not path.exists():
        return back, iter(()), None
    return back, _latest(path, superseded, bare, back), None


def job_scorer(job: PreparedJob) -> RecordScorer:
    """The judge's scorer of a job's records, with the resources the run gave it and the pool as
    the documents' order (ValueError: the judge refuses its scoring options)."""
    return job.judge.scorer({**job.inputs.resources, "order": job.pool.docs})


def _latest(path: Path, superseded: set[int], bare: frozenset[str], back: ReadBack) -> Iterator[Any]:
    from reljudge.io.judgments import BareRecord, read_bare_record_at, scan_bare_records, scan_judgments

    strings: dict[str, str] = {}
    if not superseded:  # one pass: count and hand on
        for _, record in scan_judgments(path):
            back.count(record, latest=True)
            yield BareRecord.of(record, strings) if record.method in bare else record
        return
    replaced: set[Key] = set()
    latest_at: dict[Key, int] = {}  # replaced key -> byte offset of its latest record
    for ordinal, (offset, record) in enumerate(scan_judgments(path)):
        back.count(record, latest=ordinal not in superseded)
        if ordinal in superseded:
            replaced.add(record.key)
        elif record.key in replaced:
            latest_at[record.key] = offset
    del replaced
    for _, item in scan_bare_records(path, bare, strings):
        key: Key = item.key
        at = latest_at.get(key)
        if at is None:
            yield item
        elif at >= 0:  # the key's first place: its latest record
            yield read_bare_record_at(path, at, bare, strings)
            latest_at[key] = -1


def job_qrels(
    job: PreparedJob, records: Iterator[Any], scorer: RecordScorer | None
) -> tuple[Iterator[tuple[str, dict]], dict[str, Any]]:
    """A job's document labels, topic by topic (float policy applied), and what aggregation left
    out; `NoQrels` when the records give none.

    The judge's ``scorer`` (a new one, `job_scorer`, when None) gets ``records`` (none when it
    was fed as the records were written) and scores them (its label records and the stage records they rest on, with the resources
    the run gave it, and the pool as the documents' order); its primary set
    (`Judge.primary_set`) becomes the qrels. A failed record is never a label; it is counted in
    the exclusions. A document whose score would rest on an incomplete set of records -- as an
    interrupted run leaves them (an EXAM passage not yet graded on every question, a passage not
    yet assessed against every selected nugget) -- is left out until the job completes it;
    ``incomplete`` in the returned info counts them (documents).
    """
    from reljudge.aggregation.exclusions import Exclusions
    from reljudge.io.trec import FLOAT_POLICIES, qrels_topics

    policy = job.config.float_policy
    if policy not in FLOAT_POLICIES:
        raise NoQrels(f"unknown float policy {policy!r} (choose one of {', '.join(FLOAT_POLICIES)})")
    try:
        if scorer is None:
            scorer = job_scorer(job)
        for record in records:
            scorer.add(record)
        sets = scorer.finish()
    except ValueError as err:
        raise NoQrels(f"cannot derive qrels: {err}") from None
    result = sets.get(job.judge.primary_set)
    if result is None:  # no label record yet
        return iter(()), {**Exclusions().as_dict(), "incomplete": 0}
    info: dict[str, Any] = {}
    if "assignments_without_scored_nugget" in result.details:
        info["assignments_without_scored_nugget"] = result.details["assignments_without_scored_nugget"]
    info.update(result.exclusions.as_dict())
    if "preferences" in result.details:  # grid preferences (grid-pairwise): their own file
        info["preferences"] = result.details["preferences"]
    incomplete = set(result.incomplete)
    info["incomplete"] = len(incomplete)
    return qrels_topics(result.scores, policy, leave_out=incomplete), info


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
        #: when a directory of failures only was pointed at another server (`reljudge.run.identity`)
        **({"repointed": earlier["repointed"]} if earlier.get("repointed") else {}),
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
    """Derive qrels and write the manifest from what the run directory holds now (judgments.jsonl
    streamed once, see `read_back`). ``capped``: the cost cap stopped the job
    (``state="capped"``)."""
    from reljudge.io.trec import write_qrels
    from reljudge.llm.pricing import price_known

    config = job.config
    back, records, scorer = read_back(job, session)
    qrels_info: dict[str, Any] = {"file": job.rundir.qrels_path.name, "float_policy": config.float_policy}
    qrels_pairs = incomplete = 0
    unwritable: OSError | None = None
    try:
        try:
            topics, exclusions = job_qrels(job, records, scorer)
            qrels_pairs = write_qrels(topics, job.rundir.qrels_path)
        finally:
            for _ in records:  # the rest of the file, for the counts
                pass
        incomplete = exclusions.pop("incomplete", 0)
        preferences = exclusions.pop("preferences", None)
        if preferences is not None:
            from reljudge.io.grid_preferences import PREFERENCES_FILE, write_preferences

            written = write_preferences(preferences, job.rundir.path / PREFERENCES_FILE)
            qrels_info["preferences"] = {"file": PREFERENCES_FILE, "pairs": written}
        qrels_info.update(pairs=qrels_pairs, incomplete=incomplete, exclusions=exclusions)
    except NoQrels as err:  # e.g. contradicting labels: keep the records, report the problem
        qrels_info["error"] = str(err)
    except OSError as err:  # e.g. a full disk: the manifest says so (if it can be written)
        qrels_info["error"] = f"cannot write: {err.strerror or err}"
        unwritable = err
    statuses = back.latest.statuses
    ledger = session.ledger
    usage = ledger.usage.total()
    rate = failure_rate(statuses)
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
