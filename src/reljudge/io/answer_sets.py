"""Several answer files read as one set of systems' answers (``judge run --answers A B ...``).

Each file is read strictly by `reljudge.io.answers.read_answers` (TREC RAG 2024 JSON Lines or the
``system<TAB>qid<TAB>answer`` TSV, ``file:line`` errors). Across files, a system answering the
same topic twice is an error at the second answer's ``file:line`` naming the first's, and a system
name with whitespace is an error (it is the document id of the records and of ``qrels.txt``).
Every command reading several answer files reads them here. Each answer keeps the file it came from and the
SHA-256 of its text, its provenance in the records made from it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from reljudge.errors import InputError
from reljudge.io.answers import Answer, answers_by_system, read_answers


@dataclass(frozen=True)
class SourcedAnswer:
    """One system's answer to one topic, with the file it was read from."""

    answer: Answer
    file: str

    @property
    def system(self) -> str:
        return self.answer.system

    @property
    def qid(self) -> str:
        return self.answer.qid

    @property
    def text(self) -> str:
        return self.answer.text

    @property
    def sha256(self) -> str:
        """The SHA-256 of the answer text (as judged: sentences joined by single spaces)."""
        return answer_sha256(self.answer.text)

    @property
    def citations_sha256(self) -> str:
        """The SHA-256 of what a citation judgment depends on: each sentence with the references
        it cites, and the references (another reference or citation is another answer)."""
        answer = self.answer
        cited = [[s.text, list(s.citations)] for s in answer.sentences]
        payload = json.dumps([cited, list(answer.references)], ensure_ascii=False, separators=(",", ":"))
        return answer_sha256(payload)


def answer_sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def read_answer_files(paths: Sequence[str | Path]) -> list[SourcedAnswer]:
    """The answers of every file, in file order; a (system, topic) answered twice -- in one file
    or in two -- is bad input (``FILE:LINE: what is wrong``, naming where it was answered first).
    The one reader of answer files for every command (``judge run``, ``judge answers``, ``judge
    evaluate --answers``)."""
    if not paths:
        raise InputError("no answer file given")
    found: list[SourcedAnswer] = []
    where: dict[tuple[str, str], str] = {}
    for path in paths:
        for answer in read_answers(path):
            if any(c.isspace() for c in answer.system):  # it is the document id of the records
                raise InputError(
                    f"system name {answer.system!r} has whitespace (it names the answers)", path, answer.line
                )
            key = (answer.system, answer.qid)
            if key in where:
                raise InputError(
                    f"system {answer.system!r} answers topic {answer.qid!r} already in {where[key]}",
                    path,
                    answer.line,
                )
            where[key] = f"{path}:{answer.line}" if answer.line is not None else str(path)
            found.append(SourcedAnswer(answer, str(path)))
    return found


def read_answers_by_system(paths: Sequence[str | Path]) -> dict[str, dict[str, Answer]]:
    """``{system: {qid: answer}}`` of several answer files, read by `read_answer_files`."""
    return answers_by_system(a.answer for a in read_answer_files(paths))
