"""The judge plugin interface: what a judging method is.

A judge turns inputs (topics, passages, the pool of pairs to judge) into `Judgment` records by
rendering prompts, calling the LLM through a `reljudge.judges.context.JudgeContext` and parsing
the answers. It never reads or writes files: the runner gives it its inputs, receives its records
through the context, and tells it which records already exist (to resume without calling twice).

A judge declares everything the rest of the toolkit needs to know about it, so that nothing
outside the judge's own module (or package) names it:

- its record methods: ``label_methods`` (records carrying the final labels) and
  ``stage_methods`` (records of earlier stages they rest on: EXAM questions, nuggets);
- its prompts (`Judge.prompts`; every one is hashed into a job's identity);
- how it scores its records (`Judge.score_records`, `Judge.score_sets`) and which score set a
  run's qrels take (`Judge.primary_set`);
- what the values of each of its score sets mean (`Judge.score_meaning`: gains usable as graded
  relevance or not, and the binary cut that makes a document relevant), which ``judge evaluate``
  prints and uses;
- how it adapts its options to a run's inputs (`Judge.adapt_options`: judge the pairs of a pairs
  file) and which resources a run can give it (`Judge.resources`: e.g. a question bank);
- how its pool is built when it chooses its items itself (`Judge.pool`: a run over answers judges
  the answered topics' passages, or the passages the answers cite);
- what it computes after a run over answers (`Judge.answer_scores`: per answer and per system),
  into the files it declares (`Judge.answer_score_files`: their names and columns), which the run
  writes; or the answers a run of it generated (`Judge.generated_answers`);
- how its work grows (`Judge.estimate`, `Judge.estimate_growth` for ``--dry-run``).

Judges register under a name with `reljudge.judges.registry.register`; third-party packages add
theirs through the ``reljudge.judges`` entry-point group (``name = "package.module:JudgeClass"``).

A judge may work in several stages (EXAM: generate questions, then grade them; nuggets:
create, label, assign). Each stage's results are records too (with their own ``method``, e.g.
``exam-question``), so a resumed run finds them in ``JudgeContext.existing`` and does not redo
them.
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, TypeVar

from reljudge.records import Judgment, Key

if TYPE_CHECKING:
    from reljudge.aggregation import AggregatedScores, ScoreMeaning
    from reljudge.io.score_files import ScoreFiles
    from reljudge.judges.context import JudgeContext
    from reljudge.prompts import PromptTemplate

__all__ = [
    "AnswerScores",
    "CallEstimate",
    "Grade",
    "Judge",
    "JudgeInputs",
    "JudgePool",
    "Key",
    "PoolRequest",
    "Resource",
    "estimate_tokens",
    "run_all",
    "run_bounded",
]

Grade = int | float
T = TypeVar("T")


@dataclass(frozen=True)
class JudgeInputs:
    """What a judge works on. ``pool`` lists, per topic, the documents to judge (in order)."""

    topics: Mapping[str, str]
    corpus: Mapping[str, str]
    pool: Mapping[str, Sequence[str]]
    qrels: Mapping[str, Mapping[str, Grade]] | None = None  # human labels, when a method needs them
    pairs: Mapping[str, Sequence[tuple[str, str]]] | None = None  # explicit pairs (pairwise)
    resources: Mapping[str, Any] = field(default_factory=dict)  # e.g. an existing question bank
    #: what a judge derives from these inputs once (`derived`); never compared, not an argument
    _derived: dict[str, Any] = field(default_factory=dict, init=False, compare=False, repr=False)

    def derived(self, name: str, make: Callable[[], T]) -> T:
        """``make()``, computed once for these inputs and kept with them (e.g. answers grouped by topic)."""
        if name not in self._derived:
            self._derived[name] = make()
        return self._derived[name]

    def recorded(self, key: Key) -> Judgment | None:
        """The finished record with ``key`` that the run directory already holds, as a dry run that
        resumes sees it (``resources["existing_records"]``); while running, `JudgeContext.done`
        answers the same question."""
        existing: Mapping[Key, Judgment] = self.resources.get("existing_records") or {}
        return existing.get(key)


@dataclass(frozen=True)
class CallEstimate:
    """The LLM calls a job will make, for `--dry-run` (prompt tokens are estimates: ~4 chars a
    token, or by the model's tokenizer as ``tokenizer`` says)."""

    calls: int
    prompt_tokens: int
    completion_tokens: int
    note: str = ""
    #: the label records those calls make, when not one per call (pairwise: one record per two calls)
    records: int | None = None
    #: what counted the prompt tokens when not ~4 characters a token (``tiktoken o200k_base``)
    tokenizer: str | None = None

    @property
    def label_records(self) -> int:
        return self.calls if self.records is None else self.records

    def __add__(self, other: CallEstimate) -> CallEstimate:
        note = "; ".join(n for n in (self.note, other.note) if n)
        records = None
        if self.records is not None or other.records is not None:
            records = self.label_records + other.label_records
        return CallEstimate(
            self.calls + other.calls,
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            note,
            records,
            self.tokenizer if self.tokenizer == other.tokenizer else None,
        )


def estimate_tokens(text: str) -> int:
    """A provider-neutral token estimate (about four characters a token for English text)."""
    return max(1, (len(text) + 3) // 4)


@dataclass(frozen=True)
class Resource:
    """Something a run can give a judge besides topics, passages and pools (e.g. an EXAM question
    bank): the run reads it with ``read`` from the file the user names (``--<name>`` with dashes;
    the value ``dataset`` takes the dataset's own file ``dataset_file``, a key of its paths) and
    passes the result in ``JudgeInputs.resources[name]``. The judge never reads the file itself."""

    name: str
    #: called with the file's `Path`, or with a list of them for a repeatable option (``--answers A B``)
    read: Callable[[Any], Any]
    dataset_file: str | None = None
    #: what the judge does with it, as the option's help says it per judge (``--answers``)
    help: str = ""
    #: settings of the judge the run passes to ``read`` as keywords, by name (e.g. the most
    #: bytes an image may have: ``("max_image_bytes",)``)
    options: tuple[str, ...] = ()


@dataclass(frozen=True)
class PoolRequest:
    """What a run offers a judge that chooses its own items (`Judge.pool`): the resources it
    read for the judge, the limits the user gave, and the run's own pool on demand."""

    resources: Mapping[str, Any]
    #: ``--topics-limit N``: keep the first N topics
    topics_limit: int | None
    #: ``--limit N``: keep the first N items
    limit: int | None
    #: the run's pool as ``--pool`` makes it, without the two limits: (documents per topic in
    #: order, what they are, e.g. ``judged pairs of the qrels``)
    run_pool: Callable[[], tuple[dict[str, list[str]], str]]


@dataclass
class JudgePool:
    """The items a judge chose for a run (`Judge.pool`)."""

    #: per topic, the documents to judge, in order
    docs: dict[str, list[str]]
    #: what the items are, for the run's summary
    description: str
    #: the run's resources, narrowed to the chosen topics (e.g. the answers to them)
    resources: dict[str, Any]
    #: whether the run checks that every pooled topic has query text and every passage text
    #: (False: the judge records what is missing as ``skipped``)
    check_texts: bool = True


@dataclass
class AnswerScores:
    """What a judge computes from a finished run over answers (`Judge.answer_scores`): one row per
    (system, topic) and one per system, with the columns of its `Judge.answer_score_files`; the
    answers left out because their records are incomplete (an interrupted run); what else its
    JSON file holds; and the per-system table as text, for the terminal."""

    topics: list[dict[str, Any]]
    systems: list[dict[str, Any]]
    incomplete: list[tuple[str, str]]
    text: str
    extra: dict[str, Any] = field(default_factory=dict)


class Judge(ABC):
    """A judging method. Subclasses set `name`, `default_prompt` and implement `run`/`estimate`.

    Constructor options come from the CLI or a sweep config (e.g. ``prompt=...``); unknown
    options are an `InputError`.
    """

    name: ClassVar[str]
    default_prompt: ClassVar[str | None] = None
    #: method names of the records this judge emits that carry the final document labels
    label_methods: ClassVar[tuple[str, ...]] = ()
    #: method names of the records of earlier stages the labels rest on (questions, nuggets)
    stage_methods: ClassVar[tuple[str, ...]] = ()
    #: what a run can give this judge besides its inputs (see `Resource`)
    resources: ClassVar[tuple[Resource, ...]] = ()
    #: whether each label is one call about one (topic, passage) with one prompt (`judge probe`)
    pointwise: ClassVar[bool] = False
    #: when ``pointwise`` depends on the options (a property): with which, as lists of methods say
    #: it (the custom judge: ``binary/graded prompt``)
    pointwise_when: ClassVar[str] = ""
    #: False for a judge that works per topic from the query alone (answer generation): a run
    #: then reads no passages and its pool is the topics (`reljudge.run.pool.build_pool`)
    reads_passages: ClassVar[bool] = True
    #: the files of the scores `answer_scores` computes (their names and columns), None when the
    #: judge computes none; the run writes them into its directory
    answer_score_files: ClassVar[ScoreFiles | None] = None

    @property
    def label_scale(self) -> tuple[int, ...] | None:
        """The grades of this judge's label when each is one token of the answer (binary 0/1, a
        0-3 grade): its records then carry the grade distribution at the label position when the
        provider returns log-probabilities (``extra["expected"]``, the ``<method>-expected``
        score set; `reljudge.judges.expected`). None (the default): no one-token label."""
        return None

    @abstractmethod
    async def run(self, inputs: JudgeInputs, ctx: JudgeContext) -> None:
        """Judge everything in ``inputs``, emitting one record per judged item through ``ctx``.

        Items whose key is in ``ctx.existing`` are not judged again (their records may be needed
        as inputs of later stages). Concurrency: fan out over the items with `run_bounded`
        (a lazy iterator of items, ``limit=ctx.fan_out``): the client bounds how many calls run
        at once, `run_bounded` how many items are prepared (prompt rendered, cache key built)
        ahead of them, so memory does not grow with the number of items.
        """

    @abstractmethod
    def estimate(self, inputs: JudgeInputs) -> CallEstimate:
        """The calls `run` would make on ``inputs`` from scratch, without making any."""

    # -- what the rest of the toolkit asks a judge ------------------------------------------

    def prompts(self) -> dict[str, PromptTemplate]:
        """Every prompt this judge may send, by the attribute that holds it (``prompt``,
        ``question_prompt``, ...). A job's identity holds their SHA-256, so an edited prompt is
        never mixed into a resumed run. The default finds the `PromptTemplate` attributes of the
        judge (and of judges it holds); override it when prompts are kept elsewhere."""
        return _prompt_attributes(self)

    @classmethod
    def adapt_options(cls, options: Mapping[str, Any], *, pairs_given: bool = False) -> dict[str, Any]:
        """The constructor options for a run with these inputs: ``pairs_given`` when the run
        has a pairs file (a pairwise judge then judges exactly those pairs). Default: unchanged."""
        return dict(options)

    #: the names of the score sets this method's records give, when not its record methods
    #: (EXAM: ``exam-binary``, ``exam-graded-max``, ...): `judgments_to_scores` finds it by them
    set_names: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def owns(cls, record: Any) -> bool:
        """Whether this method scores ``record`` (`reljudge.judges.scoring.score_sets`): by
        default a record of one of its declared record methods."""
        return record.method in cls.label_methods or record.method in cls.stage_methods

    @classmethod  # noqa: B027 - an optional hook
    def check_score_options(cls, options: Mapping[str, Any]) -> None:
        """Raise ValueError for a scoring option of this method with a bad value (options are
        checked even when no record of the method is present). Default: nothing to check."""

    @classmethod
    def claims_name(cls, name: str) -> bool:
        """Whether ``name`` (a set name or this judge's name) is this method's to score."""
        return name in cls.set_names

    @classmethod
    def score_meaning(cls, set_name: str) -> ScoreMeaning | None:
        """What the values of this method's score set ``set_name`` mean (see `ScoreMeaning`), or
        None when ``set_name`` is not one of its sets. The default declares nothing: an analysis
        then reads the values as labels (grades on the human scale, 0/1 labels relevant at 1)."""
        return None

    @classmethod
    def scores_for(cls, name: str, records: Sequence[Any], **options: Any) -> AggregatedScores:
        """The scores of the set ``name`` (or of this method's primary set, for its own name)
        from its records (`reljudge.judges.scoring.judgments_to_scores`)."""
        sets = cls.score_records(records, **options)
        if name in sets:
            return sets[name]
        primary = [s for s in sets.values() if s.primary] or list(sets.values())
        if not primary:
            raise ValueError(f"no {name!r} scores in the records")
        return primary[0]

    @classmethod
    def score_records(cls, records: Sequence[Any], **options: Any) -> dict[str, AggregatedScores]:
        """Document score sets from this method's records (its label and stage records), by set
        name (``binary``, ``exam-graded-max``, ...). ``options`` are scoring options; each method
        takes those it knows and ignores the others. The default scores the label records by
        their shape: pointwise labels, or pairwise win counts."""
        from reljudge.judges.shape_scoring import shape_sets

        return shape_sets(records, **options)

    def score_options(self) -> dict[str, Any]:
        """The scoring options this judge's own settings imply (EXAM: its mode's scale)."""
        return {}

    def score_sets(
        self, records: Iterable[Any], resources: Mapping[str, Any] | None = None
    ) -> dict[str, AggregatedScores]:
        """The score sets of this judge's records among ``records`` (others are ignored), with
        the resources the run gave it. A document whose score rests on an incomplete set of
        records (an interrupted run) is listed in the set's ``incomplete``. The records are read
        once, as they come (`scorer`)."""
        scorer = self.scorer(resources)
        for record in records:
            scorer.add(record)
        return scorer.finish()

    def scorer(self, resources: Mapping[str, Any] | None = None) -> RecordScorer:
        """A `RecordScorer` for this judge's records, fed one record at a time: how a run scores
        the records it writes, as it writes them. A judge with a `score_records` of its own gets
        its records as a list at `RecordScorer.finish`; the others are scored by their shape as
        they come (`reljudge.judges.shape_scoring.ShapeScorer`: for a pointwise judge, one slot a
        pooled document)."""
        mine = frozenset(self.label_methods) | frozenset(self.stage_methods)
        options = {**self.score_options(), **(dict(resources or {}))}
        cls = type(self)
        if next(k for k in cls.__mro__ if "score_records" in vars(k)) is not Judge:
            return _ListScorer(cls, mine, frozenset(self.label_methods) or frozenset({self.name}), options)
        from reljudge.judges.shape_scoring import ShapeScorer

        return ShapeScorer(methods=mine, **options)

    @property
    def primary_set(self) -> str:
        """The score set a run's ``qrels.txt`` takes."""
        return self.label_methods[0] if self.label_methods else self.name

    def pool(self, request: PoolRequest) -> JudgePool | None:
        """The items of a run when this judge chooses them from what the run read for it (a run
        over answers: the judged passages of the answered topics, or the passages the answers
        cite); None (the default): the run's own pool (``--pool``, ``--pairs``, the limits).
        Bad input (a limit that means nothing here, a resource missing) is an `InputError`."""
        return None

    @classmethod
    def answer_scores(cls, records: Iterable[Any], resources: Mapping[str, Any]) -> AnswerScores | None:
        """The scores of the answers a finished run judged (``--answers``), from its records (the
        latest of each key) and the resources the run read for the judge (the answers, as its
        `Resource` reads them); the run writes them as `answer_score_files`. None (the
        default): nothing to score. A ``ValueError`` says the records cannot be scored."""
        return None

    @classmethod
    def generated_answers(cls, records: Iterable[Any]) -> dict[str, str] | None:
        """The answers a run of this judge generated, ``{qid: text}``, from its records (the
        latest of each key); the run writes them as the ``system<TAB>qid<TAB>answer`` TSV
        (``judge generate``). None (the default): the judge generates no answers."""
        return None

    def estimate_growth(self, inputs: JudgeInputs) -> list[dict[str, Any]]:
        """How the calls grow with the pool depth, for ``--dry-run`` (rows of a table; the first
        column is the depth). Default: nothing to show."""
        return []


def _prompt_attributes(judge: Any, seen: set[int] | None = None) -> dict[str, PromptTemplate]:
    from reljudge.prompts import PromptTemplate

    seen = set() if seen is None else seen
    found: dict[str, PromptTemplate] = {}
    for name, value in vars(judge).items():
        if isinstance(value, PromptTemplate):
            if id(value) not in seen:
                seen.add(id(value))
                found[name] = value
        elif isinstance(value, Judge) and id(value) not in seen:
            seen.add(id(value))
            for inner, template in _prompt_attributes(value, seen).items():
                found.setdefault(inner, template)
    return found


async def run_all(coroutines: Sequence[Any]) -> list[Any]:
    """Run coroutines together (the client bounds how many call the LLM at once) and return
    their results in order; on the first error the others are cancelled and it propagates.

    A coroutine whose chat the batch mode collected (`reljudge.llm.types.Deferred`) does not
    stop the others, so that every request of the group is collected in the same pass; once all
    are done, one `Deferred` propagates."""
    from reljudge.llm.types import Deferred

    async def deferrable(coroutine: Any) -> Any:
        try:
            return await coroutine
        except Deferred as deferred:
            return deferred

    async with asyncio.TaskGroup() as group:
        tasks = [group.create_task(deferrable(c)) for c in coroutines]
    results = [t.result() for t in tasks]
    for result in results:
        if isinstance(result, Deferred):
            raise result
    return results


async def run_bounded(items: Iterable[T], worker: Callable[[T], Awaitable[Any]], *, limit: int) -> None:
    """Call ``worker(item)`` for every item, at most ``limit`` at a time.

    ``items`` is consumed lazily (a generator is fine): an item is taken only when a worker
    slot is free, so at most ``limit`` items are in progress and the rest are never built
    ahead of time. The order in which items finish is not defined. On the first error the
    other workers are cancelled and the error propagates (as with a `asyncio.TaskGroup`).

    An item whose chat the batch mode collected (`reljudge.llm.types.Deferred`) is left for
    the next pass: it gets no record now, and the others go on.
    """
    from reljudge.llm.types import Deferred

    if limit < 1:
        raise ValueError(f"limit must be a positive integer, got {limit!r}")
    iterator = iter(items)

    async def drain() -> None:
        # each worker pulls the next item from the shared iterator; next() never awaits, so
        # two workers cannot be inside the iterator at the same time
        for item in iterator:
            try:
                await worker(item)
            except Deferred:
                continue

    async with asyncio.TaskGroup() as group:
        for _ in range(limit):
            group.create_task(drain())


class RecordScorer(Protocol):
    """A judge's scoring, fed one record at a time (`Judge.scorer`). ``add`` may raise
    ValueError for a record that cannot be scored with the others, ``finish`` for records that
    contradict each other; either means the records give no score sets."""

    def add(self, record: Any) -> None: ...

    def finish(self) -> dict[str, AggregatedScores]: ...


class _ListScorer:
    """The records of a judge that scores them together (`Judge.score_records`), kept in a list
    until `finish`; label records without their payload (`reljudge.io.judgments.BareRecord`: a
    few dozen bytes instead of the model's answer and the provenance)."""

    def __init__(
        self, judge: type[Judge], methods: frozenset[str], labels: frozenset[str], options: dict[str, Any]
    ):
        self.judge, self.methods, self.labels, self.options = judge, methods, labels, options
        self.records: list[Any] = []
        self.strings: dict[str, str] = {}  # one copy of each repeated topic id and method name

    def add(self, record: Any) -> None:
        from reljudge.io.judgments import BareRecord

        if record.method not in self.methods:
            return
        if record.method in self.labels and isinstance(record, Judgment):
            record = BareRecord.of(record, self.strings)
        self.records.append(record)

    def finish(self) -> dict[str, AggregatedScores]:
        return self.judge.score_records(self.records, **self.options)
