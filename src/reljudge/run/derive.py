"""A job's document labels (``qrels.txt``): the judge's primary score set of its records."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from reljudge.errors import InputError

logger = logging.getLogger("reljudge.io.export")  # the logger of the same warning in `to_qrels`

if TYPE_CHECKING:
    from reljudge.aggregation.streamed import StreamedLabels
    from reljudge.io.export import FloatPolicy
    from reljudge.judges.base import Judge
    from reljudge.records import Judgment


def derive_qrels(
    judge: Judge,
    records: Iterable[Judgment],
    policy: FloatPolicy,
    *,
    resources: Mapping[str, Any] | None = None,
) -> tuple[dict, dict[str, Any]]:
    """Document labels of a job as qrels (float policy applied), and what aggregation left out.

    The judge scores its records (`Judge.score_sets`: its label records and the stage records
    they rest on, with the resources the run gave it); its primary set (`Judge.primary_set`)
    becomes the qrels. A failed record is never a label; it is counted in the exclusions.

    A document whose score would rest on an incomplete set of records -- as an interrupted run
    leaves them (an EXAM passage not yet graded on every question, a passage not yet assessed
    against every selected nugget) -- is left out until the job completes it; ``incomplete`` in
    the returned info counts them (documents).
    """
    from reljudge.aggregation.exclusions import Exclusions
    from reljudge.io.export import to_qrels

    try:
        sets = judge.score_sets(records, resources)
    except ValueError as err:
        raise InputError(f"cannot derive qrels: {err}") from None
    result = sets.get(judge.primary_set)
    if result is None:  # no label record yet
        return {}, {**Exclusions().as_dict(), "incomplete": 0}
    info: dict[str, Any] = {}
    if "assignments_without_scored_nugget" in result.details:
        info["assignments_without_scored_nugget"] = result.details["assignments_without_scored_nugget"]
    info.update(result.exclusions.as_dict())
    incomplete = set(result.incomplete)
    scores = result.scores
    if incomplete:
        scores = {
            q: {d: v for d, v in docs.items() if (q, d) not in incomplete} for q, docs in scores.items()
        }
        scores = {q: docs for q, docs in scores.items() if docs}
    info["incomplete"] = len(incomplete)
    return to_qrels(scores, float_policy=policy), info


def streamed_labels(
    judge: Judge, pool: Mapping[str, Sequence[str]], resources: Mapping[str, Any] | None = None
) -> StreamedLabels | None:
    """A `StreamedLabels` for the judge's records when its qrels can be derived record by record
    -- a pointwise judge that scores its labels by their shape (no stages, no scorer of its
    own) -- else None (the records are then kept and scored by `derive_qrels`)."""
    from reljudge.aggregation.streamed import StreamedLabels
    from reljudge.judges.base import Judge as BaseJudge

    cls = type(judge)
    if not judge.pointwise or judge.stage_methods or cls.score_sets is not BaseJudge.score_sets:
        return None
    if cls.score_records.__func__ is not BaseJudge.score_records.__func__:  # type: ignore[attr-defined]
        return None
    options = {**judge.score_options(), **dict(resources or {})}
    on_failure = options.get("on_failure", "exclude")
    return StreamedLabels(pool, on_failure=on_failure, methods=[judge.primary_set])


def derive_streamed(
    labels: StreamedLabels, policy: FloatPolicy, error: str | None = None
) -> tuple[Iterator[tuple[str, dict]], dict[str, Any]]:
    """The qrels of labels gathered record by record (`streamed_labels`), topic by topic (float
    policy applied), and what was left out -- the outcome of `derive_qrels` without holding the
    records. ``error``: why the labels cannot become qrels (raised as `InputError`)."""
    from reljudge.io.export import FLOAT_POLICIES, apply_float_policy

    if error is not None:
        raise InputError(f"cannot derive qrels: {error}")
    if policy not in FLOAT_POLICIES:
        raise InputError(f"unknown float policy {policy!r} (choose one of {', '.join(FLOAT_POLICIES)})")
    info: dict[str, Any] = {**labels.finish().as_dict(), "incomplete": 0}

    def topics() -> Iterator[tuple[str, dict]]:
        fractional = 0
        for qid, docs in labels.topics():
            grades = {d: apply_float_policy(g, policy) for d, g in docs.items()}
            if policy == "keep":
                fractional += sum(1 for g in grades.values() if isinstance(g, float))
            yield qid, grades
        if fractional:
            logger.warning(
                "%d label(s) are not integers and are kept as floats: trec_eval, ranx and "
                "ir_measures truncate them to int (use --float round or scale for those tools)",
                fractional,
            )

    return topics(), info
