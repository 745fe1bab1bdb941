"""The judge plugin interface.

A judge turns inputs (topics, passages, the pool of pairs to judge) into `Judgment` records by
rendering prompts, calling the LLM through a `JudgeContext` and parsing the answers. It never
reads or writes files: the runner gives it its inputs, receives its records through
`JudgeContext.emit`, and tells it which records already exist (to resume without calling twice).

Judges register under a name with `@register`; third-party packages add theirs through the
``reljudge.judges`` entry-point group (``name = "package.module:JudgeClass"``).

A judge may work in several stages (EXAM: generate questions, then grade them; nuggets:
create, label, assign). Each stage's results are records too (with their own ``method``, e.g.
``exam-question``), so a resumed run finds them in `JudgeContext.existing` and does not redo
them.
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import inspect
import linecache
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from reljudge.errors import InputError
from reljudge.records import Judgment, Provenance

if TYPE_CHECKING:
    from reljudge.judges.parsing import Parsed
    from reljudge.judges.reading import Answer
    from reljudge.llm import ChatResult, LLMClient
    from reljudge.prompts import PromptTemplate

Key = tuple[str, str, str, str, str]  # Judgment.key: (method, qid, docid, docid_b, item_id)
Grade = int | float
T = TypeVar("T")
#: how many items a judge's fan-out works on at once, per unit of the client's concurrency:
#: enough to keep every connection busy, few enough that prompts are not all held in memory
FAN_OUT_PER_SLOT = 4


@dataclass(frozen=True)
class JudgeInputs:
    """What a judge works on. ``pool`` lists, per topic, the documents to judge (in order)."""

    topics: Mapping[str, str]
    corpus: Mapping[str, str]
    pool: Mapping[str, Sequence[str]]
    qrels: Mapping[str, Mapping[str, Grade]] | None = None  # human labels, when a method needs them
    pairs: Mapping[str, Sequence[tuple[str, str]]] | None = None  # explicit pairs (pairwise)
    resources: Mapping[str, Any] = field(default_factory=dict)  # e.g. an existing question bank


@dataclass(frozen=True)
class CallEstimate:
    """The LLM calls a job will make, for `--dry-run` (tokens are estimates: ~4 chars a token)."""

    calls: int
    prompt_tokens: int
    completion_tokens: int
    note: str = ""
    #: the label records those calls make, when not one per call (pairwise: one record per two calls)
    records: int | None = None

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
        )


def estimate_tokens(text: str) -> int:
    """A provider-neutral token estimate (about four characters a token for English text)."""
    return max(1, (len(text) + 3) // 4)


class JudgeContext:
    """The judge's only way out: LLM calls, emitting records, and what was already judged.

    `chat` adds the call's provenance (backend, model, prompt id and hash, rendered-messages
    hash, decoding parameters, usage, latency) to every record made with `record`.

    ``existing`` is any `Mapping` from `Key` to the earlier `Judgment` of that key. It need not
    be a dict of records in memory: the runner passes a compact, lazy mapping
    (`reljudge.io.judgments.ExistingRecords`) that holds the keys and reads a record from the
    judgments file only when it is looked up. Judges should therefore test membership with
    `done` (or ``key in existing``) and, when they need the records of one stage, filter the
    keys by method (``key[0]``) before reading values -- not iterate every value.
    """

    def __init__(
        self,
        client: LLMClient,
        emit: Callable[[Judgment], None],
        existing: Mapping[Key, Judgment] | None = None,
        tool_version: str | None = None,
    ):
        self.client = client
        self._emit = emit
        self.existing: Mapping[Key, Judgment] = existing or {}
        self.tool_version = tool_version

    @property
    def fan_out(self) -> int:
        """The ``limit`` for `run_bounded`: `FAN_OUT_PER_SLOT` times the client's concurrency."""
        config = getattr(self.client, "config", None)
        concurrency = getattr(config, "concurrency", None)
        return FAN_OUT_PER_SLOT * concurrency if isinstance(concurrency, int) and concurrency > 0 else 32

    def done(self, key: Key) -> Judgment | None:
        """The finished record with this key from an earlier (interrupted) run, if any."""
        return self.existing.get(key)

    async def chat(
        self,
        prompt: PromptTemplate,
        variables: Mapping[str, str],
        *,
        budget: int | None = None,
        refresh: bool = False,
        **params: Any,
    ) -> ChatResult:
        """Render ``prompt`` with ``variables`` and send it. ``budget`` is the judge's default
        answer length in tokens: sent as ``max_tokens`` unless the call or the run sets one
        (``--max-tokens``, ``--param max_tokens=...``), so no answer is unbounded."""
        messages = prompt.render(**variables)
        if budget is not None and "max_tokens" not in params and not _run_sets_max_tokens(self.client):
            params["max_tokens"] = budget
        return await self.client.chat(messages, refresh=refresh, **params)

    async def ask(
        self,
        prompt: PromptTemplate,
        variables: Mapping[str, str],
        parse: Callable[[str], Parsed],
        *,
        reask: bool = True,
        budget: int | None = None,
        **params: Any,
    ) -> Answer:
        """Ask for one answer and read it (`reljudge.judges.reading`). An answer from which no
        label can be read is dropped from the response cache, so that no later run replays it,
        and (with ``reask``) asked once more, bypassing the cache; the `Answer` counts both calls
        and keeps the first answer in ``earlier``."""
        from reljudge.judges.reading import Answer

        result = await self.chat(prompt, variables, budget=budget, **params)
        answer = Answer.of(result, prompt, parse)
        if answer.unreadable:
            self.client.forget(result)
            if reask:
                again = await self.chat(prompt, variables, budget=budget, refresh=True, **params)
                answer = answer.after(Answer.of(again, prompt, parse))
                if answer.unreadable:
                    self.client.forget(again)
        return answer

    def provenance(self, prompt: PromptTemplate | None, result: ChatResult | None) -> Provenance:
        if result is None:
            return Provenance(
                prompt_id=getattr(prompt, "id", None),
                prompt_sha256=getattr(prompt, "sha256", None),
                tool_version=self.tool_version,
            )
        return Provenance(
            backend=result.backend,
            base_url=result.base_url or None,
            model=result.model,
            prompt_id=getattr(prompt, "id", None),
            prompt_sha256=getattr(prompt, "sha256", None),
            messages_sha256=result.messages_sha256,
            params=dict(result.params),
            usage=result.usage,
            latency_s=result.latency_s,
            cached=result.cached,
            attempts=result.attempts,
            tool_version=self.tool_version,
        )

    def emit(self, judgment: Judgment) -> Judgment:
        """Hand a finished record to the runner (which appends it to the judgments file)."""
        self._emit(judgment)
        return judgment


def _run_sets_max_tokens(client: Any) -> bool:
    """Whether the client's configuration already bounds the answer length."""
    config = getattr(client, "config", None)
    if config is None:
        return False
    if getattr(config, "max_tokens", None) is not None:
        return True
    extra = getattr(config, "extra_params", None) or {}
    options = extra.get("options") if isinstance(extra.get("options"), Mapping) else {}
    return any(k in extra for k in ("max_tokens", "max_completion_tokens", "num_predict")) or (
        "num_predict" in options
    )


class Judge(ABC):
    """A judging method. Subclasses set `name`, `default_prompt` and implement `run`/`estimate`.

    Constructor options come from the CLI or a sweep config (e.g. ``prompt=...``); unknown
    options are an `InputError`.
    """

    name: ClassVar[str]
    default_prompt: ClassVar[str | None] = None
    #: method names of the records this judge emits that carry the final document labels
    label_methods: ClassVar[tuple[str, ...]] = ()

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


_REGISTRY: dict[str, type[Judge]] = {}
_ENTRY_POINTS_LOADED = False
_BUILTIN_MODULES = (
    "reljudge.judges.binary",
    "reljudge.judges.umbrela",
    "reljudge.judges.pairwise",
    "reljudge.judges.exam",
    "reljudge.judges.nuggets",
    "reljudge.judges.custom",
)


def register(cls: type[Judge]) -> type[Judge]:
    """Class decorator: make a judge available under ``cls.name``."""
    existing = _REGISTRY.get(cls.name)
    if existing is not None and existing is not cls:
        raise ValueError(f"judge name {cls.name!r} is taken by {existing.__module__}.{existing.__qualname__}")
    _REGISTRY[cls.name] = cls
    return cls


def _load_all() -> None:
    global _ENTRY_POINTS_LOADED
    for module in _BUILTIN_MODULES:
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as err:  # a built-in judge not written yet must not hide the others
            if err.name != module:
                raise
    if not _ENTRY_POINTS_LOADED:
        _ENTRY_POINTS_LOADED = True
        for entry in importlib.metadata.entry_points(group="reljudge.judges"):
            cls = entry.load()
            if entry.name not in _REGISTRY:
                _REGISTRY[entry.name] = cls


def available_judges() -> list[str]:
    _load_all()
    return sorted(_REGISTRY)


def get_judge(name: str, **options: Any) -> Judge:
    """An instance of the judge registered as ``name``, built with ``options``.

    The option names are checked against the judge's constructor first: an unknown name, or a
    required option left out, is an `InputError` listing the judge's options. A `TypeError` the
    judge's own code raises on purpose to reject a value (``raise TypeError("p must be ...")``)
    is an `InputError` too; any other `TypeError` is a bug and propagates as it is.
    """
    _load_all()
    cls = _REGISTRY.get(name)
    if cls is None:
        raise InputError(f"unknown method {name!r}; available: {', '.join(sorted(_REGISTRY))}")
    _check_option_names(name, cls, options)
    try:
        return cls(**options)
    except TypeError as err:
        if _rejects_a_value(err, cls):
            raise InputError(f"method {name!r}: {err}") from None
        raise


def _check_option_names(name: str, cls: type[Judge], options: Mapping[str, Any]) -> None:
    try:
        signature = inspect.signature(cls)
    except (TypeError, ValueError):  # no inspectable constructor (e.g. a plugin in C): let it check
        return
    params = signature.parameters.values()
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
        return  # takes any keyword: the judge checks its options itself
    named = [
        p
        for p in params
        if p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    ]
    valid = ", ".join(p.name for p in named) or "none"
    unknown = [key for key in options if key not in {p.name for p in named}]
    if unknown:
        s = "s" if len(unknown) > 1 else ""
        raise InputError(
            f"method {name!r} has no option{s} {', '.join(map(repr, unknown))}; its options: {valid}"
        )
    missing = [p.name for p in named if p.default is inspect.Parameter.empty and p.name not in options]
    if missing:
        raise InputError(
            f"method {name!r} needs option(s) {', '.join(map(repr, missing))}; its options: {valid}"
        )


def _rejects_a_value(err: TypeError, cls: type[Judge]) -> bool:
    """Whether ``err`` was raised by a ``raise`` statement in the judge's own code (its module or
    reljudge's judges package) -- a message for the user -- rather than by Python on a bug."""
    tb = err.__traceback__
    if tb is None:
        return False
    while tb.tb_next is not None:
        tb = tb.tb_next
    module = tb.tb_frame.f_globals.get("__name__", "")
    if module != cls.__module__ and not module.startswith("reljudge.judges."):
        return False
    source = linecache.getline(tb.tb_frame.f_code.co_filename, tb.tb_lineno)
    return source.lstrip().startswith("raise ")


async def run_all(coroutines: Sequence[Any]) -> list[Any]:
    """Run coroutines together (the client bounds how many call the LLM at once) and return
    their results in order; on the first error the others are cancelled and it propagates."""
    async with asyncio.TaskGroup() as group:
        tasks = [group.create_task(c) for c in coroutines]
    return [t.result() for t in tasks]


async def run_bounded(items: Iterable[T], worker: Callable[[T], Awaitable[Any]], *, limit: int) -> None:
    """Call ``worker(item)`` for every item, at most ``limit`` at a time.

    ``items`` is consumed lazily (a generator is fine): an item is taken only when a worker
    slot is free, so at most ``limit`` items are in progress and the rest are never built
    ahead of time. The order in which items finish is not defined. On the first error the
    other workers are cancelled and the error propagates (as with a `asyncio.TaskGroup`).
    """
    if limit < 1:
        raise ValueError(f"limit must be a positive integer, got {limit!r}")
    iterator = iter(items)

    async def drain() -> None:
        # each worker pulls the next item from the shared iterator; next() never awaits, so
        # two workers cannot be inside the iterator at the same time
        for item in iterator:
            await worker(item)

    async with asyncio.TaskGroup() as group:
        for _ in range(limit):
            group.create_task(drain())
