"""The scores of the answers a run judged (``judge run --answers ...``), by the run's method.

``--method nuggets``: the nugget scores (`reljudge.run.answer_nuggets`). ``--method
citation-support``: after the run, its records (the latest of each key in ``judgments.jsonl``) are
scored per (system, topic) and per system (`reljudge.judges.citations.scores.citation_table`) and
written into the run directory (`reljudge.io.citation_scores`): ``answer-citations-topics.csv``,
``answer-citations-systems.csv`` and ``answer-citations.json``.

Given the run's answer files, only the records made from the answers as those files hold them count
(`answer_versions`: the text for nuggets; text, citations and references for citation support).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from reljudge.errors import InputError
from reljudge.io.answer_sets import read_answer_files
from reljudge.io.citation_scores import write_citation_scores
from reljudge.io.rundir import RunDir
from reljudge.judges.answer_tables import Versions


def answer_versions(method: str, answer_files: Sequence[str | Path]) -> dict[tuple[str, str], str]:
    """``{(system, qid): fingerprint}`` of the answers of ``answer_files`` as ``method`` records it."""
    citations = method == "citation-support"
    return {
        (a.system, a.qid): a.citations_sha256 if citations else a.sha256
        for a in read_answer_files(answer_files)
    }


def score_run_citations(rundir: str | Path, current: Versions | None = None) -> dict[str, Any]:
    """Score the citations of a run directory and write the three files; returns
    ``{"table": CitationTable, "files": {kind: path}, "text": the table as text}``."""
    from reljudge.judges.citations.scores import citation_table, render_citation_table

    run = RunDir(rundir)
    if not run.exists():
        raise InputError("not a run directory (no judgments.jsonl)", rundir)
    table = citation_table(run.judgments(latest=True), current=current)
    files = write_citation_scores(run.path, table.topics, table.systems, incomplete=table.incomplete)
    return {"table": table, "files": files, "text": render_citation_table(table)}


def score_run(
    method: str, rundir: str | Path, answer_files: Sequence[str | Path] | None = None
) -> dict[str, Any]:
    """The answer scores of a run over answers, by its method (see the module docstring)."""
    current = answer_versions(method, answer_files) if answer_files else None
    if method == "citation-support":
        return score_run_citations(rundir, current)
    from reljudge.judges.nuggets.answers import render_table
    from reljudge.run.answer_nuggets import score_run_answers

    scored = score_run_answers(rundir, current=current)
    return {**scored, "text": render_table(scored["table"])}
