"""How a run option is written on the command line, and how its text becomes a value.

`Flag` is the metadata a `reljudge.run.config.RunConfig` field carries (``Annotated[..., Flag(...)]``):
the option that sets it, its help text, the commands that take it and how the option's value
becomes the field's. `reljudge.cli` generates the ``judge run`` and ``judge probe`` options from
these, so a run option is declared once, next to its field.

The parsers turn option text into values: ``--option``/``--param`` ``key=value`` lists, the
``--pool`` spec and the ``--float`` policy; bad text is an `InputError` naming the option.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from reljudge.errors import InputError
from reljudge.io.trec import FLOAT_POLICIES, FloatPolicy

PoolKind = Literal["qrels", "run", "unjudged"]
#: the commands whose options come from `RunConfig` fields (``generate`` takes those of ``run``
#: but the ones about judging passages: `NOT_GENERATE`; ``judge batch export|import``, the
#: command ``batch-files``, those of ``run`` but `NOT_BATCH_FILES`)
RUN_COMMANDS: tuple[str, ...] = ("run", "probe", "generate")

#: the options of `judge run` that `judge generate` does not take: the method is ``generate``,
#: and these are about judging passages (pairs, question banks, label samples and scores,
#: passage lengths, qrels floats)
NOT_GENERATE = frozenset(
    {
        "method",
        "pairs",
        "question_bank",
        "answers",
        "samples",
        "scores",
        "constrain",
        "logprobs",
        "skip_missing",
        "max_passage_chars",
        "warn_passage_chars",
        "float_policy",
    }
)
#: the options of `judge run` that `judge batch export|import` do not take: those files go to
#: and come from an engine reljudge does not drive, so nothing about sending, pacing or paying
#: for requests applies (`reljudge.run.batch.exchange`)
NOT_BATCH_FILES = frozenset(
    {
        "concurrency",
        "rpm",
        "tpm",
        "timeout_s",
        "max_attempts",
        "dry_run",
        "max_cost",
        "batch",
        "batch_poll",
        "batch_max_wait",
        "batch_limits",
        "batch_resend_lost",
    }
)
#: the help of the options whose meaning differs in `judge generate`
GENERATE_HELP = {
    "prompt": "Answer prompt: generate/neutral (the default), generate/adversarial (answers prompted to be "
    "wrong, a negative control) or a template file with output type 'answer' and a {query} placeholder.",
    "pool": "The topics to answer: those of 'qrels' (default), 'run:FILE:K' or 'unjudged:FILE:K'.",
    "output": "Run directory (default runs/<dataset>-generate-<model>/); answers.tsv is written in it. "
    "Re-running the same command resumes it.",
    "options": "Generation option key=value (repeatable): max_tokens=N.",
    "limit": "Answer only the first N topics (deterministic).",
    "topics_limit": "Answer only the first N topics of the pool.",
}


# -- help texts made from the judge registry when the options are shown (lists of methods)


def method_help() -> str:
    """The ``--method`` help of ``judge run``: the registered judges (`reljudge.judges.registry`)."""
    from reljudge.judges.base import Judge
    from reljudge.judges.registry import judging_methods, listed, registered

    judges = registered()
    no_passages = judging_methods(reads_passages=False)  # answer generation; the judges of images
    # the judges that make answers declare them (`Judge.generated_answers`)
    base = Judge.generated_answers.__func__  # type: ignore[attr-defined]
    answering = [n for n in no_passages if getattr(judges[n].generated_answers, "__func__", None) is not base]
    judging = sorted({*judging_methods(), *(n for n in no_passages if n not in answering)})
    verb = "makes" if len(answering) == 1 else "make"
    tail = f"; {listed(answering, 'and')} {verb} answers (see judge generate)" if answering else ""
    return f"Judging method: {', '.join(judging)} (or a plugin){tail}."


def pointwise_help() -> str:
    """The ``--method`` help of ``judge probe``: the pointwise judges."""
    from reljudge.judges.registry import listed, pointwise_methods

    return f"Pointwise judging method: {listed(pointwise_methods())}."


def scores_help() -> str:
    from reljudge.judges.registry import listed, pointwise_methods

    return (
        "labels (default), or expected: also ask for log-probabilities and store, for pointwise judges "
        f"({listed(pointwise_methods())}) whose label is one token (binary or graded 0-9), the grade "
        "distribution at the label position and the expected grade (score set <method>-expected)."
    )


def answers_help() -> str:
    """The ``--answers`` help: what each judge that takes answers does with them (its `Resource`'s
    help) and the files of its answer scores."""
    from reljudge.judges.registry import resource_takers

    uses = []
    for name, (cls, resource) in resource_takers("answers").items():
        files = cls.answer_score_files
        written = f" ({files.json.removesuffix('.json')}-*.csv/.json)" if files is not None else ""
        uses.append(f"{name}: {resource.help}{written}")
    return (
        "Answers (TREC RAG 2024 .jsonl or system<TAB>qid<TAB>answer TSV; repeatable). "
        + "; ".join(uses)
        + "."
    )


class _FromField:
    """A `Flag` attribute left to what the field says (its type, default or bounds)."""

    def __repr__(self) -> str:
        return "FROM_FIELD"


FROM_FIELD: Any = _FromField()


@dataclass(frozen=True)
class Flag:
    """The command-line option that sets a `RunConfig` field (metadata of the field).

    ``name`` is the option (``--concurrency``), ``short`` an optional short form (``-o``),
    ``aliases`` other long names it accepts,
    ``help`` its help text, or a function that makes it when the option is shown (a list of the
    registered judges: `help_text`). The option's value reaches the command as a parameter named after
    the option (``--no-cache`` -> ``no_cache``). By default its type, default and lower/upper
    bound are the field's (``ge``/``gt``, ``le``/``lt``); ``type``, ``default``, ``min`` and
    ``max`` set them when the option differs from the field (``--no-cache`` is a flag that sets
    ``use_cache`` to False: ``type=bool, default=False, parse=...``). ``parse`` turns the option's
    value into the field's. ``commands`` are the commands that take the option; ``variants``
    changes attributes for one command (``{"probe": {"name": "--model-seed", "help": ...}}``).
    """

    name: str
    help: str | Callable[[], str]
    short: str | None = None
    #: other long names the option accepts (``--output`` beside ``--out``)
    aliases: tuple[str, ...] = ()
    type: Any = FROM_FIELD
    default: Any = FROM_FIELD
    min: float | None = FROM_FIELD
    max: float | None = FROM_FIELD
    parse: Callable[[Any], Any] | None = None
    commands: tuple[str, ...] = RUN_COMMANDS
    variants: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    def for_command(self, command: str) -> Flag | None:
        """This flag as ``command`` takes it (None when the command does not take it)."""
        if command not in self.commands:
            return None
        changes = self.variants.get(command)
        return replace(self, **changes, variants={}) if changes else self

    @property
    def help_text(self) -> str:
        """The option's help text (made now when ``help`` is a function)."""
        return self.help() if callable(self.help) else self.help

    @property
    def param(self) -> str:
        """The name of the command parameter that receives the option's value."""
        return self.name.lstrip("-").replace("-", "_")

    def value(self, given: Any) -> Any:
        """The field's value for the option's value ``given``."""
        return given if self.parse is None else self.parse(given)


def parse_option_value(text: str) -> Any:
    """``--option key=value`` values: YAML scalars (``3`` -> 3, ``true`` -> True, ``[a, b]``),
    anything else (also YAML with aliases, see `reljudge.io.yamlsafe`) stays a string."""
    from reljudge.io.yamlsafe import load_yaml

    try:
        value = load_yaml(text, "<option>")
    except InputError:
        return text
    return text if value is None and text.strip() not in ("null", "~") else value


def parse_options(items: Iterable[str], *, flag: str = "--option", normalise: bool = True) -> dict[str, Any]:
    """``["k=v", ...]`` -> ``{"k": parsed v}``; a malformed item or repeated key is an InputError.

    ``normalise`` turns dashes in keys into underscores (judge options are Python names;
    request fields given with ``--param`` are sent as written)."""
    options: dict[str, Any] = {}
    for item in items:
        name, sep, value = item.partition("=")
        name = name.strip()
        if normalise:
            name = name.replace("-", "_")
        if not sep or not name:
            raise InputError(f"{flag} {item!r}: expected key=value")
        if name in options:
            raise InputError(f"{flag} {name!r} is given twice")
        options[name] = parse_option_value(value)
    return options


def judge_option_list(items: Iterable[str] | None) -> dict[str, Any]:
    """The values of ``--option`` (repeatable)."""
    return parse_options(items or ())


def request_field_list(items: Iterable[str] | None) -> dict[str, Any]:
    """The values of ``--param`` (repeatable): request fields, keys as written. A credential
    (`reljudge.io.redact.credential_field`) is refused: it would be written in clear to batch files."""
    from reljudge.io.redact import credential_field

    fields = parse_options(items or (), flag="--param", normalise=False)
    found = credential_field(fields)
    if found:
        raise InputError(
            f"--param {found}: a credential is never sent as a request field (it would be written in "
            "clear to batch request files, exports and cache keys); put it in an environment variable "
            "and name it with --api-key-env"
        )
    return fields


def parse_float_policy(text: str) -> FloatPolicy:
    """The ``--float`` policy."""
    if text not in FLOAT_POLICIES:
        raise InputError(f"--float {text!r}: expected round, scale or keep")
    return text  # type: ignore[return-value]


def parse_pool_spec(spec: str) -> tuple[PoolKind, Path | None, int | None]:
    """``qrels`` | ``run:FILE:K`` | ``unjudged:FILE:K`` -> (kind, file, k)."""
    if spec == "qrels":
        return "qrels", None, None
    kind, sep, rest = spec.partition(":")
    if kind in ("run", "unjudged") and sep:
        file, sep2, k_text = rest.rpartition(":")
        if sep2 and file:
            try:
                k = int(k_text)
            except ValueError:
                k = 0
            if k >= 1:
                return kind, Path(file), k  # type: ignore[return-value]
        raise InputError(
            f"--pool {spec!r}: expected {kind}:FILE:K with K a positive integer (e.g. {kind}:run.txt:10)"
        )
    raise InputError(f"--pool {spec!r}: expected 'qrels', 'run:FILE:K' or 'unjudged:FILE:K'")


def parse_concurrency(value: Any) -> int | str:
    """``--concurrency``: ``N`` (the ceiling of an adaptive level) or ``fixed:N`` (always N in
    flight, as before); N >= 1. A plain integer stays an integer."""
    return (
        value
        if isinstance(value, int) and not isinstance(value, bool) and value >= 1
        else _concurrency(value)
    )


def _concurrency(value: Any) -> int | str:
    text = str(value).strip().lower()
    fixed = text.startswith("fixed:")
    number = text[len("fixed:") :] if fixed else text
    try:
        n = int(number)
    except ValueError:
        n = 0
    if n < 1 or isinstance(value, bool):
        raise ValueError(f"--concurrency must be N or fixed:N with N >= 1, got {value!r}")
    return f"fixed:{n}" if fixed else n


def concurrency_setting(value: int | str) -> tuple[int, bool]:
    """(N, adaptive) of a `parse_concurrency` value."""
    parsed = parse_concurrency(value)
    if isinstance(parsed, int):
        return parsed, True
    return int(parsed.split(":", 1)[1]), False


def parse_concurrency_flag(value: Any) -> int | str:
    """`parse_concurrency` for the command line: a bad value is an `InputError` (exit 2)."""
    try:
        return parse_concurrency(value)
    except ValueError as err:
        raise InputError(str(err)) from None


#: the limits ``--batch-limit`` sets (`reljudge.run.batch.passes.BatchLimits`): requests and megabytes per
#: batch file, and the provider's enqueued-token limit
BATCH_LIMITS = {"requests": "max_requests", "mb": "max_bytes", "tokens": "max_enqueued_tokens"}


def batch_limit_list(items: Iterable[str] | None) -> dict[str, int]:
    """The values of ``--batch-limit`` (repeatable ``requests=N``, ``mb=M``, ``tokens=T``)."""
    out: dict[str, int] = {}
    for name, value in parse_options(items or (), flag="--batch-limit").items():
        if name not in BATCH_LIMITS:
            raise InputError(f"--batch-limit {name}: expected one of {', '.join(BATCH_LIMITS)}")
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise InputError(f"--batch-limit {name}={value!r}: expected a positive whole number")
        out[name] = value
    return out


#: ``judge run --batch`` and its options (`reljudge.run.batch`), the Flags of their `RunConfig` fields
BATCH_FLAGS = {
    "batch": Flag(
        "--batch",
        "Send the requests through the provider's Batch API (OpenAI /v1/batches: half price, answers within "
        "24 h); resumable (the same command re-attaches to its batches), multi-stage methods run in rounds. "
        "Needs the response cache.",
        commands=("run",),
    ),
    "poll": Flag(
        "--batch-poll", "Seconds between two looks at the running batches (--batch).", commands=("run",)
    ),
    "wait": Flag(
        "--batch-max-wait",
        "Stop waiting for running batches after this many seconds (--batch; default 90000, 25 h): everything "
        "is saved, the exit code is 75, and the same command re-attaches to them.",
        commands=("run",),
    ),
    "resend": Flag(
        "--batch-resend-lost",
        "Create again the batch of a wave whose create failed and whose batch the provider does not show "
        "(the error that stopped the run names it); if the provider did make it, it is paid twice (--batch).",
        commands=("run",),
    ),
    "limit": Flag(
        "--batch-limit",
        "A limit of the provider's Batch API, key=value (repeatable): requests=N and mb=M per batch file "
        "(default 50000 and 200), tokens=T enqueued at once (default: no limit; estimated at 4 bytes a token).",
        type=list[str] | None,
        default=None,
        parse=batch_limit_list,
        commands=("run",),
    ),
}
