"""Answer generation (``judge generate``, ``judge run --method generate``): one answer per topic.

Not a judge of passages: for each topic of the pool the model is asked the topic's query through
an ``answer`` prompt (`reljudge.prompts.output.OutputSpec`) and the answer becomes one record
``method="answer"``, ``qid`` = the topic, ``extra["answer"]`` = the answer's visible text (hidden
reasoning removed, at most `reljudge.io.answers.MAX_ANSWER_CHARS` characters). The records carry
no label, so a generation run has no qrels; its answers (`GenerateJudge.generated_answers` of
its records) are written as the ``system<TAB>qid<TAB>answer`` TSV (`reljudge.io.answers`) by the
application (`reljudge.run.generated_answers`).

Everything else is the judge machinery: the same client (backends, cache, limits, retries),
provenance on every record, resume by record key (a topic answered is never asked again), and
``--dry-run`` estimates (one call per topic with a query).

Prompts: ``generate/neutral`` (the default, "Answer the question concisely: {query}") and
``generate/adversarial`` (an answer prompted to be wrong: a negative control), or any template
file whose output type is ``answer`` with a ``{query}`` placeholder.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from reljudge.io.answers import MAX_ANSWER_CHARS
from reljudge.judges.base import CallEstimate, Judge, JudgeInputs, run_bounded
from reljudge.judges.call_records import key, record_from_answer, skipped_record
from reljudge.judges.context import JudgeContext
from reljudge.judges.items import topic_problem
from reljudge.judges.option_checks import check_max_tokens, check_output, resolve_prompt
from reljudge.judges.registry import register
from reljudge.judges.token_count import prompt_tokens

if TYPE_CHECKING:
    from reljudge.aggregation.score_sets import AggregatedScores
    from reljudge.prompts import PromptTemplate

#: the record method of a generated answer
ANSWER_METHOD = "answer"
#: the answer length (tokens) sent as ``max_tokens`` unless the run sets one
ANSWER_BUDGET = 512


@register
class GenerateJudge(Judge):
    """Generate one answer per topic (see the module docstring). Options: ``prompt`` (an id or
    a template file; output type ``answer``), ``max_tokens``."""

    name = "generate"
    default_prompt = "generate/neutral"
    stage_methods = (ANSWER_METHOD,)
    reads_passages = False  # the pool is the topics; no passage is read

    def __init__(self, prompt: Any = None, max_tokens: int | None = None) -> None:
        self.prompt: PromptTemplate = resolve_prompt(prompt if prompt is not None else self.default_prompt)
        check_output(self.prompt, ("answer",), "generate")
        check_max_tokens(max_tokens)
        self.max_tokens = max_tokens

    @classmethod
    def score_records(cls, records: Sequence[Any], **options: Any) -> dict[str, AggregatedScores]:
        """Answers are not document labels: no score set."""
        return {}

    @classmethod
    def generated_answers(cls, records: Iterable[Any]) -> dict[str, str]:
        return answers_of(records)

    async def run(self, inputs: JudgeInputs, ctx: JudgeContext) -> None:
        todo = (qid for qid in inputs.pool if ctx.done(key(ANSWER_METHOD, qid)) is None)
        await run_bounded(todo, lambda qid: self._answer(inputs, ctx, qid), limit=ctx.fan_out)

    async def _answer(self, inputs: JudgeInputs, ctx: JudgeContext, qid: str) -> None:
        problem = topic_problem(inputs.topics, qid)
        if problem is not None:
            ctx.emit(skipped_record(ctx, self.prompt, problem, method=ANSWER_METHOD, qid=qid))
            return
        params: dict[str, Any] = {} if self.max_tokens is None else {"max_tokens": self.max_tokens}
        answer = await ctx.ask(
            self.prompt,
            {"query": inputs.topics[qid]},
            self.prompt.output.parse,
            budget=ANSWER_BUDGET,
            **params,
        )
        extra: dict[str, Any] = {}
        parsed = answer.parsed
        if answer.status == "ok" and parsed is not None and parsed.items:
            text = parsed.items[0]
            extra["answer"] = text[:MAX_ANSWER_CHARS]
            if len(text) > MAX_ANSWER_CHARS:
                extra["answer_chars"] = len(text)
        ctx.emit(record_from_answer(ctx, self.prompt, answer, method=ANSWER_METHOD, qid=qid, extra=extra))

    def estimate(self, inputs: JudgeInputs) -> CallEstimate:
        from reljudge.judges.token_count import active_tokenizer

        counter = active_tokenizer()  # `prompt_tokens` counts with it when the dry-run has one
        calls = tokens = 0
        for qid in inputs.pool:
            if topic_problem(inputs.topics, qid):
                continue
            calls += 1
            tokens += prompt_tokens(self.prompt, {"query": inputs.topics[qid]})
        budget = self.max_tokens or ANSWER_BUDGET
        return CallEstimate(
            calls,
            tokens,
            calls * budget,
            note=f"generate: one answer per topic, {calls} calls (answers counted at {budget} tokens each)",
            tokenizer=counter.source if counter is not None else None,
        )


def answers_of(records: Iterable[Any]) -> dict[str, str]:
    """``{qid: answer}`` of the ``ok`` answer records among ``records`` (give the latest record of
    each key), topics in the order of their records; a topic whose answer failed has none."""
    found: dict[str, str] = {}
    for record in records:
        if record.method != ANSWER_METHOD or record.status != "ok":
            continue
        text = record.extra.get("answer")
        if isinstance(text, str) and text.strip():
            found[record.qid] = text
    return found
