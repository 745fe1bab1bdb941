"""What the pools of runs over generated answers (``--answers``) share: ``--limit`` counts
passages, which means nothing there (``--topics-limit N`` keeps the first N answered topics, and
the answers to them); a pool's description says how many answers of how many systems it holds.

The judges of answers build their pools with these (`reljudge.judges.base.Judge.pool`): the
nugget judge the judged passages of the answered topics, citation support the cited passages.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from reljudge.errors import InputError
from reljudge.judges.base import PoolRequest


def refuse_item_limit(request: PoolRequest) -> None:
    """An `InputError` for ``--limit`` (it counts passages; answered topics are what is counted)."""
    if request.limit is not None:
        raise InputError("--limit counts passages; with --answers give --topics-limit N (answered topics)")


def first_topics(
    topics: Sequence[str], answers: Sequence[Any], topics_limit: int | None
) -> tuple[list[str], list[Any]]:
    """The topics kept (the first ``topics_limit``, all when None) and the answers kept: those to
    the kept topics when a limit is given, else every answer."""
    if topics_limit is None:
        return list(topics), list(answers)
    keep = list(topics)[:topics_limit]
    kept = set(keep)
    return keep, [a for a in answers if a.qid in kept]


def answers_described(answers: Sequence[Any]) -> str:
    """``N answers of S system(s)``."""
    return f"{len(answers)} answers of {len({a.system for a in answers})} system(s)"
