"""The scores of the answers a run judged (``judge run --answers ...``), by the run's method.

``--method nuggets``: the nugget scores (`reljudge.run.answer_nuggets`). ``--method
citation-support``: after the run, its records (the latest of each key in ``judgments.jsonl``) are
scored per (system, topic) and per system (`reljudge.judges.citations.scores.citation_table`) and
written into the run directory (`reljudge.io.citation_scores`): ``answer-citations-topics.csv``,
``answer-citations-systems.csv`` and ``answer-citations.json``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from reljudge.errors import InputError
from reljudge.io.citation_scores import write_citation_scores
from reljudge.io.rundir import RunDir


def score_run_citations(rundir: str | Path) -> dict[str, Any]:
    """Score the citations of a run directory and write the three files; returns
    ``{"table": CitationTable, "files": {kind: path}, "text": the table as text}``."""
    from reljudge.judges.citations.scores import citation_table, render_citation_table

    run = RunDir(rundir)
    if not run.exists():
        raise InputError("not a run directory (no judgments.jsonl)", rundir)
    table = citation_table(run.judgments(latest=True))
    files = write_citation_scores(run.path, table.topics, table.systems, incomplete=table.incomplete)
    return {"table": table, "files": files, "text": render_citation_table(table)}


def score_run(method: str, rundir: str | Path) -> dict[str, Any]:
    """The answer scores of a run over answers, by its method (see the module docstring)."""
    if method == "citation-support":
        return score_run_citations(rundir)
    from reljudge.judges.nuggets.answers import render_table
    from reljudge.run.answer_nuggets import score_run_answers

    scored = score_run_answers(rundir)
    return {**scored, "text": render_table(scored["table"])}
