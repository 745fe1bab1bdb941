"""Generated answers (RAG): the TREC RAG 2024 answer format and a plain TSV.

**TREC RAG 2024** (JSON Lines, one file per run, one line per topic), as documented and checked
by castorini/ragnarok: ``docs/rag24.md`` ("Augmented Generation", the example output line) and
``src/ragnarok/scripts/rag24_validation.py`` (``check_rag24_run``, the track's validator), read at
commit 7233fa7 of https://github.com/castorini/ragnarok::

    {"run_id": "bm25_rank-zephyr-rho_gpt-4o", "topic_id": 23287, "topic": "are landlords ...",
     "references": ["msmarco_v2.1_doc_45_546308869#11_963663453", ...],
     "response_length": 201,
     "answer": [{"text": "Landlords can be held liable ...", "citations": [1, 0]}, ...]}

Every field is required (as in the validator). ``run_id`` is the same on every line; a topic
answered twice is an error (the validator's "Too many responses"); ``topic_id`` may be a number
or a string (the example writes a number; it is kept as text); a document listed twice in
``references`` is an error (as in the validator); each citation is a 0-based index into
``references`` (out of range is an error, as in the validator). ``response_length`` is the
word count of the answer (whitespace tokens of each NFKC-normalised, stripped sentence): a
declared count that differs is only a warning in the validator, so it is kept as read
(`Answer.declared_length`) and `write_rag24` writes the count recomputed. The track's own limits
(20 references, 400 words) are the submission rules, not checked here.

**TSV**: ``system<TAB>qid<TAB>answer`` per line, no header; the answer is the rest of the line
(it may hold tabs). `write_answers_tsv` writes each answer's whitespace runs (newlines, tabs) as
one space, so an answer is always one line; reading it back gives that text.

Both readers are strict about content (`InputError` naming ``file:line``: bad JSON, a missing or
mistyped field, an empty answer, a system answering a topic twice) and bounded: a line longer than
`MAX_LINE_BYTES`, an answer longer than `MAX_ANSWER_CHARS`, more than `MAX_SENTENCES` sentences or
`MAX_REFERENCES` references is an error, found without reading the line whole.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from reljudge.errors import InputError, shown
from reljudge.io.atomic import atomic_write
from reljudge.io.lines import is_jsonl_name, loads_json, read_lines

#: the longest line read (either format), line end included
MAX_LINE_BYTES = 1_000_000
#: the longest answer text, in characters (sentences joined by spaces)
MAX_ANSWER_CHARS = 100_000
#: the most sentences in one TREC RAG answer
MAX_SENTENCES = 2_000
#: the most references of one TREC RAG answer
MAX_REFERENCES = 1_000
#: the fields every TREC RAG 2024 line has (ragnarok's validator)
RAG24_FIELDS: tuple[str, ...] = ("run_id", "topic_id", "topic", "references", "response_length", "answer")

_SPACES = re.compile(r"\s+")


@dataclass(frozen=True)
class Sentence:
    """One sentence of an answer and the 0-based indices of the references it cites."""

    text: str
    citations: tuple[int, ...] = ()


@dataclass(frozen=True)
class Answer:
    """One system's answer to one topic."""

    system: str
    qid: str
    sentences: tuple[Sentence, ...]
    topic: str = ""
    references: tuple[str, ...] = ()
    #: ``response_length`` as the file declared it (None when the answer came from a TSV)
    declared_length: int | None = field(default=None, compare=False)
    #: the line of its file it was read from (None when not read from a file)
    line: int | None = field(default=None, compare=False)

    @property
    def text(self) -> str:
        """The answer as one text: its stripped sentences joined by single spaces."""
        return " ".join(s.text.strip() for s in self.sentences if s.text.strip())

    @property
    def length(self) -> int:
        """The TREC RAG 2024 ``response_length``: whitespace tokens of each NFKC-normalised sentence."""
        return sum(len(unicodedata.normalize("NFKC", s.text.strip()).split()) for s in self.sentences)


def answers_by_system(answers: Iterable[Answer]) -> dict[str, dict[str, Answer]]:
    """``{system: {qid: answer}}`` in the order given (a (system, qid) given twice: the last; read
    several files with `reljudge.io.answer_sets.read_answer_files`, which refuses that)."""
    out: dict[str, dict[str, Answer]] = {}
    for answer in answers:
        out.setdefault(answer.system, {})[answer.qid] = answer
    return out


# ---------------------------------------------------------------- TREC RAG 2024


def read_rag24(path: str | Path) -> list[Answer]:
    """Read a TREC RAG 2024 answer file (see the module docstring), answers in file order."""
    path = Path(path)
    answers: list[Answer] = []
    seen: set[str] = set()
    run_id: str | None = None
    for number, line in read_lines(path, max_line_bytes=MAX_LINE_BYTES):
        if not line.strip():
            continue
        answer = replace(_rag24_line(line, path, number), line=number)
        if run_id is None:
            run_id = answer.system
        elif answer.system != run_id:
            raise InputError(
                f"run_id {shown(answer.system)} differs from {shown(run_id)} of the lines before "
                "(one run per file)",
                path,
                number,
            )
        if answer.qid in seen:
            raise InputError(f"topic {shown(answer.qid)} is answered twice", path, number)
        seen.add(answer.qid)
        answers.append(answer)
    if not answers:
        raise InputError("no answers in file", path)
    return answers


def _rag24_line(line: str, path: Path, number: int) -> Answer:
    def fail(what: str) -> InputError:
        return InputError(what, path, number)

    obj = loads_json(line, path, number)
    if not isinstance(obj, dict):
        raise fail(f"expected a JSON object, found {type(obj).__name__}")
    for name in RAG24_FIELDS:
        if name not in obj:
            raise fail(f"missing field {name!r}")
    run_id = _text(obj["run_id"], "run_id", fail)
    qid = _topic_id(obj["topic_id"], fail)
    topic = obj["topic"]
    if not isinstance(topic, str):
        raise fail(f"'topic' must be a string, found {type(topic).__name__}")
    references = _references(obj["references"], fail)
    declared = obj["response_length"]
    if not isinstance(declared, int) or isinstance(declared, bool) or declared < 0:
        raise fail(f"'response_length' must be a non-negative integer, found {shown(declared)}")
    sentences = _sentences(obj["answer"], len(references), fail)
    answer = Answer(run_id, qid, sentences, topic, references, declared)
    if not answer.text:
        raise fail("the answer has no text")
    return answer


def _text(value: Any, name: str, fail: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise fail(f"{name!r} must be a non-empty string, found {shown(value)}")
    if any(c.isspace() for c in value):
        raise fail(f"{name!r} must not contain whitespace, found {shown(value)}")
    return value


def _topic_id(value: Any, fail: Any) -> str:
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return _text(value, "topic_id", fail)


def _references(value: Any, fail: Any) -> tuple[str, ...]:
    if not isinstance(value, list):
        raise fail(f"'references' must be a list of document ids, found {type(value).__name__}")
    if len(value) > MAX_REFERENCES:
        raise fail(f"more than {MAX_REFERENCES:,} references ({len(value):,})")
    seen: set[str] = set()
    for i, ref in enumerate(value):
        if not isinstance(ref, str) or not ref.strip():
            raise fail(f"references[{i}] must be a non-empty string, found {shown(ref)}")
        if ref in seen:
            raise fail(f"references[{i}] {shown(ref)} is listed twice")
        seen.add(ref)
    return tuple(value)


def _sentences(value: Any, n_refs: int, fail: Any) -> tuple[Sentence, ...]:
    if not isinstance(value, list):
        raise fail(f"'answer' must be a list of sentences, found {type(value).__name__}")
    if len(value) > MAX_SENTENCES:
        raise fail(f"more than {MAX_SENTENCES:,} answer sentences ({len(value):,})")
    sentences: list[Sentence] = []
    chars = 0
    for i, item in enumerate(value):
        if not isinstance(item, dict):
            raise fail(f"answer[{i}] must be an object with 'text' and 'citations'")
        for name in ("text", "citations"):
            if name not in item:
                raise fail(f"answer[{i}] is missing field {name!r}")
        text, cites = item["text"], item["citations"]
        if not isinstance(text, str):
            raise fail(f"answer[{i}].text must be a string, found {type(text).__name__}")
        chars += len(text) + 1
        if chars > MAX_ANSWER_CHARS:
            raise fail(f"answer longer than {MAX_ANSWER_CHARS:,} characters")
        if not isinstance(cites, list):
            raise fail(f"answer[{i}].citations must be a list of integers")
        for cite in cites:
            if not isinstance(cite, int) or isinstance(cite, bool):
                raise fail(f"answer[{i}].citations holds {shown(cite)}, not an integer")
            if not 0 <= cite < n_refs:
                raise fail(
                    f"answer[{i}] cites reference {shown(cite)}, outside the {n_refs} references "
                    "(citations are 0-based indices into 'references')"
                )
        sentences.append(Sentence(text, tuple(cites)))
    return tuple(sentences)


def rag24_record(answer: Answer) -> dict[str, Any]:
    """One answer as a TREC RAG 2024 JSON object (``response_length`` recomputed)."""
    return {
        "run_id": answer.system,
        "topic_id": answer.qid,
        "topic": answer.topic,
        "references": list(answer.references),
        "response_length": answer.length,
        "answer": [{"text": s.text, "citations": list(s.citations)} for s in answer.sentences],
    }


def write_rag24(answers: Iterable[Answer], path: str | Path) -> int:
    """Write one run's answers as TREC RAG 2024 JSON Lines, atomically; returns the line count.
    Answers of more than one system are an error (the format holds one run per file)."""
    count = 0
    systems: set[str] = set()
    with atomic_write(path) as handle:
        for answer in answers:
            systems.add(answer.system)
            if len(systems) > 1:
                raise ValueError(f"answers of several systems ({sorted(systems)}): one run per file")
            handle.write(json.dumps(rag24_record(answer), ensure_ascii=False) + "\n")
            count += 1
    return count


# ---------------------------------------------------------------- TSV


def one_line(text: str) -> str:
    """``text`` with every run of whitespace (newlines, tabs) as one space, stripped."""
    return _SPACES.sub(" ", text).strip()


def read_answers_tsv(path: str | Path) -> list[Answer]:
    """Read ``system<TAB>qid<TAB>answer`` lines (blank lines skipped), answers in file order.
    Each answer is one sentence without citations."""
    path = Path(path)
    answers: list[Answer] = []
    seen: set[tuple[str, str]] = set()
    for number, line in read_lines(path, max_line_bytes=MAX_LINE_BYTES):
        if not line.strip():
            continue
        parts = line.split("\t", 2)
        if len(parts) != 3:
            raise InputError(
                f"expected 3 tab-separated columns 'system<TAB>qid<TAB>answer', found {len(parts)}",
                path,
                number,
            )
        system, qid, text = (p.strip() for p in parts)
        if not system or not qid:
            raise InputError("the system and the qid must be non-empty", path, number)
        if any(c.isspace() for c in system + qid):
            raise InputError("the system and the qid must not contain whitespace", path, number)
        if not text:
            raise InputError(f"empty answer of system {shown(system)} to topic {shown(qid)}", path, number)
        if len(text) > MAX_ANSWER_CHARS:
            raise InputError(f"answer longer than {MAX_ANSWER_CHARS:,} characters", path, number)
        if (system, qid) in seen:
            raise InputError(f"system {shown(system)} answers topic {shown(qid)} twice", path, number)
        seen.add((system, qid))
        answers.append(Answer(system, qid, (Sentence(text),), line=number))
    if not answers:
        raise InputError("no answers in file", path)
    return answers


def tsv_line(system: str, qid: str, text: str) -> str:
    """One TSV line (with its newline); the answer written on one line (`one_line`)."""
    if not system or not qid or any(c.isspace() for c in system + qid):
        raise ValueError(f"system and qid must be non-empty without whitespace: {system!r}, {qid!r}")
    answer = one_line(text)
    if not answer:
        raise ValueError(f"empty answer of {system!r} to topic {qid!r}")
    return f"{system}\t{qid}\t{answer}\n"


def write_answers_tsv(answers: Iterable[Answer] | Mapping[str, Mapping[str, str]], path: str | Path) -> int:
    """Write answers as ``system<TAB>qid<TAB>answer`` atomically (``Answer`` objects, or a
    ``{system: {qid: text}}`` mapping); returns the line count."""
    rows: Iterable[tuple[str, str, str]]
    if isinstance(answers, Mapping):
        rows = ((s, q, t) for s, by_qid in answers.items() for q, t in by_qid.items())
    else:
        rows = ((a.system, a.qid, a.text) for a in answers)
    count = 0
    with atomic_write(path) as handle:
        for system, qid, text in rows:
            handle.write(tsv_line(system, qid, text))
            count += 1
    return count


def read_answers(path: str | Path) -> list[Answer]:
    """Answers from either format: JSON Lines names (``.jsonl``, ``.json``, ``.ndjson``, each
    optionally ``.gz``) as TREC RAG 2024, anything else as the TSV."""
    return read_rag24(path) if is_jsonl_name(path) else read_answers_tsv(path)
