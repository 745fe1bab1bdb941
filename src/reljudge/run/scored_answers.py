"""The scores of the answers a run judged (``judge run --method M --answers ...``), as its judge
computes them.

After a finished run over answers, the run's judge scores the run's records (the latest of each key
in ``judgments.jsonl``) with the answers as the run reads them
(`reljudge.judges.base.Judge.answer_scores`), and the scores are written into the run directory as
the files the judge declares (`reljudge.judges.base.Judge.answer_score_files`, written by
`reljudge.io.score_files`): a per-topic CSV, a per-system CSV and a JSON of both. Only the records
made from the answers as the run's answer files hold them count.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from reljudge.errors import InputError
from reljudge.run.config import RunConfig

if TYPE_CHECKING:
    from reljudge.judges.base import AnswerScores


@dataclass
class ScoredAnswers:
    """The answer scores of a run and the files they were written to (by kind: ``topics``,
    ``systems``, ``json``)."""

    scores: AnswerScores
    files: dict[str, str]


def score_answers(config: RunConfig, rundir: str | Path) -> ScoredAnswers | None:
    """Score the answers of the run directory of ``config``'s job and write the judge's files;
    None when its judge computes no answer scores."""
    from reljudge.io.rundir import RunDir
    from reljudge.judges.registry import registered
    from reljudge.run.inputs import load_resources

    judge = registered().get(config.method)
    files = judge.answer_score_files if judge is not None else None
    if judge is None or files is None:
        return None
    run = RunDir(rundir)
    if not run.exists():
        raise InputError("not a run directory (no judgments.jsonl)", rundir)
    resources = load_resources(config, judge)  # the answers, read as the judge reads them
    try:
        scores = judge.answer_scores(run.judgments(latest=True), resources)
    except ValueError as err:
        raise InputError(f"cannot score the answers: {err}", run.judgments_path) from None
    if scores is None:
        return None
    written = files.write(
        run.path, scores.topics, scores.systems, incomplete=scores.incomplete, extra=scores.extra
    )
    return ScoredAnswers(scores, written)
