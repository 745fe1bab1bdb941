"""``judge leaderboard`` from paths: the leaderboards read by `files.read_leaderboard` and
compared by `meta.meta_evaluate`; qrels read by `reljudge.io.trec.read_qrels` and compared by
`qrels_agreement.qrels_agreement`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from reljudge.analyses.leaderboard.meta import MetaReport, meta_evaluate
from reljudge.analyses.leaderboard.qrels_agreement import qrels_agreement


def leaderboard_paths(
    judge: str | Path,
    truth: str | Path,
    *,
    judge_format: str = "auto",
    truth_format: str = "auto",
    **options: Any,
) -> MetaReport:
    from reljudge.analyses.leaderboard.files import read_leaderboard

    return meta_evaluate(
        read_leaderboard(judge, judge_format), read_leaderboard(truth, truth_format), **options
    )


def qrels_paths(
    judge: str | Path, truth: str | Path, *, judge_level: float, truth_level: float
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    from reljudge.io.trec import read_qrels

    return qrels_agreement(
        read_qrels(judge), read_qrels(truth), judge_level=judge_level, truth_level=truth_level
    )
