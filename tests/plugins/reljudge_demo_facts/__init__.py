"""A third-party judge, as a plugin package would ship it (used by tests/judges/test_plugin_judge.py).

"Demo facts": each topic has a few facts (from the query's words); each pooled passage is asked,
fact by fact, whether it states the fact. Records are per item -- ``method="demo-fact"``,
``docid`` and ``item_id`` (the fact) -- and the method scores them itself: ``demo-facts-share``,
the share of a topic's facts a passage states. Nothing outside this package knows the method.

The package also ships a pointwise judge the way a new one is added, one module and one template:
``demo-grade`` (`reljudge_demo_facts.grade`, its prompt ``demo-grade.yaml``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from reljudge.aggregation import AggregatedScores, Exclusions
from reljudge.judges import CallEstimate, Judge, JudgeContext, JudgeInputs, run_bounded
from reljudge.judges.call_records import record_from_answer
from reljudge.judges.items import passage_problem
from reljudge.prompts import PromptTemplate
from reljudge.records import Judgment

FACT_METHOD = "demo-fact"
SHARE = "demo-facts-share"


class DemoFactsJudge(Judge):
    """Asks, per passage and fact, whether the passage states the fact."""

    name = "demo-facts"
    label_methods: ClassVar[tuple[str, ...]] = (FACT_METHOD,)
    set_names: ClassVar[tuple[str, ...]] = (SHARE,)

    def __init__(self, facts: int = 2, wording: str = "Does the passage state this fact?") -> None:
        if not isinstance(facts, int) or facts < 1:
            raise TypeError(f"facts must be a positive integer, got {facts!r}")
        self.facts = facts
        self.prompt = PromptTemplate.from_messages(
            "demo-facts/states-fact",
            "You are a careful assessor.",
            f"Fact: {{question}}\nPassage: {{document}}\n{wording} Answer 1 for yes and 0 for no.",
            "binary",
        )

    def _facts(self, query: str) -> list[tuple[str, str]]:
        words = [w for w in query.split() if len(w) > 3] or query.split()
        return [
            (f"fact{i}", f"fact {i + 1}: the passage is about {words[i % len(words)]}")
            for i in range(self.facts)
        ]

    async def run(self, inputs: JudgeInputs, ctx: JudgeContext) -> None:
        parse = self.prompt.output.parse
        items = [
            (qid, docid, fact_id, text)
            for qid, docids in inputs.pool.items()
            for docid in dict.fromkeys(docids)
            for fact_id, text in self._facts(inputs.topics[qid])
            if ctx.done((FACT_METHOD, qid, docid, "", fact_id)) is None
        ]

        async def ask(item: tuple[str, str, str, str]) -> None:
            qid, docid, fact_id, text = item
            if passage_problem(inputs.corpus, docid) is not None:
                return
            answer = await ctx.ask(self.prompt, {"question": text, "document": inputs.corpus[docid]}, parse)
            ctx.emit(
                record_from_answer(
                    ctx, self.prompt, answer, method=FACT_METHOD, qid=qid, docid=docid, item_id=fact_id
                )
            )

        await run_bounded(items, ask, limit=ctx.fan_out)

    def estimate(self, inputs: JudgeInputs) -> CallEstimate:
        calls = sum(len(set(d)) for d in inputs.pool.values()) * self.facts
        return CallEstimate(calls, calls * 60, calls * 2, note=f"demo-facts: {self.facts} facts per passage")

    @classmethod
    def owns(cls, record: Any) -> bool:
        return record.method == FACT_METHOD and record.item_id is not None

    @classmethod
    def score_records(cls, records: Sequence[Judgment], **options: Any) -> dict[str, AggregatedScores]:
        stated: dict[tuple[str, str], list[float]] = {}
        exclusions = Exclusions()
        for r in records:
            if r.method != FACT_METHOD or r.docid is None:
                continue
            if r.status != "ok" or r.label is None:
                exclusions.failed[r.status] += 1
                continue
            stated.setdefault((r.qid, r.docid), []).append(float(r.label))
        if not stated and not exclusions.n_failed:
            return {}
        scores: dict[str, dict[str, float]] = {}
        for (qid, docid), labels in stated.items():
            scores.setdefault(qid, {})[docid] = sum(labels) / len(labels)
        return {SHARE: AggregatedScores(SHARE, scores, exclusions, family=cls.name, primary=True)}

    @property
    def primary_set(self) -> str:
        return SHARE
