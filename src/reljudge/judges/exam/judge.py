"""EXAM (Sander & Dietz 2021; FLAN-T5-EXAM / Autograder Workbench): does a passage answer the
topic's exam questions?

Stage 1 writes the exam: one call per topic with the query alone (``exam/question-generation``,
the ten-question prompt of the FLAN-T5-EXAM appendix), unless a question bank is given in
``inputs.resources["question_bank"]`` (a `reljudge.judges.exam.scores.QuestionBank`), in which
case no question is generated. Each question becomes a record ``method="exam-question"``,
``item_id = qid/md5(text)``, ``extra={"text": ..., "index": i}``, no label; a resumed run reuses
them.

Stage 2 grades every (question, passage) pair: ``mode="binary"`` asks the answerability prompt
(``exam/answerability``: the model answers the question from the passage; 1 unless the answer
is an "unanswerable" expression), ``mode="graded"`` the 0–5 self-rating (``exam/self-rating``).
Records: ``method="exam"``, ``docid``, ``item_id`` (the question id), label 0/1 or 0–5, and
``extra["scale"]`` (the mode, ``"binary"`` or ``"graded"``: which scale the label is on).
Passage scores (fraction answered, max or mean rating) are computed by
`reljudge.judges.exam.scores`; `reljudge.judges.exam.sets` names them and picks them by the scale.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reljudge.errors import InputError
from reljudge.judges.base import CallEstimate, Judge, JudgeInputs, Resource, run_bounded
from reljudge.judges.call_records import (
    answer_provenance,
    key,
    record_from_answer,
    skipped_record,
    without_usage,
)
from reljudge.judges.context import JudgeContext
from reljudge.judges.exam.sets import (
    EXAM_MEANINGS,
    EXAM_SCALES,
    EXAM_SETS,
    GRADE_METHOD,
    QUESTION_METHOD,
    exam_sets,
)
from reljudge.judges.items import passage_problem, topic_problem
from reljudge.judges.option_checks import check_choice, check_output, resolve_prompt
from reljudge.judges.reading import Parser, clip
from reljudge.judges.registry import register
from reljudge.judges.token_count import prompt_tokens
from reljudge.prompts.parsing import Parsed
from reljudge.records import Judgment

if TYPE_CHECKING:
    from reljudge.aggregation.score_sets import AggregatedScores, ScoreMeaning
    from reljudge.judges.exam.scores import Question, QuestionBank
    from reljudge.prompts import PromptTemplate

MODES = ("binary", "graded")
_GRADING_PROMPTS = {"binary": "exam/answerability", "graded": "exam/self-rating"}
_TYPICAL_QUESTION = "What are the main causes and consequences of this topic for most people?"
#: answer lengths sent as ``max_tokens`` when neither the judge nor the run sets one
QUESTION_BUDGET = 2048
GRADE_BUDGET = 1024
#: a question longer than this is no exam question (and would bloat every grading prompt): dropped
MAX_QUESTION_CHARS = 2000


def _question_list(parse: Parser) -> Parser:
    """``parse``, with an answer that lists no question unreadable (so it is asked again)."""

    def read(text: str) -> Parsed:
        parsed = parse(text)
        if parsed.status == "ok" and not any(t and t.strip() for t in parsed.items or ()):
            return Parsed(None, "unparsed", "no-questions")
        return parsed

    return read


@register
class ExamJudge(Judge):
    """Generate (or take) exam questions per topic, then grade each passage on each question."""

    name = "exam"
    default_prompt = "exam/answerability"
    label_methods = (GRADE_METHOD,)
    stage_methods = (QUESTION_METHOD,)
    set_names = EXAM_SETS
    resources = (
        Resource(
            "question_bank",
            read=lambda path: read_question_bank(path),
            dataset_file="exam_questions",
            help="grade an existing question bank (<qid>_<n><TAB>question) instead of generating questions",
        ),
    )

    def __init__(
        self,
        mode: str = "binary",
        prompt: str | PromptTemplate | None = None,
        question_prompt: str | PromptTemplate = "exam/question-generation",
        n_questions: int = 10,
        max_tokens: int | None = None,
        question_max_tokens: int | None = None,
    ) -> None:
        check_choice("mode", mode, MODES)
        if not isinstance(n_questions, int) or n_questions < 1:
            raise TypeError(f"n_questions must be a positive integer, got {n_questions!r}")
        self.mode = mode
        self.prompt: PromptTemplate = resolve_prompt(prompt if prompt is not None else _GRADING_PROMPTS[mode])
        self.question_prompt: PromptTemplate = resolve_prompt(question_prompt, option="question_prompt")
        check_output(self.prompt, ("binary",) if mode == "binary" else ("graded",), f"exam ({mode} mode)")
        check_output(self.question_prompt, ("questions", "nuggets"), "exam", option="question_prompt")
        self.n_questions = n_questions
        self.max_tokens = max_tokens
        self.question_max_tokens = question_max_tokens
        #: questions used per topic after `run` (generated, reused or from the bank)
        self.questions: dict[str, list[Question]] = {}

    def grade_parser(self) -> Parser:
        """Reads a grade by the grading prompt's output contract."""
        return self.prompt.output.parse

    # -- scoring ---------------------------------------------------------------------------

    @classmethod
    def owns(cls, record: Any) -> bool:
        """Questions, and grades of a question on a passage (a plain per-passage record that
        happens to be called ``exam`` is a pointwise label)."""
        return record.method == QUESTION_METHOD or (
            record.method == GRADE_METHOD and record.item_id is not None
        )

    @classmethod
    def check_score_options(cls, options: Mapping[str, Any]) -> None:
        scale = options.get("exam_scale")
        if scale is not None and scale not in EXAM_SCALES:
            raise ValueError(f"exam_scale must be one of {', '.join(EXAM_SCALES)}, not {scale!r}")

    @classmethod
    def claims_name(cls, name: str) -> bool:
        return name == cls.name or name.startswith(cls.name + "-") or name in cls.set_names

    @classmethod
    def score_meaning(cls, set_name: str) -> ScoreMeaning | None:
        """`EXAM_MEANINGS`: relevant when the passage answers a question (score > 0); only the
        highest self-rating is a gain."""
        return EXAM_MEANINGS.get(set_name)

    @classmethod
    def score_records(cls, records: Sequence[Any], **options: Any) -> dict[str, AggregatedScores]:
        """``exam-binary`` (0/1 answerability) or ``exam-graded-max`` and ``exam-graded-mean``
        (0-5 self-ratings); options ``exam_scale``, ``question_bank``, ``on_failure``."""
        return exam_sets(
            records,
            exam_scale=options.get("exam_scale"),
            question_bank=options.get("question_bank"),
            on_failure=options.get("on_failure", "exclude"),
        )

    @classmethod
    def scores_for(cls, name: str, records: Sequence[Any], **options: Any) -> AggregatedScores:
        """One EXAM score from grade records: ``exam`` (with ``score``, default ``binary``) or
        ``exam-<score>``; ``questions`` (a bank: every question counts, a missing grade as
        unanswered) and ``min_rating`` (answerability from 0-5 self-ratings) as in `exam_scores`."""
        from reljudge.aggregation.score_sets import AggregatedScores, split_set_name
        from reljudge.judges.exam.scores import EXAM_SCORES, exam_scores

        choice = split_set_name(name, cls.name, "binary", options.get("score"), EXAM_SCORES)
        exam = exam_scores(
            [r for r in records if r.method == GRADE_METHOD or r.method not in cls.stage_methods],
            choice,  # type: ignore[arg-type]
            questions=options.get("questions"),
            min_rating=options.get("min_rating"),
            on_failure=options.get("on_failure", "exclude"),
        )
        return AggregatedScores(
            method=f"exam-{choice}",
            scores=exam.scores,
            exclusions=exam.exclusions,
            details={"score": choice},
            meaning=EXAM_MEANINGS[f"exam-{choice}"],
        )

    def score_options(self) -> dict[str, Any]:
        return {"exam_scale": self.mode}

    @property
    def primary_set(self) -> str:
        return "exam-graded-max" if self.mode == "graded" else "exam-binary"

    # -- running ---------------------------------------------------------------------------

    async def run(self, inputs: JudgeInputs, ctx: JudgeContext) -> None:
        bank = _question_bank(inputs)
        earlier = _earlier_questions(ctx)
        await run_bounded(
            inputs.pool,
            lambda qid: self._run_topic(inputs, ctx, qid, bank, earlier.get(qid)),
            limit=ctx.fan_out,
        )

    async def _run_topic(
        self,
        inputs: JudgeInputs,
        ctx: JudgeContext,
        qid: str,
        bank: QuestionBank | None,
        earlier: list[Question] | None,
    ) -> None:
        if bank is not None:
            questions = bank[qid]
            if not questions:
                reason = f"the question bank has no questions for topic {qid!r}"
                self._emit_once(ctx, skipped_record(ctx, None, reason, method=QUESTION_METHOD, qid=qid))
                return
        elif earlier:
            questions = earlier
        else:
            generated = await self._generate(inputs, ctx, qid)
            if generated is None:
                return
            questions = generated
        self.questions[qid] = questions
        parser = self.grade_parser()
        todo = (
            (docid, question)
            for docid in dict.fromkeys(inputs.pool[qid])
            for question in questions
            if ctx.done(key(GRADE_METHOD, qid, docid, "", question.id)) is None
        )

        async def grade(item: tuple[str, Question]) -> None:
            await self._grade(inputs, ctx, parser, qid, *item)

        await run_bounded(todo, grade, limit=ctx.fan_out)

    def _emit_once(self, ctx: JudgeContext, record: Judgment) -> None:
        if ctx.done(record.key) is None:
            ctx.emit(record)

    async def _generate(self, inputs: JudgeInputs, ctx: JudgeContext, qid: str) -> list[Question] | None:
        from reljudge.judges.exam.scores import Question, question_id

        problem = topic_problem(inputs.topics, qid)
        if problem is not None:
            self._emit_once(
                ctx, skipped_record(ctx, self.question_prompt, problem, method=QUESTION_METHOD, qid=qid)
            )
            return None
        params: dict[str, Any] = (
            {} if self.question_max_tokens is None else {"max_tokens": self.question_max_tokens}
        )
        answer = await ctx.ask(
            self.question_prompt,
            {"query": inputs.topics[qid]},
            _question_list(self.question_prompt.output.parse),
            budget=QUESTION_BUDGET,
            **params,
        )
        result = answer.result
        provenance = answer_provenance(ctx, self.question_prompt, answer)
        parsed = answer.parsed
        texts: list[str] = []
        if answer.status == "ok" and parsed is not None and parsed.items:
            stripped = (t.strip() for t in parsed.items if t)
            texts = list(dict.fromkeys(t for t in stripped if t and len(t) <= MAX_QUESTION_CHARS))
        else:
            error = answer.error if parsed is None else f"no question list in the answer ({parsed.how})"
            ctx.emit(
                Judgment(
                    qid=qid,
                    method=QUESTION_METHOD,
                    status=answer.status,  # type: ignore[arg-type]
                    raw=clip(result.text),
                    error=error,
                    parse=answer.how,
                    extra=answer.extra(),
                    provenance=provenance,
                )
            )
            return None
        how = answer.how
        questions = [Question(id=question_id(qid, t), qid=qid, text=t) for t in texts[: self.n_questions]]
        for i, q in enumerate(questions):
            ctx.emit(
                Judgment(
                    qid=qid,
                    item_id=q.id,
                    method=QUESTION_METHOD,
                    raw=clip(result.text) if i == 0 else None,
                    parse=how,
                    extra={"text": q.text, "index": i},
                    provenance=provenance if i == 0 else without_usage(provenance),
                )
            )
        return questions

    async def _grade(
        self, inputs: JudgeInputs, ctx: JudgeContext, parser: Parser, qid: str, docid: str, question: Question
    ) -> None:
        fields: dict[str, Any] = {"method": GRADE_METHOD, "qid": qid, "docid": docid, "item_id": question.id}
        problem = passage_problem(inputs.corpus, docid)
        if problem is not None:
            ctx.emit(skipped_record(ctx, self.prompt, problem, **fields))
            return
        variables = {"question": question.text, "document": inputs.corpus[docid]}
        params: dict[str, Any] = {} if self.max_tokens is None else {"max_tokens": self.max_tokens}
        answer = await ctx.ask(self.prompt, variables, parser, budget=GRADE_BUDGET, **params)
        ctx.emit(record_from_answer(ctx, self.prompt, answer, extra={"scale": self.mode}, **fields))

    # -- estimating ------------------------------------------------------------------------

    def estimate(self, inputs: JudgeInputs) -> CallEstimate:
        from reljudge.judges.token_count import active_tokenizer

        bank = _question_bank(inputs)
        gen_calls = gen_tokens = 0
        grade_calls = grade_tokens = 0
        counter = active_tokenizer()  # the model's tokenizer, when the dry-run has one
        grading = _GradingTokens(self.prompt, counter) if counter is not None else None
        for qid in inputs.pool:
            if bank is not None:
                questions = [q.text for q in bank[qid]]
            else:
                if topic_problem(inputs.topics, qid):
                    continue
                gen_calls += 1
                gen_tokens += prompt_tokens(self.question_prompt, {"query": inputs.topics[qid]})
                questions = [_TYPICAL_QUESTION] * self.n_questions
            for docid in dict.fromkeys(inputs.pool[qid]):
                if passage_problem(inputs.corpus, docid):
                    continue
                for text in questions:
                    grade_calls += 1
                    if grading is not None:  # each question and passage tokenized once
                        grade_tokens += grading(text, docid, inputs.corpus[docid])
                        continue
                    grade_tokens += prompt_tokens(
                        self.prompt, {"question": text, "document": inputs.corpus[docid]}
                    )
        answer = self.max_tokens or (20 if self.mode == "binary" else 3)
        note = f"exam ({self.mode}): {gen_calls} question-generation calls, {grade_calls} grading calls"
        if bank is None:
            note += f" (assuming {self.n_questions} questions per topic)"
        return CallEstimate(
            gen_calls + grade_calls,
            gen_tokens + grade_tokens,
            gen_calls * (self.question_max_tokens or 250) + grade_calls * answer,
            note=note,
            tokenizer=counter.source if counter is not None else None,
        )


class _GradingTokens:
    """The prompt tokens of a grading call with the model's tokenizer, without rendering a
    prompt per (question, passage): the template's own tokens plus each value's, each distinct
    question and passage tokenized once (`reljudge.judges.token_count.tokenizer_terms`)."""

    def __init__(self, prompt: PromptTemplate, counter: Any) -> None:
        from reljudge.judges.token_count import TextTokens, tokenizer_terms

        self.terms = tokenizer_terms(prompt, lambda q, d: {"question": q, "document": d}, 2, counter)
        self.questions, self.passages = TextTokens(counter), TextTokens(counter)

    def __call__(self, question: str, docid: str, passage: str) -> int:
        from reljudge.judges.token_count import tokenizer_item_tokens

        counts = (self.questions(question, question), self.passages(docid, passage))
        return tokenizer_item_tokens(self.terms, counts)


def _question_bank(inputs: JudgeInputs) -> QuestionBank | None:
    from reljudge.judges.exam.scores import QuestionBank

    bank = inputs.resources.get("question_bank")
    if bank is None or isinstance(bank, QuestionBank):
        return bank
    raise InputError(f"resources['question_bank'] must be a QuestionBank, got {type(bank).__name__}")


def _earlier_questions(ctx: JudgeContext) -> dict[str, list[Question]]:
    """Questions generated by an earlier run of this job, per topic, in their original order."""
    from reljudge.judges.exam.scores import Question

    found: dict[str, list[tuple[int, Question]]] = {}
    # filter by the key's method first: `ctx.existing` may read records lazily
    for record_key in [k for k in ctx.existing if k[0] == QUESTION_METHOD]:
        record = ctx.existing[record_key]
        if record.method != QUESTION_METHOD or not record.ok or not record.item_id:
            continue
        text = record.extra.get("text")
        if not isinstance(text, str):
            continue
        index = record.extra.get("index", 0)
        found.setdefault(record.qid, []).append(
            (int(index), Question(id=record.item_id, qid=record.qid, text=text))
        )
    return {qid: [q for _, q in sorted(items, key=lambda x: x[0])] for qid, items in found.items()}


def read_question_bank(path: Path) -> QuestionBank:
    """An EXAM question bank from a ``<qid>_<n><TAB>question`` file (as shipped with the TREC DL
    data: ``exam_questions.gpt-4o.tsv``). The run reads it for the judge (`Resource`)."""
    from reljudge.judges.exam.question_files import read_exam_questions
    from reljudge.judges.exam.scores import QuestionBank

    questions = read_exam_questions(path)
    try:
        return QuestionBank.from_rows(
            (qid, text) for qid, items in questions.items() for text in items.values()
        )
    except ValueError as err:
        raise InputError(str(err), path) from None
