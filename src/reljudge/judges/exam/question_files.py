"""EXAM question files: ``<qid>_<n><TAB>question`` per line (a dataset's ``exam_questions*.tsv``,
or a ``--question-bank`` file), read for the judge (`reljudge.judges.exam.judge.read_question_bank`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from reljudge.errors import InputError
from reljudge.io.trec import read_topics


def read_exam_questions(path: str | Path) -> dict[str, dict[str, str]]:
    """EXAM question files: ``<qid>_<n><TAB>question`` -> ``{qid: {"<qid>_<n>": question}}``."""
    path = Path(path)
    result: dict[str, dict[str, str]] = {}
    for item_id, question in read_topics(path).items():
        qid, sep, _ = item_id.rpartition("_")
        if not sep or not qid:
            raise InputError(f"question id {item_id!r} is not '<qid>_<n>'", path, _line_of(path, item_id))
        result.setdefault(qid, {})[item_id] = question
    return result


def dataset_questions(dataset: Any) -> dict[str, dict[str, str]]:
    """``{qid: {item_id: question}}`` from a dataset's ``exam_questions*.tsv`` (a
    `reljudge.datasets.Dataset`: its ``paths["exam_questions"]``)."""
    path = dataset.paths.get("exam_questions")
    if path is None:
        raise InputError(f"dataset {dataset.name!r} has no EXAM questions file")
    return read_exam_questions(path)


def _line_of(path: Path, item_id: str) -> int | None:
    """The line of ``path`` whose first field is ``item_id`` (for an error message)."""
    from reljudge.io.lines import read_lines

    for number, line in read_lines(path):
        fields = line.split("\t", 1) if "\t" in line else line.split(None, 1)
        if fields and fields[0].strip() == item_id:
            return number
    return None
