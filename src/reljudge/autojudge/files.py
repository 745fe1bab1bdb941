"""The files of a judging of AutoJudge responses: reading its inputs (topics, responses, the
track's rules, the corpus), writing the inputs of reljudge's job (a topics TSV, the passages,
the pool or qrels, the answers as TREC RAG 2024 JSON Lines) and writing the outputs atomically.

**The job's inputs** are derived from the responses each time (so they are never stale) and go
to ``RUN/inputs/`` -- or, with ``privacy``, to a temporary directory removed when the judging
ends, so that no copy of a response's text stays on disk beside the outputs. A response is
judged as the passage ``{run}:{md5}`` of its topic (`response_docid`; the MD5 of its text, as
in the qrels): a response whose text changed is another item, never the old label. A run giving
the same text to several topics has the same passage id in each, so a judged passage stands for
a response by (topic, passage id), never by the id alone.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import shutil
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import reljudge.autojudge.tracks as tracks
from reljudge.autojudge.outputs import response_doc_id
from reljudge.autojudge.spec import AutoJudgeSpec
from reljudge.errors import InputError, shown
from reljudge.io.answers import Answer, one_line, write_rag24
from reljudge.io.atomic import atomic_write
from reljudge.io.autojudge import AutoJudgeTopic, Response, read_topics
from reljudge.io.autojudge import read_responses as read_response_files


@dataclass
class Inputs:
    """What a judging reads: the topics (file order), the responses (by run, topic) and the
    track's warnings."""

    topics: list[AutoJudgeTopic]
    responses: list[Response]
    warnings: list[str] = field(default_factory=list)

    @property
    def topic_ids(self) -> list[str]:
        return [t.request_id for t in self.topics]


@dataclass
class JobFiles:
    """The inputs of reljudge's job, and the response each judged passage stands for."""

    topics: Path
    corpus: Path
    pool: str = "qrels"
    qrels: Path | None = None
    answers: list[Path] | None = None
    #: (topic, docid) of a judged response -> (run, topic); the docid alone is not enough: a run
    #: giving one text to several topics (a canned answer) has one docid in each of them
    responses: dict[tuple[str, str], tuple[str, str]] = field(default_factory=dict)
    #: citations (response, document) with no text: not embedded by their run, not in the corpus
    missing_citations: int = 0
    #: the responses holding such a citation
    missing_responses: int = 0
    #: nugget sources (topic, passage) by where their text came from: "corpus", "embedded"
    nugget_sources: dict[str, int] | None = None
    #: (topic, document) pairs cited with no text to make nuggets from
    documents_without_text: int = 0


def response_files(given: Sequence[Path] | Path | str) -> list[Path]:
    """The response files: the files given, and the ``*.jsonl`` of the directories given (one
    path alone is taken as a list of one)."""
    files: list[Path] = []
    for path in [given] if isinstance(given, (str, Path)) else given:
        path = Path(path)
        files.extend(sorted(path.glob("*.jsonl")) if path.is_dir() else [path])
    return files


def read_inputs(spec: AutoJudgeSpec) -> Inputs:
    """Topics and responses (`reljudge.io.autojudge`), held to the track's rules when
    ``spec.track`` names one; a response to a topic the topics file does not hold is bad input
    (``FILE:LINE``)."""
    topics = read_topics(spec.topics)
    files = response_files(spec.responses)
    warnings: list[str] = []
    if spec.track is not None:
        rules = tracks.rules(spec.track)
        warnings = tracks.check_files(files, rules, topics)
    responses = read_response_files(files)
    known = {t.request_id for t in topics}
    for response in responses:
        if response.answer.qid not in known:
            raise InputError(
                f"topic {shown(response.answer.qid)} is not in the topics file {spec.topics}",
                response.path,
                response.answer.line,
            )
    return Inputs(topics, responses, warnings)


def response_docid(response: Response) -> str:
    """The passage id a response is judged under: ``{run}:{md5 of its text}``."""
    return f"{response.answer.system}:{response_doc_id(s.text for s in response.answer.sentences)}"


@contextlib.contextmanager
def job_directory(spec: AutoJudgeSpec) -> Iterator[Path]:
    """Where the job's derived inputs go: ``RUN/inputs``, or with ``privacy`` a temporary
    directory that is removed when the judging ends (also on an error)."""
    if not spec.privacy:
        where = spec.run_dir / "inputs"
        where.mkdir(parents=True, exist_ok=True)
        yield where
        return
    where = Path(tempfile.mkdtemp(prefix="reljudge-autojudge-"))
    try:
        yield where
    finally:
        shutil.rmtree(where, ignore_errors=True)


def _write_lines(path: Path, lines: Sequence[str]) -> Path:
    with atomic_write(path) as handle:
        handle.writelines(lines)
    return path


def write_topics(where: Path, inputs: Inputs) -> Path:
    """``qid<TAB>query``: the query a judge is shown is the title, the problem statement and
    the background (`AutoJudgeTopic.text`) on one line."""
    return _write_lines(
        where / "topics.tsv", [f"{t.request_id}\t{one_line(t.text)}\n" for t in inputs.topics]
    )


def _corpus_lines(passages: Mapping[str, tuple[str, str | None]]) -> list[str]:
    lines = []
    for docid in sorted(passages):
        text, title = passages[docid]
        obj = {"docid": docid, "text": text} | ({"title": title} if title else {})
        lines.append(json.dumps(obj, ensure_ascii=False) + "\n")
    return lines


def write_response_passages(where: Path, inputs: Inputs) -> JobFiles:
    """Each response as a passage of its topic (UMBRELA over responses): the corpus, and a run
    file pooling every response of a topic."""
    passages: dict[str, tuple[str, str | None]] = {}
    pool: list[str] = []
    job = JobFiles(topics=write_topics(where, inputs), corpus=where / "corpus.jsonl")
    for response in inputs.responses:
        docid = response_docid(response)
        passages[docid] = (response.answer.text, None)
        job.responses[(response.answer.qid, docid)] = (response.answer.system, response.answer.qid)
        pool.append(f"{response.answer.qid} Q0 {docid} 1 1 responses\n")
    _write_lines(job.corpus, _corpus_lines(passages))
    run_file = _write_lines(where / "responses.run", sorted(set(pool)))
    job.pool = f"run:{run_file}:{max(1, len(inputs.responses))}"
    return job


#: the suffix of the id a citation without a text is judged under: no passage has that id, so
#: the citation judge finds no text and records the citation ``skipped`` (`cited_documents`)
NO_TEXT = "#no-text"

#: a document's text as the judging uses it: (body, title)
Text = tuple[str, str | None]


def _from_corpus(corpus: Path | None, docids: set[str]) -> dict[str, Text]:
    """The corpus's texts of ``docids`` (those it holds; none without a corpus)."""
    if not docids or corpus is None:
        return {}
    from reljudge.io.corpus import load_corpus

    found = load_corpus(corpus, docids=docids)
    return {d: (found[d], None) for d in sorted(docids) if d in found}


def _passage_ids(texts: Mapping[str, set[Text]]) -> dict[tuple[str, Text], str]:
    """The passage id of each (document id, text): the document id when the judging uses one
    text for the document, else ``{docid}#{md5 of title and text}`` for each of its texts."""
    ids: dict[tuple[str, Text], str] = {}
    for docid, variants in texts.items():
        for body, title in variants:
            pid = docid
            if len(variants) > 1:
                digest = hashlib.md5(f"{title or ''}\n{body}".encode()).hexdigest()[:12]
                pid = f"{docid}#{digest}"
            ids[(docid, (body, title))] = pid
    return ids


@dataclass
class Cited:
    """The cited documents' texts as the citation judge uses them: ``passages`` by passage id,
    each response's answer with its references as passage ids, and the citations (response,
    document) left without a text (``missing``, in ``missing_responses`` responses)."""

    passages: dict[str, Text] = field(default_factory=dict)
    answers: list[Answer] = field(default_factory=list)
    missing: int = 0
    missing_responses: int = 0


def cited_documents(inputs: Inputs, corpus: Path | None) -> Cited:
    """Which text each citation is judged against: the text the citing response embeds for the
    document, else the corpus's (``corpus``), else none -- never a text another response embeds
    (one team's file must not supply the evidence another team's citations are judged on). A
    document cited with two different texts (runs embedding different passages under one id)
    is two passages, ``{docid}#{md5 of the text}``; one text keeps the document id. A citation
    with no text is counted in ``missing`` and refers to ``{docid}#no-text`` (`NO_TEXT`), an id
    no passage has: its records are ``skipped`` (left out of precision; a sentence whose
    citations were none judged adds 0 to recall)."""
    outside = {d for r in inputs.responses for d in r.answer.references if d not in r.documents}
    looked_up = _from_corpus(corpus, outside)
    chosen: list[list[Text | None]] = []
    texts: dict[str, set[Text]] = {}
    for response in inputs.responses:
        picks: list[Text | None] = []
        for docid in response.answer.references:
            own = response.documents.get(docid)
            text = (own.text, own.title) if own is not None else looked_up.get(docid)
            picks.append(text)
            if text is not None:
                texts.setdefault(docid, set()).add(text)
        chosen.append(picks)
    ids = _passage_ids(texts)
    cited = Cited(passages={pid: text for (_docid, text), pid in ids.items()})
    for response, picks in zip(inputs.responses, chosen, strict=True):
        references = []
        for docid, text in zip(response.answer.references, picks, strict=True):
            if text is not None:
                references.append(ids[(docid, text)])
                continue
            cited.missing += 1
            absent = docid + NO_TEXT
            while absent in cited.passages:  # a document id ending in '#no-text' that has a text
                absent += "#"
            references.append(absent)
        if any(p is None for p in picks):
            cited.missing_responses += 1
        cited.answers.append(replace(response.answer, references=tuple(references)))
    return cited


@dataclass
class NuggetSources:
    """The passages a topic's nuggets are made from (``nugget_source="documents"``): the
    passages by id, each topic's passage ids, how many (topic, passage) sources have the
    corpus's text and how many a text the responses embed, and the (topic, document) pairs
    cited with no text (not a source)."""

    passages: dict[str, Text] = field(default_factory=dict)
    by_topic: dict[str, set[str]] = field(default_factory=dict)
    from_corpus: int = 0
    from_embedded: int = 0
    without_text: int = 0


def nugget_sources(inputs: Inputs, corpus: Path | None) -> NuggetSources:
    """A topic's nugget sources: the documents its responses cite, pooled over the runs (as
    AutoNuggetizer pools a topic's documents: the nuggets are the topic's, made once for every
    run). A document's text is the corpus's when ``corpus`` holds it; else every text the
    topic's responses embed for it, whichever run embeds it (a document one run cites and
    another run embeds is a source with that run's text; two texts are two passages); else it
    is no source (counted in ``without_text``). Texts embedded for another topic are never used."""
    cited: dict[str, set[str]] = {}
    embedded: dict[tuple[str, str], set[Text]] = {}
    for response in inputs.responses:
        qid = response.answer.qid
        cited.setdefault(qid, set()).update(response.answer.references)
        for docid, doc in response.documents.items():
            embedded.setdefault((qid, docid), set()).add((doc.text, doc.title))
    looked_up = _from_corpus(corpus, {d for docids in cited.values() for d in docids})
    chosen: dict[tuple[str, str], tuple[bool, set[Text]]] = {}
    texts: dict[str, set[Text]] = {}
    sources = NuggetSources()
    for qid in sorted(cited):
        for docid in sorted(cited[qid]):
            if docid in looked_up:
                chosen[(qid, docid)] = (True, {looked_up[docid]})
            elif (qid, docid) in embedded:
                chosen[(qid, docid)] = (False, embedded[(qid, docid)])
            else:
                sources.without_text += 1
                continue
            texts.setdefault(docid, set()).update(chosen[(qid, docid)][1])
    ids = _passage_ids(texts)
    for (qid, docid), (from_corpus, variants) in chosen.items():
        for text in variants:
            pid = ids[(docid, text)]
            sources.passages[pid] = text
            sources.by_topic.setdefault(qid, set()).add(pid)
            if from_corpus:
                sources.from_corpus += 1
            else:
                sources.from_embedded += 1
    return sources


def write_answers(where: Path, answers: Sequence[Answer]) -> list[Path]:
    """The responses as TREC RAG 2024 answer files, one per run (`reljudge.io.answers`)."""
    by_run: dict[str, list[Answer]] = {}
    for answer in answers:
        by_run.setdefault(answer.system, []).append(answer)
    paths = []
    directory = where / "answers"
    for index, run in enumerate(sorted(by_run)):
        path = directory / f"{index:04d}.jsonl"  # a run id never becomes a file name
        write_rag24(by_run[run], path)
        paths.append(path)
    return paths


def write_nugget_inputs(where: Path, inputs: Inputs, source: str, corpus: Path | None) -> JobFiles:
    """The nugget method's inputs: the answers, and as the passages nuggets are made from
    (qrels grade 1) the documents each topic's responses cite (``source="documents"``,
    `nugget_sources`) or the responses themselves (``"responses"``)."""
    job = JobFiles(topics=write_topics(where, inputs), corpus=where / "corpus.jsonl")
    passages: dict[str, tuple[str, str | None]] = {}
    qrels: list[str] = []
    if source == "responses":
        for response in inputs.responses:
            docid = response_docid(response)
            passages[docid] = (response.answer.text, None)
            qrels.append(f"{response.answer.qid} 0 {docid} 1\n")
    else:
        sources = nugget_sources(inputs, corpus)
        job.nugget_sources = {"corpus": sources.from_corpus, "embedded": sources.from_embedded}
        job.documents_without_text = sources.without_text
        for qid, pids in sources.by_topic.items():
            for pid in pids:
                passages[pid] = sources.passages[pid]
                qrels.append(f"{qid} 0 {pid} 1\n")
    if not passages:
        raise InputError(
            f"no nuggets can be made: the responses cite no document with a text ({source}); "
            "give the corpus, or make the nuggets from the responses"
        )
    _write_lines(job.corpus, _corpus_lines(passages))
    job.qrels = _write_lines(where / "nugget-sources.qrels", sorted(set(qrels)))
    job.answers = write_answers(where, [r.answer for r in inputs.responses])
    return job


def write_citation_inputs(where: Path, inputs: Inputs, corpus: Path | None) -> JobFiles:
    """The citation method's inputs: the answers and the cited documents' texts."""
    job = JobFiles(topics=write_topics(where, inputs), corpus=where / "corpus.jsonl")
    cited = cited_documents(inputs, corpus)
    job.missing_citations = cited.missing
    job.missing_responses = cited.missing_responses
    passages = dict(cited.passages)
    if not passages:  # the corpus reader refuses an empty file; a placeholder no answer cites
        passages = {"-": ("", None)}
    _write_lines(job.corpus, _corpus_lines(passages))
    job.answers = write_answers(where, cited.answers)
    return job


def write_text(path: Path, text: str) -> Path:
    """``text`` written to ``path`` atomically (no half-written file, ever)."""
    with atomic_write(path) as handle:
        handle.write(text)
    return path
