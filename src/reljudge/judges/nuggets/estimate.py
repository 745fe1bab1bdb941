"""How a nugget run's work grows, for ``--dry-run``: calls and tokens of its three stages.

Over passages, the calls from scratch, with typical nuggets standing in for the ones not yet made.
Over answers (``--answers``), the calls the run would make now: for a topic whose nuggets the run
directory already holds (``resources["existing_records"]``, given to a dry run), exactly one
assignment call per batch of the selected nuggets not yet assigned to each answer (answers not
retried: a retry of an unreadable answer is not counted); for the other topics, the creation
windows not yet done, and scoring and assignment assuming ``max_nuggets`` nuggets are created.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from reljudge.judges.base import CallEstimate, JudgeInputs
from reljudge.judges.call_records import key
from reljudge.judges.items import topic_problem
from reljudge.judges.nuggets.answers import answers_of, targets, topics_to_judge
from reljudge.judges.token_count import prompt_tokens
from reljudge.prompts import PromptTemplate


class NuggetSettings(Protocol):
    """What an estimate reads of a nugget judge (`reljudge.judges.nuggets.judge.NuggetJudge`)."""

    create_from: str
    window_size: int
    max_nuggets: int
    batch_size: int
    top_k: int | None
    create_prompt: PromptTemplate
    score_prompt: PromptTemplate
    prompt: PromptTemplate

    def sources(self, inputs: JudgeInputs, qid: str) -> Sequence[str]: ...


#: what a nugget looks like to an estimate (its length counts, not its words)
TYPICAL_NUGGET = "a short atomic fact of about eight words"


def estimate_calls(self: NuggetSettings, inputs: JudgeInputs) -> CallEstimate:
    """The calls of a nugget run (see the module docstring): creation windows, scoring batches
    and assignment batches."""
    from reljudge.judges.nuggets.scores import select_nuggets
    from reljudge.judges.nuggets.sets import ASSIGN_METHOD, CREATION_METHOD, recorded_nuggets

    answers = answers_of(inputs) is not None
    existing: Mapping[Any, Any] = (inputs.resources.get("existing_records") or {}) if answers else {}
    earlier = recorded_nuggets(existing)
    prompt_toks = answer_toks = 0
    create = score = assign = 0
    exact = assumed = 0
    for qid in topics_to_judge(inputs):
        if topic_problem(inputs.topics, qid) or qid not in inputs.pool:
            continue
        if self.create_from == "qrels" and inputs.qrels is None:
            continue
        query = inputs.topics[qid]
        usable = [t for t in targets(inputs, qid) if t.problem is None]

        if earlier.get(qid):
            exact += 1
            selected = select_nuggets([n for n in earlier[qid] if n.importance is not None], k=self.top_k)
            for target in usable:
                todo = [
                    n.text
                    for n in selected
                    if not target.done(existing.get(key(ASSIGN_METHOD, qid, target.id, "", n.id)))
                ]
                for i in range(0, len(todo), self.batch_size):
                    assign += 1
                    prompt_toks += _assign_tokens(self, query, todo[i : i + self.batch_size], target.text)
                    answer_toks += 6 * len(todo[i : i + self.batch_size])
            continue
        sources = self.sources(inputs, qid)
        if not sources:
            continue
        assumed += 1
        typical = [TYPICAL_NUGGET] * self.max_nuggets
        for i, start in enumerate(range(0, len(sources), self.window_size)):
            done = existing.get(key(CREATION_METHOD, qid, "", "", f"window/{i}"))
            if done is not None and done.ok and isinstance(done.extra.get("nuggets"), list):
                continue  # a resumed run goes on from this window's list
            create += 1
            context = "\n".join(
                f"[{j + 1}] {inputs.corpus[d]}"
                for j, d in enumerate(sources[start : start + self.window_size])
            )
            prompt_toks += prompt_tokens(
                self.create_prompt,
                {
                    "query": query,
                    "context": context,
                    "nuggets": repr(typical),
                    "nuggets_length": str(len(typical)),
                    "max_nuggets": str(self.max_nuggets),
                },
            )
            answer_toks += 12 * self.max_nuggets
        n_score = math.ceil(self.max_nuggets / self.batch_size)
        score += n_score
        batch = typical[: self.batch_size]
        prompt_toks += n_score * prompt_tokens(
            self.score_prompt, {"query": query, "nuggets": repr(batch), "num_nuggets": str(len(batch))}
        )
        answer_toks += n_score * 4 * len(batch)
        k = min(self.top_k or self.max_nuggets, self.max_nuggets)
        per_target = math.ceil(k / self.batch_size)
        for target in usable:
            assign += per_target
            prompt_toks += per_target * _assign_tokens(self, query, batch, target.text)
            answer_toks += per_target * 6 * len(batch)
    calls = create + score + assign
    what = "answers" if answers else "passages"
    note = f"nuggets: {create} creation, {score} scoring, {assign} assignment calls ({what}"
    if answers:
        note += f"; {exact} topic(s) with nuggets in the run directory: exact"
        if assumed:
            note += f"; {assumed} topic(s) assuming {self.max_nuggets} nuggets each"
    else:
        note += f"; assuming {self.max_nuggets} nuggets per topic"
    note += "; retries not counted)"
    from reljudge.judges.token_count import active_tokenizer

    counter = active_tokenizer()  # `prompt_tokens` counted with it when the dry-run has one
    return CallEstimate(
        calls, prompt_toks, answer_toks, note=note, tokenizer=counter.source if counter is not None else None
    )


def _assign_tokens(self: NuggetSettings, query: str, nuggets: Sequence[str], text: str) -> int:
    variables = {"query": query, "document": text, "nuggets": repr(list(nuggets))}
    return prompt_tokens(self.prompt, {**variables, "num_nuggets": str(len(nuggets))})
