"""Citation support of generated answers (TREC 2024 RAG support assessment, as vectara's
open-rag-eval asks it): does the passage an answer sentence cites support the sentence?

For every TREC RAG 2024 answer (``--answers FILE.jsonl``), every sentence and every passage it
cites (each distinct index of its ``citations`` into the answer's ``references``) is one item:
the prompt ``citations/trec-rag24-support`` gets the sentence as ``{statement}`` and the cited
passage's text from the run's corpus (by the reference's docid) as ``{citation}``, and the model
answers ``full_support``, ``partial_support`` or ``no_support`` (scores 1, 0.5, 0, as upstream).

A record per (answer, sentence, cited passage): method ``citation-support``, ``qid`` the topic,
``docid`` the cited passage, ``item_id`` ``SYSTEM/SENTENCE`` (the 0-based sentence index), the
label the score, ``extra`` with ``support`` (the label word), ``system``, ``sentence``,
``citation`` (the index into ``references``), ``sentences``/``cited_sentences``/``citations``
(the answer's counts, so that its scores can be computed from the records alone) and the
answer's provenance (``answer_file``, ``answer_sha256`` of its text, ``citations_sha256`` of its
sentences with their citations and its references). A cited passage without text in the corpus,
or an empty sentence, is a ``skipped`` record with the reason; an answer that cites nothing gets
one ``skipped`` record (``item_id`` ``SYSTEM/uncited``) so that it is scored (recall 0). A resumed
run skips what is recorded for the same ``citations_sha256``; an answer whose text, citations or
references changed is judged again and only its new records count (the old ones, also those of
passages it no longer cites, are left out of its scores).

Only TREC RAG 2024 answer files carry citations: a ``system<TAB>qid<TAB>answer`` TSV is refused.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from reljudge.errors import InputError
from reljudge.io.answer_sets import SourcedAnswer, read_answer_files
from reljudge.io.lines import is_jsonl_name
from reljudge.judges.answered_pools import answers_described, first_topics, refuse_item_limit
from reljudge.judges.base import (
    AnswerScores,
    CallEstimate,
    Judge,
    JudgeInputs,
    JudgePool,
    PoolRequest,
    Resource,
    run_bounded,
)
from reljudge.judges.call_records import key, record_from_answer, skipped_record
from reljudge.judges.citations.scores import CITATION_METHOD, SCORE_FILES
from reljudge.judges.items import passage_problem
from reljudge.judges.option_checks import check_max_tokens, check_output, resolve_prompt
from reljudge.judges.registry import register
from reljudge.judges.token_count import prompt_tokens

if TYPE_CHECKING:
    from reljudge.aggregation import AggregatedScores
    from reljudge.judges.context import JudgeContext
    from reljudge.prompts import PromptTemplate
    from reljudge.prompts.parsing import Parsed
    from reljudge.records import Judgment, Key

#: open-rag-eval's ``CitationMetric.score_map``
SUPPORT_SCORES: dict[str, float] = {"full_support": 1.0, "partial_support": 0.5, "no_support": 0.0}
#: the item id of the one record of an answer that cites nothing
UNCITED = "uncited"


def read_cited_answers(paths: Sequence[str | Path]) -> list[SourcedAnswer]:
    """The answers of TREC RAG 2024 files (`read_answer_files`); a TSV file is bad input (its
    answers cite nothing)."""
    for path in paths:
        if not is_jsonl_name(path):
            raise InputError(
                "citation-support needs TREC RAG 2024 answers (.jsonl: sentences with citations into "
                "'references'); a system<TAB>qid<TAB>answer TSV has no citations",
                path,
            )
    return read_answer_files(paths)


#: the resource of ``--answers FILE...`` for this judge
CITED_ANSWERS = Resource(
    "answers",
    read=read_cited_answers,
    help="judge each sentence's cited passages, .jsonl only",
)


@dataclass(frozen=True)
class Citation:
    """One item: a sentence of an answer and one passage it cites."""

    answer: SourcedAnswer
    sentence: int
    citation: int  # index into the answer's references

    @property
    def docid(self) -> str:
        return self.answer.answer.references[self.citation]

    @property
    def statement(self) -> str:
        return self.answer.answer.sentences[self.sentence].text

    @property
    def item_id(self) -> str:
        return f"{self.answer.system}/{self.sentence}"


def answer_extra(answer: SourcedAnswer) -> dict[str, Any]:
    """What every record of an answer notes: its system, counts and provenance."""
    sentences = answer.answer.sentences
    return {
        "system": answer.system,
        "sentences": len(sentences),
        "cited_sentences": sum(1 for s in sentences if s.citations),
        "citations": sum(len(dict.fromkeys(s.citations)) for s in sentences),
        "answer_file": answer.file,
        "answer_sha256": answer.sha256,
        "citations_sha256": answer.citations_sha256,
    }


def citations_of(answer: SourcedAnswer) -> list[Citation]:
    """The items of an answer: each sentence with each distinct passage it cites, in order."""
    return [
        Citation(answer, i, c)
        for i, sentence in enumerate(answer.answer.sentences)
        for c in dict.fromkeys(sentence.citations)
    ]


def cited_pool(answers: Sequence[SourcedAnswer]) -> dict[str, list[str]]:
    """``{qid: the docid of each item}`` (one entry per (sentence, cited passage), so a passage
    cited twice is listed twice: the pool counts the items), topics in answer order."""
    pool: dict[str, list[str]] = {}
    for answer in answers:
        pool.setdefault(answer.qid, []).extend(item.docid for item in citations_of(answer))
    return pool


def _done(record: Any, answer: SourcedAnswer) -> bool:
    """Whether ``record`` was made from this answer's current sentences, citations and references."""
    return record is not None and record.extra.get("citations_sha256") == answer.citations_sha256


@register
class CitationSupportJudge(Judge):
    """Judges each (answer sentence, cited passage) pair; see the module docstring."""

    name = CITATION_METHOD
    default_prompt = "citations/trec-rag24-support"
    label_methods = (CITATION_METHOD,)
    resources = (CITED_ANSWERS,)
    answer_score_files = SCORE_FILES
    #: typical answer length in tokens, for estimates when ``max_tokens`` is not set
    answer_tokens: ClassVar[int] = 5
    answer_budget: ClassVar[int] = 64

    def __init__(self, prompt: str | PromptTemplate | None = None, max_tokens: int | None = None) -> None:
        self.prompt: PromptTemplate = resolve_prompt(prompt if prompt is not None else self.default_prompt)
        check_output(self.prompt, ("choice",), self.name)
        vocabulary = tuple(self.prompt.output.vocabulary or ())
        if set(vocabulary) != set(SUPPORT_SCORES):
            raise InputError(
                f"prompt {self.prompt.id!r}: its labels {list(vocabulary)} must be {list(SUPPORT_SCORES)}"
            )
        check_max_tokens(max_tokens)
        self.max_tokens = max_tokens

    def parser(self) -> Any:
        """One label of the prompt's vocabulary, as its score (1, 0.5, 0) with the word in ``items``."""
        from reljudge.prompts.parsing import Parsed

        read = self.prompt.output.parse

        def parse(text: str) -> Parsed:
            parsed = read(text)
            if parsed.status != "ok" or not parsed.items:
                return parsed
            return Parsed(SUPPORT_SCORES[parsed.items[0]], "ok", parsed.how, parsed.items)

        return parse

    @classmethod
    def score_records(cls, records: Sequence[Any], **options: Any) -> dict[str, AggregatedScores]:
        """No document labels: the scores are per answer (`reljudge.judges.citations.scores`)."""
        return {}

    def pool(self, request: PoolRequest) -> JudgePool:
        """Per answered topic (in answer order) the passages its answers cite, one entry per
        (sentence, cited passage) (`cited_pool`); ``--topics-limit N`` keeps the first N topics
        (and their answers). The topics need no query text (the prompt has none), and a cited
        passage without text is a ``skipped`` record, not bad input."""
        answers = request.resources.get("answers")
        if answers is None:
            raise InputError(
                f"--method {self.name} judges the citations of answers: give --answers FILE.jsonl"
            )
        refuse_item_limit(request)
        docs = cited_pool(answers)
        keep, answers = first_topics(list(docs), answers, request.topics_limit)
        distinct = len({d for q in keep for d in docs[q]})
        return JudgePool(
            docs={q: docs[q] for q in keep},
            description=f"{answers_described(answers)}; items: their (sentence, cited passage) "
            f"pairs ({distinct} distinct passages)",
            resources={**request.resources, "answers": answers},
            check_texts=False,
        )

    @classmethod
    def answer_scores(cls, records: Iterable[Any], resources: Mapping[str, Any]) -> AnswerScores | None:
        """The citation scores of each answer and system (`reljudge.judges.citations.scores`),
        from the records of the answers as the run read them (their ``citations_sha256``)."""
        from reljudge.judges.citations.scores import citation_table, render_citation_table

        answers = resources.get("answers")
        if answers is None:
            return None
        table = citation_table(records, current={(a.system, a.qid): a.citations_sha256 for a in answers})
        return AnswerScores(table.topics, table.systems, table.incomplete, render_citation_table(table))

    def _items(
        self, inputs: JudgeInputs, recorded: Callable[[Key], Judgment | None] | None
    ) -> Iterator[tuple[str, Any]]:
        """("ask", Citation) for each item to judge, ("skip", (record args)) for each to skip; with
        ``recorded`` (`JudgeContext.done`, or `JudgeInputs.recorded` for a dry run), the items
        recorded for the same answer text are left out."""
        for answer in inputs.resources.get("answers") or ():
            extra = answer_extra(answer)
            items = citations_of(answer)
            if not items:
                if recorded is None or not _done(
                    recorded(key(self.name, answer.qid, "", "", f"{answer.system}/{UNCITED}")), answer
                ):
                    yield (
                        "skip",
                        (
                            answer.qid,
                            None,
                            f"{answer.system}/{UNCITED}",
                            "the answer cites no passage",
                            extra,
                        ),
                    )
                continue
            for item in items:
                if recorded is not None and _done(
                    recorded(key(self.name, answer.qid, item.docid, "", item.item_id)), answer
                ):
                    continue
                problem = passage_problem(inputs.corpus, item.docid)
                if problem is None and not item.statement.strip():
                    problem = f"sentence {item.sentence} of the answer of {answer.system!r} is empty"
                if problem is not None:
                    reason = f"{problem} (cited by sentence {item.sentence} of {answer.system!r})"
                    yield "skip", (answer.qid, item.docid, item.item_id, reason, self._extra(item, extra))
                else:
                    yield "ask", item  # fmt: skip

    @staticmethod
    def _extra(item: Citation, extra: dict[str, Any]) -> dict[str, Any]:
        return {**extra, "sentence": item.sentence, "citation": item.citation}

    async def run(self, inputs: JudgeInputs, ctx: JudgeContext) -> None:
        parser = self.parser()
        params: dict[str, Any] = {"max_tokens": self.max_tokens} if self.max_tokens is not None else {}

        async def judge(entry: tuple[str, Any]) -> None:
            kind, value = entry
            if kind == "skip":
                qid, docid, item_id, reason, extra = value
                ctx.emit(
                    skipped_record(
                        ctx,
                        self.prompt,
                        reason,
                        method=self.name,
                        qid=qid,
                        docid=docid,
                        item_id=item_id,
                        extra=extra,
                    )
                )
                return
            item: Citation = value
            variables = {"statement": item.statement, "citation": inputs.corpus[item.docid]}
            answer = await ctx.ask(self.prompt, variables, parser, budget=self.answer_budget, **params)
            extra = self._extra(item, answer_extra(item.answer))
            if answer.status == "ok" and answer.parsed is not None and answer.parsed.items:
                extra["support"] = answer.parsed.items[0]
            ctx.emit(
                record_from_answer(
                    ctx,
                    self.prompt,
                    answer,
                    method=self.name,
                    qid=item.answer.qid,
                    docid=item.docid,
                    item_id=item.item_id,
                    extra=extra,
                )
            )

        await run_bounded(self._items(inputs, ctx.done), judge, limit=ctx.fan_out)

    def estimate(self, inputs: JudgeInputs) -> CallEstimate:
        """One call per distinct (sentence text, cited passage) with a passage text (two systems
        sending the same sentence and passage send one prompt: the response cache, or the client's
        sharing of an identical call in flight, answers the other; with ``--no-cache`` a repeat
        that is not in flight at the same time is a call more); with the run directory's records (a dry run
        that resumes) the items already recorded for the same answer text are not counted."""
        calls = tokens = 0
        asked: set[tuple[str, str]] = set()
        for kind, value in self._items(inputs, inputs.recorded):
            if kind != "ask" or (value.statement, value.docid) in asked:
                continue  # the same sentence citing the same passage again: one prompt, one call
            asked.add((value.statement, value.docid))
            calls += 1
            variables = {"statement": value.statement, "citation": inputs.corpus[value.docid]}
            tokens += prompt_tokens(self.prompt, variables)
        answer = self.max_tokens or self.answer_tokens
        note = (
            f"{self.name}: one call per distinct (answer sentence, cited passage) with a passage text "
            "(a repeated one is answered by the response cache)"
        )
        if inputs.resources.get("existing_records"):
            note += "; the pairs already recorded for the same answer text are not counted"
        return CallEstimate(calls, tokens, calls * answer, note=note)
