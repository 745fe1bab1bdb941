"""A job's document labels (``qrels.txt``): the judge's primary score set of its records."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from reljudge.errors import InputError

if TYPE_CHECKING:
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
