"""The answers of a generation run (``judge generate``) as the ``system<TAB>qid<TAB>answer`` TSV.

The run's records are the truth: `write_run_answers` reads the latest ``answer`` record of each
topic from ``judgments.jsonl`` and writes the answers of the ``ok`` ones to ``answers.tsv`` in the
run directory (atomically; topics in the order their records were written), and optionally to a
second file. A topic whose answer failed (or is not yet generated) has no line.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from reljudge.errors import InputError
from reljudge.io.answers import write_answers_tsv
from reljudge.io.rundir import RunDir
from reljudge.judges.generate import answers_of

#: the answers file of a generation run directory
ANSWERS_FILE = "answers.tsv"


def run_answers(rundir: str | Path) -> dict[str, str]:
    """``{qid: answer}`` of the ok answer records of a run directory (latest record per topic,
    `reljudge.judges.generate.answers_of`)."""
    run = RunDir(rundir)
    if not run.exists():
        raise InputError("not a run directory (no judgments.jsonl)", rundir)
    return answers_of(run.judgments(latest=True))


def write_run_answers(
    rundir: str | Path, system: str | None = None, also: str | Path | None = None
) -> dict[str, Any]:
    """Write the run's answers to ``RUN/answers.tsv`` (and to ``also``); ``system`` names them
    (default: the run directory's name, spaces replaced). Returns the count, path and name."""
    rundir = Path(rundir)
    name = system or rundir.resolve().name
    if not name or any(c.isspace() for c in name):
        raise InputError(f"--name {name!r}: a system name must be non-empty without whitespace")
    answers = {name: run_answers(rundir)}
    count = write_answers_tsv(answers, rundir / ANSWERS_FILE)
    if also is not None:
        write_answers_tsv(answers, also)
    return {"answers": count, "path": str(rundir / ANSWERS_FILE), "system": name}
