"""The nugget scores of the answers a run judged (``judge run --method nuggets --answers ...``).

After the run, its records (the latest of each key in ``judgments.jsonl``) are scored per
(system, topic) and per system (`reljudge.judges.nuggets.answers.answer_table`) and written
into the run directory (`reljudge.io.answer_nugget_scores`): ``answer-nuggets-topics.csv``,
``answer-nuggets-systems.csv`` and ``answer-nuggets.json``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from reljudge.errors import InputError
from reljudge.io.answer_nugget_scores import write_answer_scores
from reljudge.io.rundir import RunDir
from reljudge.judges.answer_tables import Versions


def score_run_answers(
    rundir: str | Path, *, empty_class: str = "undefined", current: Versions | None = None
) -> dict[str, Any]:
    """Score the answers of a run directory and write the three files; returns
    ``{"table": AnswerTable, "files": {kind: path}}``. ``current``: the ``answer_sha256`` of the
    answers the run was given (`reljudge.run.answer_citations.answer_versions`): their
    assignments count, whatever was assigned to other versions of them."""
    from reljudge.judges.nuggets.answers import answer_table

    run = RunDir(rundir)
    if not run.exists():
        raise InputError("not a run directory (no judgments.jsonl)", rundir)
    try:
        table = answer_table(run.judgments(latest=True), empty_class=empty_class, current=current)  # type: ignore[arg-type]
    except ValueError as err:
        raise InputError(f"cannot score the answers: {err}", run.judgments_path) from None
    files = write_answer_scores(
        run.path,
        table.topics,
        table.systems,
        empty_class=table.empty_class,
        incomplete=table.incomplete,
    )
    return {"table": table, "files": files}
