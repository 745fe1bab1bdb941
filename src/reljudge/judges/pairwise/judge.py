"""Pairwise preferences (Arabzadeh & Clarke): which of two passages answers the query better?

Every pair is judged in both orders (two calls, made together) to control position bias; the
two answers are combined by `reljudge.judges.pairwise.preferences.combine_orders`: when both orders
prefer the same passage it wins, otherwise the pair is a tie (label 0). One record per pair:
``docid``/``docid_b`` with label 1 (docid preferred), 2 (docid_b preferred) or 0 (tie); both raw
answers, both parse results and both rendered-message hashes are kept in ``extra["orders"]``.
If either order fails (API error, refusal, unreadable answer) the pair has no label: a pair is
never decided by one order alone.

Which pairs (option ``pairs``):

- ``"all"``: every pair of each topic's pool (n(n-1)/2 pairs, 2 calls each);
- ``"given"``: exactly the pairs of ``inputs.pairs`` (`validate_pairs`: a self-pair or a repeated
  pair is an error; a pair repeated in the other order is judged once, in its first order);
- ``"sampler"``: Clarke et al.'s (TOIS 2021) sampling, round by round with
  `reljudge.judges.pairwise.sampler.PreferenceSampler` (``p`` pairings per document each round; only
  documents with enough wins go on). On resume, pairs already judged are fed to the sampler from
  ``ctx.existing`` without calling again.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, ClassVar

from reljudge.errors import InputError
from reljudge.judges.base import CallEstimate, Judge, JudgeInputs, run_all, run_bounded
from reljudge.judges.call_records import answer_provenance, key, skipped_record, unreadable_record
from reljudge.judges.context import JudgeContext
from reljudge.judges.items import passage_problem, topic_problem
from reljudge.judges.option_checks import check_choice, check_max_tokens, check_output, resolve_prompt
from reljudge.judges.pairwise.preferences import WIN_COUNTS
from reljudge.judges.pairwise.sampler import sampler_pair_bound
from reljudge.judges.reading import Parser, clip
from reljudge.judges.registry import register
from reljudge.judges.token_count import prompt_tokens
from reljudge.records import Judgment

if TYPE_CHECKING:
    from reljudge.aggregation.score_sets import AggregatedScores, ScoreMeaning
    from reljudge.judges.reading import Answer
    from reljudge.prompts import PromptTemplate

PAIR_SELECTIONS = ("all", "given", "sampler")
#: the names the win counts of pairwise records go by (``preferences``: the published files)
PAIRWISE_NAMES = ("pairwise", "preferences")
FINAL_POOL = 9  # the sampler compares all pairs once at most this many candidates remain


class PairwiseJudge(Judge):
    """Judge pairs of passages in both orders; see the module docstring."""

    name = "pairwise"
    default_prompt = "pairwise/clarke"
    answer_tokens: ClassVar[int] = 2
    #: the answer length sent as ``max_tokens`` when neither the judge nor the run sets one
    answer_budget: ClassVar[int] = 1024

    def __init__(
        self,
        prompt: str | PromptTemplate | None = None,
        pairs: str = "all",
        p: int = 7,
        seed: int = 0,
        max_tokens: int | None = None,
    ) -> None:
        self.prompt: PromptTemplate = resolve_prompt(prompt if prompt is not None else self.default_prompt)
        check_output(self.prompt, ("pairwise",), self.name)
        check_choice("pairs", pairs, PAIR_SELECTIONS)
        if not isinstance(p, int) or p < 1:
            raise TypeError(f"p must be a positive integer, got {p!r}")
        check_max_tokens(max_tokens)
        self.pairs = pairs
        self.p = p
        self.seed = seed
        self.max_tokens = max_tokens
        self.method = self.name
        #: comparisons made (or taken from an earlier run) per topic, after `run`
        self.comparisons: dict[str, int] = {}
        #: the sampler's ranking of each topic's pool (pairs="sampler" only), after `run`
        self.rankings: dict[str, list[str]] = {}

    @property
    def label_methods(self) -> tuple[str, ...]:  # type: ignore[override]
        return (self.method,)

    def parser(self) -> Parser:
        """Reads an answer by the prompt's output contract (1 = first shown, 2 = second)."""
        return self.prompt.output.parse

    def variables(self, query: str, first: str, second: str) -> dict[str, str]:
        return {"query": query, "documentA": first, "documentB": second}

    def chat_params(self) -> dict[str, Any]:
        return {} if self.max_tokens is None else {"max_tokens": self.max_tokens}

    # -- running ---------------------------------------------------------------------------

    async def run(self, inputs: JudgeInputs, ctx: JudgeContext) -> None:
        parser = self.parser()
        if self.pairs == "sampler":
            # one sampler per topic; each judges a round of pairs at a time (a bounded batch)
            await run_bounded(
                inputs.pool, lambda qid: self._run_sampler(inputs, ctx, parser, qid), limit=ctx.fan_out
            )
            return
        fixed = self._fixed_pairs(inputs)
        for qid, pairs in fixed.items():
            self.comparisons[qid] = len(pairs)
        todo = (
            (qid, a, b)
            for qid, pairs in fixed.items()
            for a, b in pairs
            if self._done(ctx, qid, a, b) is None
        )

        async def judge(item: tuple[str, str, str]) -> None:
            await self.judge_pair(inputs, ctx, parser, *item)

        # a pair makes two calls: half as many pairs as single items keep the client as busy
        await run_bounded(todo, judge, limit=max(1, ctx.fan_out // 2))

    def _fixed_pairs(self, inputs: JudgeInputs) -> dict[str, list[tuple[str, str]]]:
        if self.pairs == "given":
            if inputs.pairs is None:
                raise InputError("pairs='given' needs explicit pairs (a pairs file)")
            return {qid: _given_pairs(qid, pairs) for qid, pairs in inputs.pairs.items()}
        from reljudge.judges.pairwise.sampler import all_pairs

        return {qid: list(all_pairs(_unique(docids))) for qid, docids in inputs.pool.items()}

    def _done(self, ctx: JudgeContext, qid: str, a: str, b: str) -> Judgment | None:
        return ctx.done(key(self.method, qid, a, b))

    async def _run_sampler(self, inputs: JudgeInputs, ctx: JudgeContext, parser: Parser, qid: str) -> None:
        from reljudge.judges.pairwise.sampler import PreferenceSampler

        sampler = PreferenceSampler(
            _unique(inputs.pool[qid]), p=self.p, seed=self.seed, final_pool=FINAL_POOL
        )
        while not sampler.done:
            batch = sampler.next_pairs()
            known: dict[tuple[str, str], tuple[int | float | None, bool]] = {}
            todo: list[tuple[str, str]] = []
            for a, b in batch:
                found = self._done(ctx, qid, a, b)
                flipped = self._done(ctx, qid, b, a) if found is None else None
                if found is not None:
                    known[(a, b)] = (found.label, found.ok)
                elif flipped is not None:
                    known[(a, b)] = ({1: 2, 2: 1}.get(flipped.label, flipped.label), flipped.ok)  # type: ignore[arg-type]
                else:
                    todo.append((a, b))
            judged = await run_all([self.judge_pair(inputs, ctx, parser, qid, a, b) for a, b in todo])
            for pair, record in zip(todo, judged, strict=True):
                known[pair] = (record.label, record.ok)
            for a, b in batch:
                label, ok = known[(a, b)]
                if not ok or label is None:
                    sampler.record_failure(a, b)
                else:
                    sampler.record(a, b, a if label == 1 else b if label == 2 else None)
        self.comparisons[qid] = sampler.comparisons
        self.rankings[qid] = sampler.ranking()

    async def judge_pair(
        self, inputs: JudgeInputs, ctx: JudgeContext, parser: Parser, qid: str, a: str, b: str
    ) -> Judgment:
        """Judge (a, b) in both orders, emit the pair's record and return it."""
        problem = (
            topic_problem(inputs.topics, qid)
            or passage_problem(inputs.corpus, a)
            or passage_problem(inputs.corpus, b)
        )
        if problem is not None:
            return ctx.emit(
                skipped_record(ctx, self.prompt, problem, method=self.method, qid=qid, docid=a, docid_b=b)
            )
        query, text_a, text_b = inputs.topics[qid], inputs.corpus[a], inputs.corpus[b]
        params = self.chat_params()
        forward, backward = await asyncio.gather(
            ctx.ask(
                self.prompt,
                self.variables(query, text_a, text_b),
                parser,
                budget=self.answer_budget,
                **params,
            ),
            ctx.ask(
                self.prompt,
                self.variables(query, text_b, text_a),
                parser,
                budget=self.answer_budget,
                **params,
            ),
        )
        return ctx.emit(self._pair_record(ctx, qid, a, b, forward, backward))

    def _pair_record(
        self, ctx: JudgeContext, qid: str, a: str, b: str, forward: Answer, backward: Answer
    ) -> Judgment:
        from reljudge.judges.pairwise.preferences import combine_orders

        fields: dict[str, Any] = {"qid": qid, "docid": a, "docid_b": b, "method": self.method}
        provenance = answer_provenance(ctx, self.prompt, forward).model_copy(
            update={
                "usage": forward.usage + backward.usage,
                "latency_s": max(forward.result.latency_s, backward.result.latency_s),
                "cached": forward.result.cached and backward.result.cached,
                "attempts": forward.attempts + backward.attempts,
            }
        )
        raw = (
            f"[{a} shown first]\n{clip(forward.result.text)}\n[{b} shown first]\n{clip(backward.result.text)}"
        )
        how = f"{forward.how}|{backward.how}"
        try:
            orders = []
            for shown, answer in (((a, b), forward), ((b, a), backward)):
                orders.append(
                    {
                        "first": shown[0],
                        "status": answer.status,
                        "label": answer.label,
                        "parse": answer.how,
                        "error": answer.error,
                        "raw": clip(answer.result.text),
                        "messages_sha256": answer.result.messages_sha256,
                        **answer.extra(),
                    }
                )
            failed = [o for o in orders if o["status"] != "ok"]
            if failed:
                status = failed[0]["status"]
                label = None
                error = "; ".join(f"order {o['first']} first: {o['error']}" for o in failed)
            else:
                status, error = "ok", None
                label = combine_orders(orders[0]["label"], orders[1]["label"])
            return Judgment(
                **fields,
                label=label,
                status=status,
                raw=raw,
                error=error,
                parse=how,
                extra={
                    "orders": {
                        name: {k: v for k, v in o.items() if v is not None}
                        for name, o in zip(("ab", "ba"), orders, strict=True)
                    }
                },
                provenance=provenance,
            )
        except Exception as err:  # one odd answer must never end the job
            return unreadable_record(fields, raw, how, err, provenance)

    # -- what the toolkit asks a judge -----------------------------------------------------

    @classmethod
    def adapt_options(cls, options: Mapping[str, Any], *, pairs_given: bool = False) -> dict[str, Any]:
        """With a pairs file, judge exactly its pairs (``pairs="given"``) unless chosen otherwise."""
        adapted = dict(options)
        if pairs_given:
            adapted.setdefault("pairs", "given")
        return adapted

    def estimate_growth(self, inputs: JudgeInputs) -> list[dict[str, Any]]:
        """Calls by pool depth (documents per topic), every pair against the sampler; nothing
        when the pairs are given."""
        if self.pairs == "given" or inputs.pairs is not None:
            return []
        variants = {name: type(self)(prompt=self.prompt, pairs=name, p=self.p, seed=self.seed,
                                     max_tokens=self.max_tokens) for name in ("all", "sampler")}  # fmt: skip
        depth = max((len(d) for d in inputs.pool.values()), default=0)
        rows = []
        for d in [d for d in (5, 10, 20, 50, 100, 200) if d < depth] + [depth]:
            sub = replace(inputs, pool={q: list(docs)[:d] for q, docs in inputs.pool.items()})
            row: dict[str, Any] = {
                "depth": d,
                "pairs": sum(len(x) * (len(x) - 1) // 2 for x in sub.pool.values()),
            }
            row.update({name: j.estimate(sub).calls for name, j in variants.items()})
            rows.append(row)
        return rows

    @classmethod
    def claims_name(cls, name: str) -> bool:
        """``pairwise`` and its alias ``preferences`` name this method's win counts."""
        return name in PAIRWISE_NAMES or super().claims_name(name)

    @classmethod
    def score_meaning(cls, set_name: str) -> ScoreMeaning | None:
        """Win counts (`WIN_COUNTS`): not gains, relevant when a document won a comparison."""
        return WIN_COUNTS if set_name == cls.name or cls.claims_name(set_name) else None

    @classmethod
    def scores_for(cls, name: str, records: Sequence[Any], **options: Any) -> AggregatedScores:
        """Win counts for ``pairwise`` (alias ``preferences``); any other name is scored by its
        records' shape (`reljudge.judges.shape_scoring.shape_scores`)."""
        from reljudge.judges.shape_scoring import shape_scores

        result = shape_scores(name, records, pairwise=name in PAIRWISE_NAMES, **options)
        if name in PAIRWISE_NAMES:
            result.method = "pairwise"
        return result

    # -- estimating ------------------------------------------------------------------------

    def estimate(self, inputs: JudgeInputs) -> CallEstimate:
        answer = self.max_tokens or self.answer_tokens
        if self.pairs == "sampler":
            return self._estimate_sampler(inputs, answer)
        if self.pairs == "all":
            return self._estimate_all(inputs, answer)
        from reljudge.judges.token_count import (
            TextTokens,
            active_tokenizer,
            columns_tokens,
            linear_terms,
            tokenizer_sum_tokens,
            tokenizer_terms,
        )

        counter = active_tokenizer()  # the model's tokenizer, when the dry-run has one
        terms = tokenizer_terms(self.prompt, self.variables, 3, counter) if counter is not None else None
        queries, docs = (TextTokens(counter), TextTokens(counter)) if counter is not None else (None, None)
        pairs = self._fixed_pairs(inputs)
        calls = 0
        sums = [0, 0, 0]  # the token counts of the query, first and second passage, summed
        lengths: tuple[list[int], list[int], list[int]] = ([], [], [])  # query, first, second
        for qid, qpairs in pairs.items():
            for a, b in qpairs:
                if (
                    topic_problem(inputs.topics, qid)
                    or passage_problem(inputs.corpus, a)
                    or passage_problem(inputs.corpus, b)
                ):
                    continue
                calls += 2
                if terms is not None and queries is not None and docs is not None:
                    sums[0] += queries(qid, inputs.topics[qid])
                    sums[1] += docs(a, inputs.corpus[a])
                    sums[2] += docs(b, inputs.corpus[b])
                    continue
                lengths[0].append(len(inputs.topics[qid]))
                lengths[1].append(len(inputs.corpus[a]))
                lengths[2].append(len(inputs.corpus[b]))
        # every prompt's tokens from the texts' lengths, none rendered (`reljudge.judges.token_count`)
        if terms is not None:
            tokens = 2 * tokenizer_sum_tokens(terms, calls // 2, sums)
        else:
            tokens = 2 * columns_tokens(linear_terms(self.prompt, self.variables, 3), lengths)
        n_pairs = sum(len(p) for p in pairs.values())
        note = f"pairwise: {n_pairs} pairs x 2 orders"
        if self.pairs == "all":
            note += " (all pairs grow as n(n-1)/2 with pool size n; pairs='sampler' stays below p*n)"
        source = counter.source if counter is not None else None
        return CallEstimate(calls, tokens, calls * answer, note=note, records=calls // 2, tokenizer=source)

    def _estimate_all(self, inputs: JudgeInputs, answer: int) -> CallEstimate:
        """Every pair of each topic's pool in both orders, counted without building the pairs or
        rendering a prompt per pair (`reljudge.judges.token_count`): the count and tokens of the
        loop over the pairs, in O(n) per topic."""
        from reljudge.judges.token_count import (
            active_tokenizer,
            all_pairs_tokens,
            linear_terms,
            tokenizer_all_pairs_tokens,
            tokenizer_terms,
        )

        counter = active_tokenizer()  # the model's tokenizer, when the dry-run has one
        if counter is not None:
            terms = tokenizer_terms(self.prompt, self.variables, 3, counter)
        else:
            terms = linear_terms(self.prompt, self.variables, 3)
        calls = tokens = n_pairs = 0
        for qid, docids in inputs.pool.items():
            docs = _unique(docids)
            n_pairs += len(docs) * (len(docs) - 1) // 2
            if topic_problem(inputs.topics, qid):
                continue
            texts = [str(inputs.corpus[d]) for d in docs if not passage_problem(inputs.corpus, d)]
            calls += len(texts) * (len(texts) - 1)
            query = str(inputs.topics[qid])
            if counter is not None:
                counts = [counter.text(text) for text in texts]
                tokens += 2 * tokenizer_all_pairs_tokens(terms, counter.text(query), counts)
            else:
                tokens += 2 * all_pairs_tokens(terms, len(query), [len(text) for text in texts])
        note = f"pairwise: {n_pairs} pairs x 2 orders"
        note += " (all pairs grow as n(n-1)/2 with pool size n; pairs='sampler' stays below p*n)"
        source = counter.source if counter is not None else None
        return CallEstimate(calls, tokens, calls * answer, note=note, records=calls // 2, tokenizer=source)

    def _estimate_sampler(self, inputs: JudgeInputs, answer: int) -> CallEstimate:
        from reljudge.judges.token_count import active_tokenizer, tokenizer_terms

        counter = active_tokenizer()  # the model's tokenizer, when the dry-run has one
        terms = tokenizer_terms(self.prompt, self.variables, 3, counter) if counter is not None else None
        calls = tokens = all_calls = 0
        for qid, docids in inputs.pool.items():
            docs = _unique(docids)
            n = len(docs)
            all_calls += n * (n - 1)
            pairs = sampler_pair_bound(n, self.p, FINAL_POOL)
            calls += 2 * pairs
            if counter is not None and terms is not None:
                # a pair's tokens are linear in its values' tokens: at the mean passage's tokens,
                # the mean over all pairs of the topic
                counts = [counter.text(str(inputs.corpus.get(d, ""))) for d in docs]
                mean = sum(counts) / n if n else 0.0
                query = counter.text(str(inputs.topics.get(qid, "")))
                per_call = sum(t + kq * query + (ka + kb) * mean for t, kq, ka, kb in terms)
                tokens += round(2 * pairs * per_call)
                continue
            lengths = [len(inputs.corpus.get(d, "")) for d in docs]
            mean_len = sum(lengths) / n if n else 0
            sample = "x" * int(mean_len)
            if pairs:
                tokens += (
                    2
                    * pairs
                    * prompt_tokens(self.prompt, self.variables(inputs.topics.get(qid, ""), sample, sample))
                )
        note = (
            f"pairwise sampler (p={self.p}): an upper-bound estimate of {calls} calls "
            f"(p*n/2 pairs per round, pool about halving each round); all pairs would take {all_calls} calls"
        )
        source = counter.source if counter is not None else None
        return CallEstimate(calls, tokens, calls * answer, note=note, records=calls // 2, tokenizer=source)


def _unique(docids: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(docids))


def _given_pairs(qid: str, pairs: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    """The explicit pairs of a topic, checked (`reljudge.judges.pairwise.sampler.validate_pairs`): a
    document paired with itself or a repeated pair is an `InputError`; a pair repeated in the
    other order is dropped, since every pair is judged in both orders anyway."""
    from reljudge.judges.pairwise.sampler import PairError, validate_pairs

    try:
        return validate_pairs(pairs, reversed_repeats="drop")
    except PairError as err:
        raise InputError(f"topic {qid!r}: {err}") from None


register(PairwiseJudge)

__all__ = ["PAIRWISE_NAMES", "PAIR_SELECTIONS", "PairwiseJudge"]
