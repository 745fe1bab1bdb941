"""The answers of a generation run (``judge generate``) as the ``system<TAB>qid<TAB>answer`` TSV.

The run's records are the truth: `write_run_answers` reads the latest record of each key from
``judgments.jsonl``, asks the run's judge for the answers they hold
(`reljudge.judges.base.Judge.generated_answers`: the ``ok`` answer of each topic) and writes them
to ``answers.tsv`` in the run directory (atomically; topics sorted by id, numeric ids by value, so
the file does not depend on the order the answers came back in: a batch returns them in any order),
and optionally to a second file. A topic whose answer failed (or is not yet generated)
has no line.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from reljudge.errors import InputError
from reljudge.io.answers import write_answers_tsv
from reljudge.io.rundir import RunDir

#: the answers file of a generation run directory
ANSWERS_FILE = "answers.tsv"


def run_answers(rundir: str | Path, method: str) -> dict[str, str]:
    """``{qid: answer}`` of the answers a run of the judge ``method`` generated (latest record per
    key)."""
    from reljudge.judges.registry import registered

    run = RunDir(rundir)
    if not run.exists():
        raise InputError("not a run directory (no judgments.jsonl)", rundir)
    judge = registered().get(method)
    answers = judge.generated_answers(run.judgments(latest=True)) if judge is not None else None
    if answers is None:
        raise InputError(f"--method {method} generates no answers")
    return {qid: answers[qid] for qid in sorted(answers, key=_topic_order)}


def _topic_order(qid: str) -> tuple[int, int, str]:
    """Numeric topic ids by value, before the others in text order."""
    return (0, int(qid), "") if qid.isdigit() else (1, 0, qid)


def write_run_answers(
    rundir: str | Path, method: str, system: str | None = None, also: str | Path | None = None
) -> dict[str, Any]:
    """Write the answers of the run of ``method`` to ``RUN/answers.tsv`` (and to ``also``);
    ``system`` names them (default: the run directory's name, spaces replaced). Returns the count,
    path and name."""
    rundir = Path(rundir)
    name = system or rundir.resolve().name
    if not name or any(c.isspace() for c in name):
        raise InputError(f"--name {name!r}: a system name must be non-empty without whitespace")
    answers = {name: run_answers(rundir, method)}
    count = write_answers_tsv(answers, rundir / ANSWERS_FILE)
    if also is not None:
        write_answers_tsv(answers, also)
    return {"answers": count, "path": str(rundir / ANSWERS_FILE), "system": name}
