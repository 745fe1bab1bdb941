"""How a nugget run's work grows, for ``--dry-run``: calls and tokens of its three stages."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Protocol

from reljudge.judges.base import CallEstimate, JudgeInputs
from reljudge.judges.common import passage_problem, prompt_tokens, topic_problem
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
    """The calls a nugget run makes from scratch: creation windows, scoring batches and
    assignment batches, with typical nuggets standing in for the ones not yet made."""
    calls = prompt_toks = answer_toks = 0
    create = score = assign = 0
    for qid in inputs.pool:
        if topic_problem(inputs.topics, qid) or (self.create_from == "qrels" and inputs.qrels is None):
            continue
        query = inputs.topics[qid]
        sources = self.sources(inputs, qid)
        if not sources:
            continue
        n_windows = math.ceil(len(sources) / self.window_size)
        create += n_windows
        typical = [TYPICAL_NUGGET] * self.max_nuggets
        for start in range(0, len(sources), self.window_size):
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
        per_passage = math.ceil(k / self.batch_size)
        for docid in dict.fromkeys(inputs.pool[qid]):
            if passage_problem(inputs.corpus, docid):
                continue
            assign += per_passage
            prompt_toks += per_passage * prompt_tokens(
                self.prompt,
                {
                    "query": query,
                    "document": inputs.corpus[docid],
                    "nuggets": repr(batch),
                    "num_nuggets": str(len(batch)),
                },
            )
            answer_toks += per_passage * 6 * len(batch)
    calls = create + score + assign
    note = (
        f"nuggets: {create} creation, {score} scoring, {assign} assignment calls "
        f"(assuming {self.max_nuggets} nuggets per topic; retries not counted)"
    )
    from reljudge.judges.token_count import active_tokenizer

    counter = active_tokenizer()  # `prompt_tokens` counted with it when the dry-run has one
    return CallEstimate(
        calls, prompt_toks, answer_toks, note=note, tokenizer=counter.source if counter is not None else None
    )
