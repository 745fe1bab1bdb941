"""Pointwise judging: one prompt, one call and one label per (topic, passage).

`PointwiseJudge` is the shared machinery of the binary, UMBRELA and custom pointwise judges:
each pooled passage of each topic is rendered into the prompt (roles ``query`` and
``document``), sent once, and read with the judge's parser. Missing or empty texts are recorded as
``skipped`` without a call; records already in ``ctx.existing`` are not judged again.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from reljudge.aggregation.score_sets import ScoreMeaning
from reljudge.judges.base import CallEstimate, Judge, JudgeInputs, run_all, run_bounded
from reljudge.judges.call_records import key, record_from_answer, skipped_record
from reljudge.judges.context import JudgeContext
from reljudge.judges.items import passage_problem, pool_items, topic_problem
from reljudge.judges.option_checks import check_max_tokens, check_output, resolve_prompt
from reljudge.judges.reading import Parser
from reljudge.judges.token_count import prompt_tokens

if TYPE_CHECKING:
    from reljudge.prompts import PromptTemplate


#: what a pointwise judge's labels mean: grades on the human scale (``>= 2`` on TREC DL) ...
GRADES = ScoreMeaning("grades on the human scale", gains=True, grades=True)
#: ... or, for a binary prompt, 0/1 with 1 relevant
LABELS_0_1 = ScoreMeaning("labels 0/1, 1 relevant", gains=True, scale=(0, 1), cut=1)
#: the expected grades of a ``<method>-expected`` set: cut on the judge's own scale
EXPECTED_GRADES = ScoreMeaning("expected grades on the judge's scale", gains=True)


class PointwiseJudge(Judge):
    """Base of judges that label each (query, passage) on its own."""

    #: typical answer length in tokens, for estimates when ``max_tokens`` is not set
    answer_tokens: ClassVar[int] = 5
    pointwise: ClassVar[bool] = True

    def __init__(
        self,
        prompt: str | PromptTemplate | None = None,
        max_tokens: int | None = None,
        constrain: str | None = None,
    ) -> None:
        chosen = prompt if prompt is not None else self.default_prompt
        if chosen is None:
            raise TypeError("a prompt is required")
        self.prompt: PromptTemplate = resolve_prompt(chosen)
        check_output(self.prompt, self.output_types, self.name)
        check_max_tokens(max_tokens)
        self.max_tokens = max_tokens
        #: the constrained-output mechanism (`reljudge.judges.constrain`), or None
        self.constrain = constrain
        self._constraint: dict[str, Any] = {}
        if constrain is not None:
            from reljudge.judges.constrain import constraint_params

            try:
                self._constraint = constraint_params(self.prompt.output, constrain)
            except ValueError as err:
                raise TypeError(f"constrain: {err}") from None
        #: the ``method`` of the records (the registered name unless a custom judge renames it)
        self.method: str = self.name

    @property
    def label_methods(self) -> tuple[str, ...]:  # type: ignore[override]
        return (self.method,)

    @property
    def label_scale(self) -> tuple[int, ...] | None:
        """One-token grades when the prompt's declared output has them (binary, graded 0-9)."""
        from reljudge.judges.expected import one_token_scale

        return one_token_scale(self.prompt.output)

    #: output types of `reljudge.prompts.OutputSpec` this judge accepts
    output_types: ClassVar[tuple[str, ...]] = ("binary", "graded")

    #: the answer length sent as ``max_tokens`` when neither the judge nor the run sets one
    answer_budget: ClassVar[int] = 1024

    @classmethod
    def score_meaning(cls, set_name: str) -> ScoreMeaning | None:
        """The labels (a set named after the judge): 0/1 for a judge of binary prompts only, else
        grades on the human scale, relevant at the human level; ``<name>-expected``: expected
        grades, cut on the judge's scale. A judge taking both kinds of prompt (custom) declares
        nothing: its labels are read as they come."""
        from reljudge.judges.shape_scoring import EXPECTED_SUFFIX

        if set_name == cls.name + EXPECTED_SUFFIX:
            return EXPECTED_GRADES
        if set_name != cls.name:
            return None
        if cls.output_types == ("binary",):
            return LABELS_0_1
        return GRADES if "binary" not in cls.output_types else None

    def parser(self) -> Parser:
        """Reads an answer by the prompt's output contract (``prompt.output.parse``)."""
        return self.prompt.output.parse

    def chat_params(self) -> dict[str, Any]:
        params = dict(self._constraint)
        if self.max_tokens is not None:
            params["max_tokens"] = self.max_tokens
        return params

    def record_extra(self) -> dict[str, Any]:
        """What every record of this judge notes: the constrained-output mechanism, if any."""
        return {"constrained": self.constrain} if self.constrain else {}

    def variables(self, query: str, passage: str) -> dict[str, str]:
        return {"query": query, "question": query, "document": passage}

    async def run(self, inputs: JudgeInputs, ctx: JudgeContext) -> None:
        parser = self.parser()
        todo = (
            (qid, docid)
            for qid, docid in pool_items(inputs)
            if ctx.done(key(self.method, qid, docid)) is None
        )

        async def judge(item: tuple[str, str]) -> None:
            await self._judge_one(inputs, ctx, parser, *item)

        await run_bounded(todo, judge, limit=ctx.fan_out)

    async def _judge_one(
        self, inputs: JudgeInputs, ctx: JudgeContext, parser: Parser, qid: str, docid: str
    ) -> None:
        problem = topic_problem(inputs.topics, qid) or passage_problem(inputs.corpus, docid)
        if problem is not None:
            ctx.emit(skipped_record(ctx, self.prompt, problem, method=self.method, qid=qid, docid=docid))
            return
        variables = self.variables(inputs.topics[qid], inputs.corpus[docid])
        if ctx.samples > 1:
            from reljudge.judges.repeated_samples import sampled_record

            answers = await run_all(
                [
                    ctx.ask(
                        self.prompt,
                        variables,
                        parser,
                        budget=self.answer_budget,
                        **{**self.chat_params(), **ctx.sample_params(i)},
                    )
                    for i in range(ctx.samples)
                ]
            )
            record = sampled_record(
                ctx,
                self.prompt,
                answers,
                method=self.method,
                qid=qid,
                docid=docid,
                scale=self.label_scale,
                extra=self.record_extra(),
            )
            ctx.emit(record)
            return
        answer = await ctx.ask(
            self.prompt, variables, parser, budget=self.answer_budget, **self.chat_params()
        )
        ctx.emit(
            record_from_answer(
                ctx,
                self.prompt,
                answer,
                method=self.method,
                qid=qid,
                docid=docid,
                scale=self.label_scale,
                extra=self.record_extra(),
            )
        )

    def estimate(self, inputs: JudgeInputs) -> CallEstimate:
        # the tokens from the texts' lengths, without rendering a prompt per item
        # (`reljudge.judges.token_count`), when `variables` passes the texts through unchanged
        from reljudge.judges.token_count import active_tokenizer, columns_tokens, linear_terms

        linear = type(self).variables is PointwiseJudge.variables
        counter = active_tokenizer()
        if linear and counter is not None:  # the model's tokenizer (`reljudge.llm.tokens`)
            return self._estimate_with(inputs, counter)
        calls = tokens = 0
        lengths: tuple[list[int], list[int]] = ([], [])
        for qid, docid in pool_items(inputs):
            if topic_problem(inputs.topics, qid) or passage_problem(inputs.corpus, docid):
                continue
            calls += 1
            query, passage = inputs.topics[qid], inputs.corpus[docid]
            if linear:
                lengths[0].append(len(query))
                lengths[1].append(len(passage))
            else:
                tokens += prompt_tokens(self.prompt, self.variables(query, passage))
        if linear:
            tokens = columns_tokens(linear_terms(self.prompt, self.variables, 2), lengths)
        answer = self.max_tokens or self.answer_tokens
        return CallEstimate(calls, tokens, calls * answer, note=f"{self.name}: one call per (topic, passage)")

    def _estimate_with(self, inputs: JudgeInputs, counter: Any) -> CallEstimate:
        """`estimate` counting tokens with the model's tokenizer: each distinct query and passage
        tokenized once (`reljudge.judges.token_count.tokenizer_terms`)."""
        from reljudge.judges.token_count import TextTokens, tokenizer_sum_tokens, tokenizer_terms

        terms = tokenizer_terms(self.prompt, self.variables, 2, counter)
        queries, passages = TextTokens(counter), TextTokens(counter)
        calls = query_tokens = passage_tokens = 0
        for qid, docid in pool_items(inputs):
            if topic_problem(inputs.topics, qid) or passage_problem(inputs.corpus, docid):
                continue
            calls += 1
            query_tokens += queries(qid, inputs.topics[qid])
            passage_tokens += passages(docid, inputs.corpus[docid])
        tokens = tokenizer_sum_tokens(terms, calls, (query_tokens, passage_tokens))
        answer = self.max_tokens or self.answer_tokens
        note = f"{self.name}: one call per (topic, passage)"
        return CallEstimate(calls, tokens, calls * answer, note=note, tokenizer=counter.source)
