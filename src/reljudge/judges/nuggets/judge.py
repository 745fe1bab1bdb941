"""AutoNuggetizer (Pradeep et al., TREC 2024 RAG Track): nuggets from relevant passages, then
which nuggets each passage supports.

Per topic, as castorini/nuggetizer does, with its failure modes fixed:

1. **Create**: the passages judged relevant (human qrels grade >= ``min_grade``, default 1;
   or the whole pool with ``create_from="pool"``) are read in windows of ``window_size`` (10);
   each call gets the current nugget list and the window and returns the full updated list,
   cut to ``max_nuggets`` (30). Windows run in order. A record ``method="nugget-creation"``
   (``item_id="window/i"``) keeps each call's answer and the list after it, so a resumed run
   continues where it stopped; a failed window is recorded and skipped (the list is kept).
2. **Score**: importance vital/okay in batches of ``batch_size`` (10) nuggets.
3. **Select** the top ``top_k`` (20), vital first, stable
   (`reljudge.judges.nuggets.scores.select_nuggets`). Each nugget is a record ``method="nugget"``,
   ``item_id = qid/md5(text)``, ``extra={"text", "importance", "rank", "selected"}``.
4. **Assign** each selected nugget to each pooled passage in batches: records
   ``method="nugget-assignment"`` with ``docid``, ``item_id`` and label 1 (support), 0.5
   (partial_support) or 0 (not_support); ``extra["assignment"]`` keeps the word.

Batched answers are validated (a list of exactly one label per nugget, from the prompt's
vocabulary). An unreadable answer is retried up to ``retries`` (3) times at temperature 0.2 with
a new seed (so that the response cache does not return the same answer), then each nugget of
the batch is asked alone; what still fails is recorded with its status and no label. A topic
without relevant passages, or for which no nugget could be created, gets one ``skipped``
``nugget`` record with the reason: no nuggets are invented.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from reljudge.errors import InputError
from reljudge.judges.base import CallEstimate, Judge, JudgeInputs, run_all, run_bounded
from reljudge.judges.call_records import key, skipped_record
from reljudge.judges.context import JudgeContext
from reljudge.judges.items import passage_problem, topic_problem
from reljudge.judges.nuggets.answers import (
    ANSWERS,
    SCORE_FILES,
    Target,
    answered_pool,
    scores_of_answers,
    targets,
    topics_to_judge,
)
from reljudge.judges.nuggets.asking import CREATE_BUDGET, Reader, ask, label_items
from reljudge.judges.nuggets.sets import (
    ASSIGN_METHOD,
    CREATION_METHOD,
    NUGGET_MEANINGS,
    NUGGET_METHOD,
    NUGGET_SETS,
    RECORDED,
    nugget_sets,
    recorded_nuggets,
)
from reljudge.judges.option_checks import check_choice, check_output, resolve_prompt
from reljudge.judges.reading import clip
from reljudge.judges.registry import register
from reljudge.prompts.parsing import Parsed
from reljudge.records import Judgment

if TYPE_CHECKING:
    from reljudge.aggregation.score_sets import AggregatedScores, ScoreMeaning
    from reljudge.judges.base import AnswerScores, JudgePool, PoolRequest
    from reljudge.judges.nuggets.scores import Nugget
    from reljudge.prompts import PromptTemplate

CREATE_FROM = ("qrels", "pool")
_ASSIGN_PROMPTS = {3: "nuggets/assign", 2: "nuggets/assign-2grade"}
_VOCABULARIES = {
    "score": ("vital", "okay"),
    3: ("support", "partial_support", "not_support"),
    2: ("support", "not_support"),
}

#: a nugget longer than this is no atomic fact (and would bloat every later prompt): dropped
MAX_NUGGET_CHARS = 2000


@register
class NuggetJudge(Judge):
    """AutoNuggetizer: create, score, select and assign nuggets; see the module docstring."""

    name = "nuggets"
    default_prompt = "nuggets/assign"
    label_methods = (ASSIGN_METHOD,)
    stage_methods = (NUGGET_METHOD, CREATION_METHOD)
    set_names = NUGGET_SETS
    resources = (ANSWERS,)
    answer_score_files = SCORE_FILES

    def __init__(
        self,
        grades: int = 3,
        create_from: str = "qrels",
        min_grade: int | float | None = None,
        window_size: int = 10,
        max_nuggets: int = 30,
        top_k: int | None = 20,
        batch_size: int = 10,
        retries: int = 3,
        prompt: str | PromptTemplate | None = None,
        create_prompt: str | PromptTemplate = "nuggets/create",
        score_prompt: str | PromptTemplate = "nuggets/score",
        max_tokens: int | None = None,
    ) -> None:
        check_choice("grades", grades, (2, 3))
        check_choice("create_from", create_from, CREATE_FROM)
        for option, value in (
            ("window_size", window_size),
            ("max_nuggets", max_nuggets),
            ("batch_size", batch_size),
        ):
            if not isinstance(value, int) or value < 1:
                raise TypeError(f"{option} must be a positive integer, got {value!r}")
        if top_k is not None and (not isinstance(top_k, int) or top_k < 1):
            raise TypeError(f"top_k must be a positive integer or None, got {top_k!r}")
        if not isinstance(retries, int) or retries < 0:
            raise TypeError(f"retries must be a non-negative integer, got {retries!r}")
        self.grades = grades
        self.create_from = create_from
        self.min_grade = min_grade
        self.window_size = window_size
        self.max_nuggets = max_nuggets
        self.top_k = top_k
        self.batch_size = batch_size
        self.retries = retries
        self.prompt: PromptTemplate = resolve_prompt(
            prompt if prompt is not None else _ASSIGN_PROMPTS[grades]
        )
        self.create_prompt: PromptTemplate = resolve_prompt(create_prompt, option="create_prompt")
        self.score_prompt: PromptTemplate = resolve_prompt(score_prompt, option="score_prompt")
        self.max_tokens = max_tokens
        check_output(self.create_prompt, ("nuggets", "questions"), self.name, option="create_prompt")
        check_output(self.score_prompt, ("labels",), self.name, option="score_prompt")
        check_output(self.prompt, ("labels",), self.name)
        self.score_vocabulary = _vocabulary(
            self.score_prompt, ("vital", "okay"), ("vital", "okay"), "score_prompt"
        )
        self.assign_vocabulary = _vocabulary(
            self.prompt, _VOCABULARIES[grades], ("support", "partial_support", "not_support"), "prompt"
        )
        #: the nuggets of each topic (all scored ones, in creation order) after `run`
        self.nuggets: dict[str, list[Nugget]] = {}

    # -- scoring ---------------------------------------------------------------------------

    @classmethod
    def owns(cls, record: Any) -> bool:
        """Nugget and creation records, and assignments of a nugget to a passage."""
        return record.method in cls.stage_methods or (
            record.method == ASSIGN_METHOD and record.item_id is not None
        )

    @classmethod
    def check_score_options(cls, options: Mapping[str, Any]) -> None:
        top_k = options.get("top_k", RECORDED)
        if top_k != RECORDED and top_k is not None and (not isinstance(top_k, int) or top_k < 1):
            raise ValueError(f"top_k must be a positive integer, None or 'recorded', got {top_k!r}")

    @classmethod
    def claims_name(cls, name: str) -> bool:
        return name == cls.name or name.startswith(cls.name + "-") or name in cls.set_names

    @classmethod
    def score_meaning(cls, set_name: str) -> ScoreMeaning | None:
        """`NUGGET_MEANINGS`: shares of supported nuggets, not gains; relevant when > 0."""
        return NUGGET_MEANINGS.get(set_name)

    @classmethod
    def score_records(cls, records: Sequence[Any], **options: Any) -> dict[str, AggregatedScores]:
        """The six nugget scores (``nuggets-all``, ...); options ``top_k``, ``empty_class``,
        ``weighted``, ``on_failure``."""
        known = ("top_k", "empty_class", "weighted", "on_failure")
        return nugget_sets(records, **{k: v for k, v in options.items() if k in known})

    @classmethod
    def scores_for(cls, name: str, records: Sequence[Any], **options: Any) -> AggregatedScores:
        """One nugget score from assignment records against ``nuggets`` (required): ``nuggets``
        (with ``score``, default ``all``) or ``nuggets-<score>``, as in `nugget_scores`."""
        from reljudge.aggregation.score_sets import AggregatedScores, split_set_name
        from reljudge.judges.nuggets.scores import NUGGET_SCORES, nugget_scores

        choice = split_set_name(name, cls.name, "all", options.get("score"), NUGGET_SCORES)
        nuggets = options.get("nuggets")
        if nuggets is None:
            raise ValueError("the nuggets method needs the nuggets the passages were assessed against")
        result = nugget_scores(
            [r for r in records if r.method not in (NUGGET_METHOD, CREATION_METHOD)],
            nuggets,
            on_failure=options.get("on_failure", "exclude"),
            empty_class=options.get("empty_class", "undefined"),
            weighted=options.get("weighted", "trec"),
        )
        return AggregatedScores(
            method=f"nuggets-{choice}", scores=result.qrels(choice), exclusions=result.exclusions,
            details={"score": choice}, meaning=NUGGET_MEANINGS[f"nuggets-{choice}"],
        )  # fmt: skip

    def score_options(self) -> dict[str, Any]:
        return {"top_k": self.top_k}

    @property
    def primary_set(self) -> str:
        return "nuggets-all"

    # -- running ---------------------------------------------------------------------------

    def pool(self, request: PoolRequest) -> JudgePool | None:
        return answered_pool(request)  # with answers: the answered topics' judged passages

    @classmethod
    def answer_scores(cls, records: Iterable[Any], resources: Mapping[str, Any]) -> AnswerScores | None:
        return scores_of_answers(records, resources)  # the six scores per answer and system

    async def run(self, inputs: JudgeInputs, ctx: JudgeContext) -> None:
        if self.create_from == "qrels" and inputs.qrels is None:
            raise InputError(
                "nuggets are created from the passages judged relevant: give qrels, "
                "or set create_from='pool' to use every pooled passage"
            )
        earlier = recorded_nuggets(ctx.existing)
        await run_bounded(
            topics_to_judge(inputs),
            lambda qid: self._run_topic(inputs, ctx, qid, earlier.get(qid)),
            limit=ctx.fan_out,
        )

    async def _run_topic(
        self, inputs: JudgeInputs, ctx: JudgeContext, qid: str, earlier: list[Nugget] | None
    ) -> None:
        from reljudge.judges.nuggets.scores import select_nuggets

        if earlier:
            nuggets = earlier
        else:
            problem = topic_problem(inputs.topics, qid)
            if qid not in inputs.pool:  # answers to a topic without judgments
                problem = f"topic {qid!r} has no judged passages: its answers are not evaluated"
            sources = [] if problem else self.sources(inputs, qid)
            if not problem and not sources:
                problem = (
                    f"no relevant passage with text for topic {qid!r} ({self._source_text()}): no nuggets"
                )
            texts = [] if problem else await self._create(inputs, ctx, qid, sources)
            if not problem and not texts:
                problem = f"no nugget could be created for topic {qid!r} (see its nugget-creation records)"
            if problem is not None:
                record = skipped_record(ctx, self.create_prompt, problem, method=NUGGET_METHOD, qid=qid)
                if ctx.done(record.key) is None:
                    ctx.emit(record)
                return
            nuggets = await self._score(inputs, ctx, qid, texts)
        self.nuggets[qid] = nuggets
        selected = select_nuggets([n for n in nuggets if n.importance is not None], k=self.top_k)
        await self._assign(inputs, ctx, qid, selected)

    def _source_text(self) -> str:
        if self.create_from == "pool":
            return "pool"
        return "qrels grade >= " + (
            "(lowest relevant grade)" if self.min_grade is None else str(self.min_grade)
        )

    def relevant_grade(self, inputs: JudgeInputs) -> int | float:
        """The lowest human grade that counts as relevant: ``min_grade`` when given, else the grade
        above the collection's non-relevant grade (1 on TREC DL's 0-3 scale, 2 on ANTIQUE's 1-4)."""
        if self.min_grade is not None:
            return self.min_grade
        return inputs.resources.get("nonrelevant_grade", 0) + 1

    def sources(self, inputs: JudgeInputs, qid: str) -> list[str]:
        """The passages nuggets are created from, in reading order (usable text only)."""
        pool = list(dict.fromkeys(inputs.pool.get(qid, ())))
        if self.create_from == "pool":
            docids = pool
        else:
            assert inputs.qrels is not None
            grades = inputs.qrels.get(qid, {})
            position = {d: i for i, d in enumerate(pool)}
            threshold = self.relevant_grade(inputs)
            relevant = [d for d, g in grades.items() if g >= threshold]
            docids = sorted(relevant, key=lambda d: (-grades[d], position.get(d, len(position)), d))
        return [d for d in docids if passage_problem(inputs.corpus, d) is None]

    async def _create(
        self, inputs: JudgeInputs, ctx: JudgeContext, qid: str, sources: list[str]
    ) -> list[str]:
        def accept(parsed: Parsed) -> tuple[Any, str | None]:
            if parsed.status != "ok" or parsed.items is None:
                return None, f"no nugget list in the answer ({parsed.how})"
            return _clean(parsed.items)[: self.max_nuggets], None

        read = Reader(self.create_prompt.output.parse, accept)

        current: list[str] = []
        query = inputs.topics[qid]
        for i, start in enumerate(range(0, len(sources), self.window_size)):
            window = sources[start : start + self.window_size]
            done = ctx.done(key(CREATION_METHOD, qid, "", "", f"window/{i}"))
            if done is not None and done.ok and isinstance(done.extra.get("nuggets"), list):
                current = [str(t) for t in done.extra["nuggets"]]
                continue
            variables = {
                "query": query,
                "context": "\n".join(f"[{j + 1}] {inputs.corpus[d]}" for j, d in enumerate(window)),
                "nuggets": repr(current),
                "nuggets_length": str(len(current)),
                "max_nuggets": str(self.max_nuggets),
            }
            asked = await ask(
                ctx,
                self.create_prompt,
                variables,
                read,
                retries=self.retries,
                max_tokens=self.max_tokens,
                budget=CREATE_BUDGET,
            )
            if asked.status == "ok":
                current = asked.value
            provenance = ctx.provenance(self.create_prompt, asked.result).model_copy(
                update={"usage": asked.usage}
            )
            ctx.emit(
                Judgment(
                    qid=qid,
                    item_id=f"window/{i}",
                    method=CREATION_METHOD,
                    status=asked.status,  # type: ignore[arg-type]
                    raw=clip(asked.result.text),
                    error=asked.error,
                    parse=asked.how,
                    extra={"docids": window, "nuggets": current},
                    provenance=provenance,
                )
            )
        return current

    async def _score(
        self, inputs: JudgeInputs, ctx: JudgeContext, qid: str, texts: list[str]
    ) -> list[Nugget]:
        from reljudge.judges.nuggets.scores import Nugget, select_nuggets

        query = inputs.topics[qid]

        def variables(items: Sequence[str]) -> dict[str, str]:
            return {"query": query, "nuggets": repr(list(items)), "num_nuggets": str(len(items))}

        batches = [texts[i : i + self.batch_size] for i in range(0, len(texts), self.batch_size)]
        labelled = await run_all(
            [
                label_items(
                    ctx,
                    self.score_prompt,
                    variables,
                    b,
                    self.score_vocabulary,
                    retries=self.retries,
                    max_tokens=self.max_tokens,
                )
                for b in batches
            ]
        )
        items = [item for batch in labelled for item in batch]
        nuggets = [
            Nugget.create(qid, text, item.label if item.status == "ok" else None)
            for text, item in zip(texts, items, strict=True)
        ]
        selected = {
            n.id for n in select_nuggets([n for n in nuggets if n.importance is not None], k=self.top_k)
        }
        for rank, (nugget, item) in enumerate(zip(nuggets, items, strict=True)):
            extra: dict[str, Any] = {"text": nugget.text, "rank": rank, "selected": nugget.id in selected}
            if nugget.importance is not None:
                extra["importance"] = nugget.importance
            ctx.emit(
                Judgment(
                    qid=qid,
                    item_id=nugget.id,
                    method=NUGGET_METHOD,
                    status=item.status,
                    raw=item.raw,
                    error=item.error,
                    parse=item.how,
                    extra=extra,
                    provenance=item.provenance,
                )
            )
        return nuggets

    async def _assign(self, inputs: JudgeInputs, ctx: JudgeContext, qid: str, selected: list[Nugget]) -> None:
        vocabulary = self.assign_vocabulary
        query = inputs.topics[qid]

        def batches() -> Iterator[tuple[Target, list[Nugget]]]:
            # lazy: a passage's (or answer's) batches are built when a worker is free (`run_bounded`)
            for target in targets(inputs, qid):
                todo = [
                    n
                    for n in selected
                    if not target.done(ctx.done(key(ASSIGN_METHOD, qid, target.id, "", n.id)))
                ]
                if not todo:
                    continue
                if target.problem is not None:
                    for n in todo:
                        ctx.emit(
                            skipped_record(
                                ctx,
                                self.prompt,
                                target.problem,
                                method=ASSIGN_METHOD,
                                qid=qid,
                                docid=target.id,
                                item_id=n.id,
                                extra=dict(target.extra),
                            )
                        )
                    continue
                for i in range(0, len(todo), self.batch_size):
                    yield target, todo[i : i + self.batch_size]

        async def assign(item: tuple[Target, list[Nugget]]) -> None:
            target, batch = item
            await self._assign_batch(ctx, qid, target, query, batch, vocabulary)

        await run_bounded(batches(), assign, limit=ctx.fan_out)

    async def _assign_batch(
        self,
        ctx: JudgeContext,
        qid: str,
        target: Target,
        query: str,
        batch: list[Nugget],
        vocabulary: tuple[str, ...],
    ) -> None:
        from reljudge.judges.nuggets.scores import ASSIGNMENT_LABELS

        def variables(items: Sequence[str]) -> dict[str, str]:
            return {
                "query": query,
                "document": target.text,
                "nuggets": repr(list(items)),
                "num_nuggets": str(len(items)),
            }

        items = await label_items(
            ctx,
            self.prompt,
            variables,
            [n.text for n in batch],
            vocabulary,
            retries=self.retries,
            max_tokens=self.max_tokens,
        )
        for nugget, item in zip(batch, items, strict=True):
            ok = item.status == "ok" and item.label is not None
            ctx.emit(
                Judgment(
                    qid=qid,
                    docid=target.id,
                    item_id=nugget.id,
                    method=ASSIGN_METHOD,
                    label=ASSIGNMENT_LABELS[item.label] if ok else None,  # type: ignore[index]
                    status=item.status,  # type: ignore[arg-type]
                    raw=item.raw,
                    error=item.error,
                    parse=item.how,
                    extra={**target.extra, "assignment": item.label} if ok else dict(target.extra),
                    provenance=item.provenance,
                )
            )

    # -- estimating ------------------------------------------------------------------------

    def estimate(self, inputs: JudgeInputs) -> CallEstimate:
        from reljudge.judges.nuggets.estimate import estimate_calls

        return estimate_calls(self, inputs)


def _clean(texts: Sequence[Any]) -> list[str]:
    """Distinct non-empty nugget texts, in order; texts over `MAX_NUGGET_CHARS` are dropped."""
    stripped = (str(t).strip() for t in texts)
    return list(dict.fromkeys(t for t in stripped if t and len(t) <= MAX_NUGGET_CHARS))


def _vocabulary(
    prompt: PromptTemplate, default: tuple[str, ...], allowed: tuple[str, ...], option: str
) -> tuple[str, ...]:
    vocab = tuple(prompt.output.vocabulary or default)
    unknown = [v for v in vocab if v not in allowed]
    if unknown:
        raise InputError(f"{option} {prompt.id!r}: labels {unknown} are not among {list(allowed)}")
    return vocab
