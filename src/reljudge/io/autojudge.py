"""TREC AutoJudge inputs: topics (requests) and responses (the RAG systems' reports), read as
``autojudge-base`` 1.0 defines them (``autojudge_base/request.py`` and ``report.py``, read at
commit fd0a0b8 of trec-auto-judge/auto-judge-starter-kit's sample data and the base package).

**Topics** (JSON Lines, one request per line): ``request_id`` and ``title`` are required;
``problem_statement``, ``background``, ``limit`` and ``word_limit`` are kept when present. A
request id given twice is an error.

**Responses** (JSON Lines, one report per line, any number of runs per file)::

    {"metadata": {"team_id": "teamA", "run_id": "run1", "topic_id": "leaf"},
     "responses": [{"text": "Leaves change color ...", "citations": ["Chlorophyll"]}, ...],
     "documents": {"Chlorophyll": {"id": "Chlorophyll", "text": "...", "title": "..."}}}

``metadata.run_id`` is required; the topic is ``metadata.topic_id`` (or ``narrative_id``, or
``request_id``; a number is kept as text; two that differ are an error). The sentences are under
``responses`` or ``answer``, each ``{"text", "citations"}``, where the citations take one of the
three shapes AutoJudge accepts: a list of document ids (NeuCLIR), a map of document id to
confidence (RAGTIME: cited in order of confidence, highest first, ties by id) or a list of
0-based indices into the report's ``references`` (TREC RAG 2024). One report uses one shape.
``documents`` (optional) embeds the cited documents' texts (``{id: {"text", "title"}}``); a
cited document not embedded is looked up in the corpus by whoever judges it.

A response is read into reljudge's `reljudge.io.answers.Answer` (system = run id, qid = topic,
references = the documents cited, in the order first cited), so every judge of answers reads
it. Everything is bounded (line length, sentences, characters, references, documents) and
checked, with ``FILE:LINE: what is wrong`` (`InputError`): a run answering a topic twice, a
citation outside ``references``, a confidence that is no number, text that is no string, an id
(run, topic or document: cited, in ``references`` or a key of ``documents``) that could not be one
column of a TREC qrels or run file (whitespace or a control character; `column_problem`). The
text of a response is data to judge, never an instruction: nothing here reads a label from it.
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reljudge.errors import InputError, shown
from reljudge.io.answers import MAX_ANSWER_CHARS, MAX_REFERENCES, MAX_SENTENCES, Answer, Sentence
from reljudge.io.lines import loads_json, read_lines

#: the longest line read: a report with its embedded documents
MAX_LINE_BYTES = 16_000_000
#: the most documents one report embeds
MAX_DOCUMENTS = 1_000
#: the longest embedded document text, in characters
MAX_DOCUMENT_CHARS = 200_000
#: the fields of a request kept besides ``request_id`` and ``title``
TOPIC_FIELDS = ("problem_statement", "background", "limit", "word_limit")


@dataclass(frozen=True)
class AutoJudgeTopic:
    """One AutoJudge request."""

    request_id: str
    title: str
    problem_statement: str | None = None
    background: str | None = None
    limit: int | None = None
    word_limit: int | None = None

    @property
    def text(self) -> str:
        """What a judge is told the user asked: the title, then the problem statement and the
        background when the request has them."""
        return "\n\n".join(t for t in (self.title, self.problem_statement, self.background) if t)


@dataclass(frozen=True)
class Document:
    """A document a report embeds."""

    docid: str
    text: str
    title: str | None = None


@dataclass(frozen=True)
class Response:
    """One report: the answer it gives (as reljudge's `Answer`), its team and the documents it
    embeds, with where it was read."""

    answer: Answer
    team: str = ""
    documents: Mapping[str, Document] = field(default_factory=dict)
    path: Path | None = None


def read_topics(path: str | Path) -> list[AutoJudgeTopic]:
    """The requests of an AutoJudge topics file, in file order."""
    path = Path(path)
    topics: list[AutoJudgeTopic] = []
    seen: set[str] = set()
    for number, line in read_lines(path, max_line_bytes=MAX_LINE_BYTES):
        if not line.strip():
            continue
        obj = _json_object(line, path, number)

        def fail(what: str, number: int = number) -> InputError:
            return InputError(what, path, number)

        request_id = _identifier(obj.get("request_id"), "request_id", fail)
        if request_id in seen:
            raise fail(f"request {shown(request_id)} is listed twice")
        seen.add(request_id)
        title = obj.get("title")
        if not isinstance(title, str) or not title.strip():
            raise fail(f"'title' must be a non-empty string, found {shown(title)}")
        extra: dict[str, Any] = {}
        for name in TOPIC_FIELDS:
            value = obj.get(name)
            if value is None:
                continue
            want, called = (int, "an integer") if name in ("limit", "word_limit") else (str, "a string")
            if not isinstance(value, want) or isinstance(value, bool):
                raise fail(f"{name!r} must be {called}, found {shown(value)}")
            extra[name] = value
        topics.append(AutoJudgeTopic(request_id, title, **extra))
    if not topics:
        raise InputError("no requests in file", path)
    return topics


def read_responses(paths: Iterable[str | Path]) -> list[Response]:
    """The reports of AutoJudge response files (a directory: its ``*.jsonl`` files, sorted),
    sorted by (run, topic) so that the order files are named in never matters. A run answering
    a topic twice, in one file or across files, is an error."""
    files: list[Path] = []
    for given in paths:
        given = Path(given)
        files.extend(sorted(given.glob("*.jsonl")) if given.is_dir() else [given])
    if not files:
        raise InputError("no response files (a directory holds none ending in .jsonl)")
    out: list[Response] = []
    seen: dict[tuple[str, str], str] = {}
    for path in files:
        for response in _read_file(path):
            key = (response.answer.system, response.answer.qid)
            where = f"{path}:{response.answer.line}"
            if key in seen:
                raise InputError(
                    f"run {shown(key[0])} answers topic {shown(key[1])} twice (also at {seen[key]})",
                    path,
                    response.answer.line,
                )
            seen[key] = where
            out.append(response)
    return sorted(out, key=lambda r: (r.answer.system, r.answer.qid))


def looks_like_responses(first_object: Mapping[str, Any]) -> bool:
    """Whether a JSON object is an AutoJudge report (``metadata`` and ``responses`` or
    ``answer``), as opposed to a TREC RAG 2024 answer line (``run_id`` at the top)."""
    return isinstance(first_object.get("metadata"), Mapping) and (
        "responses" in first_object or "answer" in first_object
    )


def _read_file(path: Path) -> list[Response]:
    responses: list[Response] = []
    for number, line in read_lines(path, max_line_bytes=MAX_LINE_BYTES):
        if line.strip():
            responses.append(_response(_json_object(line, path, number), path, number))
    if not responses:
        raise InputError("no responses in file", path)
    return responses


def _json_object(line: str, path: Path, number: int) -> dict[str, Any]:
    obj = loads_json(line, path, number)  # bad JSON, too deep, a lone surrogate: FILE:LINE
    if not isinstance(obj, dict):
        raise InputError(f"each line must be a JSON object, found {type(obj).__name__}", path, number)
    return obj


def column_problem(value: str) -> str | None:
    """Why ``value`` cannot be one column of a TREC qrels or run file (whitespace, which splits
    it, or a control character), or None when it can."""
    if any(c.isspace() for c in value):
        return "contains whitespace"
    if any(unicodedata.category(c) == "Cc" for c in value):
        return "contains a control character"
    return None


def _identifier(value: Any, name: str, fail: Any) -> str:
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if not isinstance(value, str) or not value.strip():
        raise fail(f"{name!r} must be a non-empty string or an integer, found {shown(value)}")
    if column_problem(value) is not None:
        raise fail(f"{name!r} must not contain whitespace or control characters, found {shown(value)}")
    return value


def _document_id(value: Any, where: str, fail: Any) -> str:
    """A document id (cited, in ``references`` or a key of ``documents``): a non-empty string
    that fits one column of a TREC qrels or run file (reljudge writes it into both)."""
    if not isinstance(value, str) or not value.strip():
        raise fail(f"{where} holds {shown(value)}: a document id must be a non-empty string")
    problem = column_problem(value)
    if problem is not None:
        raise fail(
            f"{where} holds the document id {shown(value)}, which {problem}: a document id must "
            "fit one column of a TREC qrels or run file"
        )
    return value


def _response(obj: dict[str, Any], path: Path, number: int) -> Response:
    def fail(what: str) -> InputError:
        return InputError(what, path, number)

    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        raise fail("'metadata' must be an object with 'run_id' and 'topic_id'")
    run_id = _identifier(meta.get("run_id"), "metadata.run_id", fail)
    topics = {
        _identifier(meta[name], f"metadata.{name}", fail)
        for name in ("topic_id", "narrative_id", "request_id")
        if meta.get(name) is not None
    }
    if not topics:
        raise fail("'metadata' names no topic (topic_id, narrative_id or request_id)")
    if len(topics) > 1:
        raise fail(f"'metadata' names different topics: {shown(sorted(topics))}")
    (topic,) = topics
    team = meta.get("team_id")
    if team is not None and not isinstance(team, str):
        raise fail(f"'metadata.team_id' must be a string, found {shown(team)}")
    field_name = "responses" if obj.get("responses") is not None else "answer"
    raw_sentences = obj.get(field_name)
    if not isinstance(raw_sentences, list) or not raw_sentences:
        raise fail("'responses' (or 'answer') must be a non-empty list of sentences")
    if len(raw_sentences) > MAX_SENTENCES:
        raise fail(f"more than {MAX_SENTENCES:,} sentences ({len(raw_sentences):,})")
    given_refs = obj.get("references")
    if given_refs is not None and (
        not isinstance(given_refs, list) or not all(isinstance(r, str) and r.strip() for r in given_refs)
    ):
        raise fail("'references' must be a list of document ids")
    if given_refs is not None and len(given_refs) > MAX_REFERENCES:
        raise fail(f"more than {MAX_REFERENCES:,} references ({len(given_refs):,})")
    for i, ref in enumerate(given_refs or ()):
        _document_id(ref, f"references[{i}]", fail)
    cited_ids: list[list[str]] = []
    texts: list[str] = []
    chars = 0
    shape: str | None = None
    for i, item in enumerate(raw_sentences):
        where = f"{field_name}[{i}]"
        if not isinstance(item, dict):
            raise fail(f"{where} must be an object with 'text'")
        text = item.get("text")
        if not isinstance(text, str):
            raise fail(f"{where}.text must be a string, found {shown(text)}")
        chars += len(text) + 1
        if chars > MAX_ANSWER_CHARS:
            raise fail(f"the response is longer than {MAX_ANSWER_CHARS:,} characters")
        this_shape, ids = _citations(item.get("citations"), given_refs, where, fail)
        if this_shape is not None:
            if shape is not None and this_shape != shape:
                raise fail(f"{where}.citations is {this_shape}, the sentences before are {shape}")
            shape = this_shape
        texts.append(text)
        cited_ids.append(ids)
    references: list[str] = []
    index: dict[str, int] = {}
    for ids in cited_ids:
        for docid in ids:
            if docid not in index:
                if len(references) >= MAX_REFERENCES:
                    raise fail(f"more than {MAX_REFERENCES:,} documents cited")
                index[docid] = len(references)
                references.append(docid)
    sentences = tuple(
        Sentence(text, tuple(dict.fromkeys(index[d] for d in ids)))
        for text, ids in zip(texts, cited_ids, strict=True)
    )
    answer = Answer(run_id, topic, sentences, references=tuple(references), line=number)
    if not answer.text:
        raise fail("the response has no text")
    return Response(answer, team or "", _documents(obj.get("documents"), fail), path)


def _citations(
    value: Any, references: list[str] | None, where: str, fail: Any
) -> tuple[str | None, list[str]]:
    """(the shape, the cited document ids in citing order) of one sentence's citations."""
    if value is None:
        return None, []
    if isinstance(value, dict):
        for docid, confidence in value.items():
            if not docid.strip():
                raise fail(f"{where}.citations names an empty document id")
            _document_id(docid, f"{where}.citations", fail)
            if (
                not isinstance(confidence, (int, float))
                or isinstance(confidence, bool)
                or not math.isfinite(confidence)
            ):
                raise fail(
                    f"{where}.citations gives {shown(docid)} the confidence {shown(confidence)}, not a number"
                )
        ranked = sorted(value.items(), key=lambda kv: (-float(kv[1]), kv[0]))
        return "a map of document ids to confidences", [docid for docid, _ in ranked]
    if not isinstance(value, list):
        raise fail(f"{where}.citations must be a list or a map, found {shown(value)}")
    if len(value) > MAX_REFERENCES:
        raise fail(f"{where} cites more than {MAX_REFERENCES:,} documents")
    if all(isinstance(c, int) and not isinstance(c, bool) for c in value) and value:
        if references is None:
            raise fail(f"{where}.citations are indices, but the response has no 'references'")
        for cite in value:
            if not 0 <= cite < len(references):
                raise fail(
                    f"{where} cites reference {shown(cite)}, outside the {len(references)} references "
                    "(0-based indices into 'references')"
                )
        return "a list of indices into 'references'", [references[c] for c in value]
    for cite in value:
        if not isinstance(cite, str) or not cite.strip():
            raise fail(
                f"{where}.citations holds {shown(cite)}: cite document ids (strings) or indices, not both"
            )
        _document_id(cite, f"{where}.citations", fail)
    return ("a list of document ids" if value else None), list(value)


def _documents(value: Any, fail: Any) -> dict[str, Document]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise fail(f"'documents' must be a map of document id to document, found {shown(value)}")
    if len(value) > MAX_DOCUMENTS:
        raise fail(f"more than {MAX_DOCUMENTS:,} embedded documents ({len(value):,})")
    out: dict[str, Document] = {}
    for docid, doc in value.items():
        _document_id(docid, "'documents'", fail)
        if not isinstance(doc, dict) or not isinstance(doc.get("text"), str):
            raise fail(f"documents[{shown(docid)}] must be an object with a 'text' string")
        text = doc["text"]
        if len(text) > MAX_DOCUMENT_CHARS:
            raise fail(f"documents[{shown(docid)}] is longer than {MAX_DOCUMENT_CHARS:,} characters")
        inner = doc.get("id", docid)
        if inner != docid:
            raise fail(f"documents[{shown(docid)}] has the id {shown(inner)}")
        title = doc.get("title")
        out[docid] = Document(docid, text, title if isinstance(title, str) and title.strip() else None)
    return out
