"""The citation scores of generated answers as files: per topic and per system, CSV and JSON.

- ``answer-citations-topics.csv``: ``system,qid,sentences,cited_sentences,citations,judged,unjudged,
  precision,recall,f1,cited_share`` (an undefined precision -- no judged citation -- is an empty cell);
- ``answer-citations-systems.csv``: ``system,topics,topics_without_judged``, the summed counts and
  the four means;
- ``answer-citations.json``: ``{"topics": [...], "systems": [...], "incomplete": [...]}`` (undefined
  scores are ``null``).

Each file is written atomically (`reljudge.io.score_files`; `reljudge.judges.citations.scores` says
what each score is).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from reljudge.io.score_files import read_score_json, write_score_files

COUNTS = ("sentences", "cited_sentences", "citations", "judged", "unjudged")
SCORES = ("precision", "recall", "f1", "cited_share")
TOPICS_CSV = "answer-citations-topics.csv"
SYSTEMS_CSV = "answer-citations-systems.csv"
SCORES_JSON = "answer-citations.json"
TOPIC_COLUMNS = ("system", "qid", *COUNTS, *SCORES)
SYSTEM_COLUMNS = ("system", "topics", "topics_without_judged", *COUNTS, *SCORES)


def write_citation_scores(
    directory: str | Path,
    topics: Sequence[Mapping[str, Any]],
    systems: Sequence[Mapping[str, Any]],
    *,
    incomplete: Sequence[tuple[str, str]] = (),
) -> dict[str, str]:
    """Write the three files into ``directory``; returns their paths by kind."""
    return write_score_files(
        directory,
        {"topics": TOPICS_CSV, "systems": SYSTEMS_CSV, "json": SCORES_JSON},
        {"topics": (TOPIC_COLUMNS, topics), "systems": (SYSTEM_COLUMNS, systems)},
        incomplete,
    )


def read_citation_scores(path: str | Path) -> dict[str, Any]:
    """An ``answer-citations.json`` file (or the directory holding it) as written."""
    return read_score_json(path, SCORES_JSON)
