"""The judging pipeline behind ``judge run``: inputs -> pool -> judge -> run directory.

`run_job` (and `run_job_async`, for callers that own an event loop or share one `LLMClient`
across many jobs, such as sweeps) performs one job:

1. resolve the inputs (a bundled or on-disk dataset, or explicit topics/qrels/corpus files);
2. build the pool of items to judge (see `build_pool`) and check that every passage has a text;
3. build the judge (`reljudge.judges.get_judge`);
4. with ``dry_run``: estimate calls, tokens and cost, and stop (no call, nothing written);
5. open the run directory, refuse to mix configurations, load the records of an earlier
   (interrupted) run so that nothing is judged twice;
6. run the judge, appending each record to ``judgments.jsonl`` as it is produced;
7. write ``qrels.txt`` (derived labels) and ``manifest.json`` atomically — at the end, and also
   when the job is interrupted (Ctrl-C, or SIGTERM/SIGHUP through `reljudge.interrupts`) or
   aborted, so that nothing is lost and the same command resumes.

Only the passages the job uses are read (the pool, and the judged passages of its topics),
streaming the corpus file (`read_passages`).

The job's outcome is a `RunSummary`; its ``exit_code`` is 1 when the share of failed records
(unparsed, api_error, refused, truncated among all non-skipped records) exceeds
``max_failure_rate``, or when the provider cannot serve the job at all (a `ProviderAbort` from
the client: ``state="aborted"``, the records so far are kept). A run directory that cannot be
written (a full disk, a read-only file system) is an `OutputError` (an `InputError`).

The pool and ``limit``: items are taken in a fixed order — topics in the order of the topics
file, and inside a topic the documents in the order of the qrels file (``qrels`` pool) or by rank
(``run:``/``unjudged:`` pools; trec_eval order: score descending, ties by docid descending).
``topics_limit=N`` keeps the first N topics that have pooled items; ``limit=N`` then keeps the first
N items of that sequence (a pair is one item for pairwise). Running with a larger limit (or none)
later extends the same job: the items already judged are not judged again.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import shutil
import sys
import time
from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from reljudge.errors import EXIT_FAILURE, EXIT_OK, InputError
from reljudge.io.rundir import RETRY_FAILED_STATUSES
from reljudge.records import FAILURE_STATUSES, STATUSES, Judgment, Usage, utc_now

logger = logging.getLogger(__name__)

if TYPE_CHECKING:
    from reljudge.io.rundir import RecordStats, RunDir
    from reljudge.judges.base import Judge, JudgeInputs
    from reljudge.llm import ClientConfig, LLMClient
    from reljudge.llm.types import ProviderAbort

FloatPolicy = Literal["round", "scale", "keep"]
#: how a job ended: all items done, Ctrl-C or a signal, an error, or the provider could not serve it
JobState = Literal["finished", "interrupted", "failed", "aborted"]
#: the settings a resumed job must share with the run directory's manifest
IDENTITY_FIELDS: tuple[str, ...] = (
    "method",
    "model",
    "prompt",
    "options",
    "temperature",
    "seed",
    "max_tokens",
    "logprobs",
    "params",
    "question_bank",
    "base_url",
    "max_passage_chars",
)
#: options that name a resource file a judge can take (`reljudge.judges.base.Resource`)
RESOURCE_FIELDS: tuple[str, ...] = ("question_bank",)
#: passages longer than this many characters are reported (a warning, and in ``--dry-run``):
#: MS MARCO passages are under 1,000; a 20,000-character one is usually an extraction accident
DEFAULT_WARN_PASSAGE_CHARS = 20_000
#: identity fields added after run directories were first written, with what a manifest that
#: lacks one (written before the field existed) is taken to have meant: ``base_url`` is unknown
#: (accepted, and recorded from then on); anything else was the default (None)
_ADDED_IDENTITY_FIELDS: dict[str, Callable[[Any], bool]] = {
    "base_url": lambda now: True,
}


class RunConfig(BaseModel):
    """Everything one judging job needs. Mirrors the options of ``judge run``."""

    model_config = ConfigDict(extra="forbid")

    method: str
    model: str
    base_url: str | None = None
    api_key_env: str | None = None  # the NAME of the variable holding the key, never the key
    dataset: str | None = None
    topics: Path | None = None
    qrels: Path | None = None
    corpus: Path | None = None
    pool: str = "qrels"  # qrels | run:FILE:K | unjudged:FILE:K
    pairs: Path | None = None
    prompt: str | None = None
    options: dict[str, Any] = Field(default_factory=dict)
    output: Path | None = None
    runs_root: Path = Path("runs")
    concurrency: int = Field(8, ge=1)
    rpm: float | None = Field(None, gt=0)
    tpm: float | None = Field(None, gt=0)
    timeout_s: float = Field(60.0, gt=0)
    max_attempts: int = Field(6, ge=1)
    limit: int | None = Field(None, ge=1)
    topics_limit: int | None = Field(None, ge=1)
    dry_run: bool = False
    retry_failed: bool = False
    skip_missing: bool = False
    use_cache: bool = True
    cache_path: Path | None = None
    max_failure_rate: float = Field(0.05, ge=0, le=1)
    temperature: float | None = 0.0
    seed: int | None = 42
    max_tokens: int | None = Field(None, ge=1)
    logprobs: bool = False
    params: dict[str, Any] = Field(default_factory=dict)  # extra request fields (--param)
    question_bank: str | None = None  # a question file for judges that take one, or "dataset"
    max_passage_chars: int | None = Field(None, ge=1)  # cut longer passages to this many characters
    warn_passage_chars: int = Field(DEFAULT_WARN_PASSAGE_CHARS, ge=0)  # warn about longer ones (0: never)
    prices: Path | None = None
    float_policy: FloatPolicy = "round"
    progress: bool | None = None  # None: a bar when stderr is a terminal
    command: list[str] | None = None  # the command line, for the manifest (secrets are masked)

    @field_validator("pool")
    @classmethod
    def _check_pool(cls, value: str) -> str:
        parse_pool_spec(value)
        return value

    def identity(self) -> dict[str, Any]:
        """The settings that make two runs' records comparable (checked on resume). The base
        URL is normalised and without credentials (``""`` for the provider's default)."""
        from reljudge.llm.backends.base import normalise_base_url

        identity = {name: _jsonable(getattr(self, name)) for name in IDENTITY_FIELDS}
        identity["base_url"] = normalise_base_url(self.base_url)
        return identity


class RunSummary(BaseModel):
    """What a job did. ``exit_code``: 0 ok, 1 failure share above ``max_failure_rate`` or the
    job aborted (the provider cannot serve it, see ``abort``)."""

    model_config = ConfigDict(extra="forbid")

    state: Literal["finished", "interrupted", "failed", "aborted", "dry-run"]
    method: str
    model: str
    output_dir: Path | None = None
    items: int = 0  # pooled items of this invocation
    records: int = 0  # records in the run directory (last per key)
    new_records: int = 0  # records written by this invocation
    statuses: dict[str, int] = Field(default_factory=dict)  # all records (last per key)
    fallbacks: dict[str, int] = Field(default_factory=dict)  # labels read by a fallback parser
    usage: Usage = Field(default_factory=Usage)  # this invocation
    total_usage: Usage = Field(default_factory=Usage)  # every call the run directory records
    price_known: bool = True
    cache_hits: int = 0
    retries: int = 0
    retry_causes: dict[str, int] = Field(default_factory=dict)  # retried attempts by error kind
    failure_causes: dict[str, int] = Field(default_factory=dict)  # calls that finally failed, by kind
    wall_time_s: float = 0.0
    failure_rate: float = 0.0
    max_failure_rate: float = 0.05
    retryable_failures: int = 0  # records --retry-failed asks again (api_error, truncated, unparsed)
    api_error_kinds: dict[str, int] = Field(default_factory=dict)  # api_error records by error kind
    #: why the job stopped early when ``state == "aborted"``: the provider's error
    #: (``kind``, ``message``, ``status_code``, ``hint``)
    abort: dict[str, Any] | None = None
    qrels_pairs: int = 0
    #: documents left out of qrels.txt until all their stage records exist (EXAM questions,
    #: nuggets; an interrupted multi-stage run)
    incomplete: int = 0
    estimate: dict[str, Any] | None = None
    exit_code: int = EXIT_OK

    def render(self) -> str:
        """A human-readable summary (several lines)."""
        if self.state == "dry-run":
            return render_estimate(self.estimate or {})
        lines = [f"{self.state}: {self.method} with {self.model} -> {self.output_dir}"]
        counts = ", ".join(f"{s} {n}" for s, n in self.statuses.items() if n) or "none"
        lines.append(f"records: {self.records} ({counts}); {self.new_records} new in this run")
        if self.fallbacks:
            lines.append(
                "parse fallbacks: " + ", ".join(f"{k} {v}" for k, v in sorted(self.fallbacks.items()))
            )
        cost = f"${self.usage.cost_usd:.4f}" + ("" if self.price_known else " (price unknown for this model)")
        lines.append(
            f"this run: {self.usage.calls} calls, {self.usage.prompt_tokens} prompt + "
            f"{self.usage.completion_tokens} completion tokens, {cost}, {self.cache_hits} cache hits, "
            f"{self.retries} retries, {self.wall_time_s:.1f}s"
        )
        if self.retry_causes or self.failure_causes:
            causes = ", ".join(f"{k} {v}" for k, v in sorted(self.retry_causes.items())) or "none"
            failed = ", ".join(f"{k} {v}" for k, v in sorted(self.failure_causes.items())) or "none"
            lines.append(f"retries by cause: {causes}; calls that failed after all attempts: {failed}")
        if self.total_usage.calls != self.usage.calls:
            lines.append(
                f"all runs in this directory: {self.total_usage.calls} calls, "
                f"{self.total_usage.total_tokens} tokens, ${self.total_usage.cost_usd:.4f}"
            )
        lines.append(
            f"failure share: {self.failure_rate:.1%} (limit {self.max_failure_rate:.1%}); "
            f"qrels: {self.qrels_pairs} labelled pairs"
        )
        if self.incomplete:
            lines.append(
                f"{self.incomplete} document(s) left out of qrels.txt: not yet judged on every "
                "question/nugget of their topic (resume the job to complete them)"
            )
        lines += failure_advice(self.statuses, self.api_error_kinds)
        if self.state == "interrupted":
            lines.append("interrupted: re-run the same command to continue where it stopped")
        elif self.state == "aborted":
            what = (self.abort or {}).get("kind") or "error"
            lines.append(
                f"aborted: the provider cannot serve this job ({what}); the records so far are kept. "
                "Fix the cause, then re-run the same command to continue"
            )
        elif self.state == "failed":
            lines.append(
                "stopped by an error (see below); the records so far are kept and the same command resumes"
            )
        elif self.exit_code != EXIT_OK:
            lines.append(f"failed: the failure share is above --max-failure-rate {self.max_failure_rate}")
        return "\n".join(lines)


def failure_advice(statuses: Mapping[str, int], api_error_kinds: Mapping[str, int]) -> list[str]:
    """What re-running with ``--retry-failed`` does for each kind of failed record: one line per
    group (transient provider errors, errors a retry alone does not fix, cut-off answers,
    unparsed answers). ``api_error_kinds``: api_error records by error kind."""
    from reljudge.llm.types import RETRYABLE_KINDS

    def detail(kinds: Mapping[str, int]) -> str:
        return ", ".join(f"{k} {n}" for k, n in sorted(kinds.items()))

    transient = {k: n for k, n in api_error_kinds.items() if k in RETRYABLE_KINDS}
    permanent = {k: n for k, n in api_error_kinds.items() if k in PERMANENT_KINDS}
    unclear = {k: n for k, n in api_error_kinds.items() if k not in RETRYABLE_KINDS | PERMANENT_KINDS}
    lines = []
    if transient:
        lines.append(
            f"{sum(transient.values())} api_error record(s) failed for a transient reason "
            f"({detail(transient)}): --retry-failed judges them again"
        )
    if permanent:
        lines.append(
            f"{sum(permanent.values())} api_error record(s) failed for a reason a retry does not fix "
            f"({detail(permanent)}): fix the API key, endpoint, model or request first; "
            "--retry-failed alone fails the same way"
        )
    if unclear:
        lines.append(
            f"{sum(unclear.values())} api_error record(s) failed otherwise ({detail(unclear)}): "
            "--retry-failed asks again, which may or may not help"
        )
    if statuses.get("truncated"):
        lines.append(
            f"{statuses['truncated']} truncated record(s) hit the answer token limit: a larger "
            "--max-tokens fixes them (a new job: another --output); --retry-failed keeps the limit"
        )
    if statuses.get("unparsed"):
        lines.append(
            f"{statuses['unparsed']} unparsed record(s): --retry-failed asks the model again "
            "(a plain resume keeps them)"
        )
    return lines


#: api_error kinds a retry with the same settings does not fix (`reljudge.llm.types.ErrorKind`)
PERMANENT_KINDS: frozenset[str] = frozenset({"auth", "bad_request", "context_length", "content_filter"})


# ---------------------------------------------------------------------------------------------
# small helpers


def _jsonable(value: Any) -> Any:
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in sorted(value.items())}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return value


def sanitise(name: str) -> str:
    """A string safe as one path component (``ollama/llama3.2:3b`` -> ``ollama-llama3.2-3b``)."""
    cleaned = re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-.")
    return cleaned or "x"


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


PoolKind = Literal["qrels", "run", "unjudged"]


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


# ---------------------------------------------------------------------------------------------
# inputs and pool


@dataclass
class ResolvedInputs:
    """The data a job reads, before pooling. ``corpus`` holds every passage, or, once
    `read_passages` ran, only the pooled ones (read from ``dataset``)."""

    name: str
    topics: Mapping[str, str]
    qrels: Mapping[str, Mapping[str, int | float]] | None
    corpus: Mapping[str, str]
    sources: dict[str, str] = field(default_factory=dict)  # what was read from where
    nonrelevant_grade: int = 0  # the lowest grade of the human scale (1 on ANTIQUE)
    dataset: Any = None  # the `reljudge.datasets.Dataset` the inputs come from


def resolve_inputs(config: RunConfig, *, passages: bool = True) -> ResolvedInputs:
    """Load the dataset named by ``config.dataset`` and/or the explicit files (which override).

    ``passages=False`` leaves the passage texts unread (``corpus`` is empty): a job builds its
    pool first and then reads only the pooled passages (`read_passages`)."""
    from reljudge.datasets import load_dataset

    if config.dataset is None and config.topics is None:
        raise InputError("no input: give --dataset NAME|DIR, or --topics FILE with --qrels and --corpus")
    data = load_dataset(
        config.dataset, topics=config.topics, qrels=config.qrels, corpus=config.corpus, passages=passages
    )
    if not data.has_corpus:
        raise InputError(f"dataset {data.name!r} has no passage texts: give --corpus FILE")
    return ResolvedInputs(
        name=data.name if config.dataset is not None else _dataset_name(config),
        topics=data.topics,
        qrels=data.qrels if data.has_qrels else None,
        corpus=data.corpus if passages else {},
        sources={k: str(v) for k, v in data.paths.items()},
        nonrelevant_grade=data.min_grade,
        dataset=data,
    )


@dataclass
class PassageStats:
    """What reading the pooled passages found: how many were read, how many are longer than
    ``warn_chars`` as they will be sent (and the longest), how many were cut to ``max_chars``."""

    read: int = 0
    warn_chars: int = DEFAULT_WARN_PASSAGE_CHARS
    long: int = 0
    longest: tuple[str, int] | None = None  # (docid, characters) as sent
    max_chars: int | None = None
    truncated: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {
            "read": self.read,
            "warn_chars": self.warn_chars,
            "longer": self.long,
            "longest": list(self.longest) if self.longest else None,
            "max_chars": self.max_chars,
            "truncated": self.truncated,
        }

    def warning(self) -> str | None:
        """One line about the passages longer than ``warn_chars`` (None when there are none)."""
        if not self.long or self.longest is None:
            return None
        docid, chars = self.longest
        advice = "" if self.max_chars is not None else "; --max-passage-chars N cuts them to N characters"
        return (
            f"{self.long} pooled passage(s) are longer than {self.warn_chars:,} characters (the longest, "
            f"{docid}, has {chars:,}): they cost many tokens and may not fit the model's context{advice}"
        )


def read_passages(config: RunConfig, inputs: ResolvedInputs, pool: Pool) -> PassageStats:
    """Read only the passages a job can use into ``inputs.corpus`` -- the pooled ones and the
    judged ones of the pooled topics (nuggets are made from those) -- streaming the corpus file,
    so that memory holds these passages, not the collection; cut those longer than
    ``max_passage_chars``; count the pooled ones longer than ``warn_passage_chars``."""
    from reljudge.io.corpus import Corpus

    pooled = {d for docs in pool.docs.values() for d in docs}
    wanted = set(pooled)
    if inputs.qrels is not None:
        for qid in pool.docs:
            wanted.update(inputs.qrels.get(qid, ()))
    source = inputs.dataset.passages(wanted) if inputs.dataset is not None else inputs.corpus
    texts = {d: source[d] for d in wanted if d in source}
    stats = PassageStats(
        read=sum(1 for d in pooled if d in texts),
        warn_chars=config.warn_passage_chars,
        max_chars=config.max_passage_chars,
    )
    limit = config.max_passage_chars
    if limit is not None:
        for docid, text in texts.items():
            if len(text) > limit:
                texts[docid] = text[:limit]
                stats.truncated += docid in pooled
    if config.warn_passage_chars:
        for docid in sorted(pooled):
            chars = len(texts.get(docid, ""))
            if chars > config.warn_passage_chars:
                stats.long += 1
                if stats.longest is None or chars > stats.longest[1]:
                    stats.longest = (docid, chars)
    inputs.corpus = Corpus(texts, getattr(source, "path", None))
    return stats


def _dataset_name(config: RunConfig) -> str:
    if config.dataset is not None:
        path = Path(config.dataset)
        return path.name if path.exists() else config.dataset
    assert config.topics is not None
    parent = config.topics.resolve().parent.name
    return parent or config.topics.stem


@dataclass
class Pool:
    """The items of one job: per topic, documents (and, for pairwise, explicit pairs)."""

    docs: dict[str, list[str]]
    pairs: dict[str, list[tuple[str, str]]] | None = None
    pair_categories: dict[tuple[str, str, str], tuple[str, str]] = field(default_factory=dict)
    description: str = ""

    @property
    def n_items(self) -> int:
        if self.pairs is not None:
            return sum(len(p) for p in self.pairs.values())
        return sum(len(d) for d in self.docs.values())


def read_pairs(
    path: Path,
) -> tuple[dict[str, list[tuple[str, str]]], dict[tuple[str, str, str], tuple[str, str]]]:
    """Read a pairs file: ``qid docidA docidB`` (whitespace) or the prompt-sensitivity TSV
    ``qid cat1 cat2 docid1 docid2``. Returns pairs per topic (file order) and the categories."""
    from reljudge.io.lines import read_lines  # the shared tolerant line reader (gzip, CRLF, UTF-8)

    pairs: dict[str, list[tuple[str, str]]] = {}
    categories: dict[tuple[str, str, str], tuple[str, str]] = {}
    seen: dict[tuple[str, str, str], int] = {}
    for number, line in read_lines(path):
        parts = line.split()
        if not parts or line.lstrip().startswith("#"):
            continue
        if len(parts) == 3:
            qid, a, b = parts
            cats = None
        elif len(parts) == 5:
            qid, c1, c2, a, b = parts
            cats = (c1, c2)
        else:
            raise InputError(
                f"expected 'qid docidA docidB' or 'qid cat1 cat2 docid1 docid2', found {len(parts)} columns",
                path,
                number,
            )
        if a == b:
            raise InputError(f"a pair compares document {a!r} with itself", path, number)
        pair_key = (qid, a, b)
        if pair_key in seen:
            raise InputError(
                f"duplicate pair {a} {b} for topic {qid!r} (first on line {seen[pair_key]})", path, number
            )
        seen[pair_key] = number
        pairs.setdefault(qid, []).append((a, b))
        if cats is not None:
            categories[pair_key] = cats
    if not pairs:
        raise InputError("no pairs in file", path)
    return pairs, categories


def build_pool(config: RunConfig, inputs: ResolvedInputs) -> Pool:
    """The items to judge, in a fixed order, with ``topics_limit`` and ``limit`` applied."""
    from reljudge.io.trec import read_run

    topic_order = list(inputs.topics)
    kind, run_path, k = parse_pool_spec(config.pool)
    pairs: dict[str, list[tuple[str, str]]] | None = None
    categories: dict[tuple[str, str, str], tuple[str, str]] = {}
    if config.pairs is not None:
        pairs, categories = read_pairs(config.pairs)
        unknown = [q for q in pairs if q not in inputs.topics]
        if unknown:
            raise InputError(
                f"{len(unknown)} topic(s) of the pairs file are not among the topics: {', '.join(unknown[:5])}",
                config.pairs,
            )
        docs = {q: _unique(d for pair in pairs[q] for d in pair) for q in topic_order if q in pairs}
        description = f"pairs from {config.pairs}"
    elif kind == "qrels":
        if inputs.qrels is None:
            raise InputError("the pool 'qrels' needs a qrels file: give --qrels, or --pool run:FILE:K")
        docs = {q: list(inputs.qrels[q]) for q in topic_order if inputs.qrels.get(q)}
        extra = [q for q in inputs.qrels if q not in inputs.topics]
        if extra and not docs:
            raise InputError(f"no qrels topic is among the topics (e.g. {extra[0]!r})")
        description = "judged pairs of the qrels"
    else:
        assert run_path is not None and k is not None
        run = read_run(run_path, topics=inputs.topics)  # an unknown topic is file:line bad input
        unknown = [q for q in run if q not in inputs.topics]
        docs = {}
        for q in topic_order:
            if q not in run:
                continue
            ranked = run.ranked(q)[:k]
            if kind == "unjudged":
                if inputs.qrels is None:
                    raise InputError("the pool 'unjudged:FILE:K' needs a qrels file (--qrels or a dataset)")
                judged = inputs.qrels.get(q, {})
                ranked = [d for d in ranked if d not in judged]
            if ranked:
                docs[q] = ranked
        if not docs:
            hint = f" (run topics such as {unknown[0]!r} are not among the topics)" if unknown else ""
            raise InputError(f"the pool is empty{hint}", run_path)
        what = "top" if kind == "run" else "unjudged documents of the top"
        description = f"{what} {k} of {run_path}"
    if config.topics_limit is not None:
        keep = list(docs)[: config.topics_limit]
        docs = {q: docs[q] for q in keep}
        if pairs is not None:
            pairs = {q: pairs[q] for q in keep}
    if config.limit is not None:
        budget = config.limit
        if pairs is not None:
            limited_pairs: dict[str, list[tuple[str, str]]] = {}
            for q, qpairs in pairs.items():
                if budget <= 0:
                    break
                limited_pairs[q] = qpairs[:budget]
                budget -= len(limited_pairs[q])
            pairs = limited_pairs
            docs = {q: _unique(d for pair in pairs[q] for d in pair) for q in pairs}
        else:
            limited: dict[str, list[str]] = {}
            for q, qdocs in docs.items():
                if budget <= 0:
                    break
                limited[q] = qdocs[:budget]
                budget -= len(limited[q])
            docs = limited
    if pairs is not None:
        pairs = {q: pairs[q] for q in docs}
        categories = {
            key: c for key, c in categories.items() if key[0] in pairs and (key[1], key[2]) in pairs[key[0]]
        }
    if not docs:
        raise InputError("the pool is empty: nothing to judge")
    return Pool(docs=docs, pairs=pairs, pair_categories=categories, description=description)


def _unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))


def check_passages(pool: Pool, inputs: ResolvedInputs, *, skip_missing: bool) -> list[tuple[str, str]]:
    """The (qid, docid) items whose passage text is missing; an InputError unless ``skip_missing``."""
    missing = [(q, d) for q, ds in pool.docs.items() for d in ds if d not in inputs.corpus]
    no_query = [q for q in pool.docs if q not in inputs.topics]
    if no_query:
        raise InputError(f"{len(no_query)} pooled topic(s) have no query text: {', '.join(no_query[:5])}")
    if missing and not skip_missing:
        shown = ", ".join(f"{q}/{d}" for q, d in missing[:5])
        more = f" and {len(missing) - 5} more" if len(missing) > 5 else ""
        source = inputs.sources.get("corpus", "the corpus")
        raise InputError(
            f"{len(missing)} pooled passage(s) have no text in {source}: {shown}{more} "
            "(give a corpus that holds them, or --skip-missing to record them as 'skipped')"
        )
    return missing


def load_resources(config: RunConfig, judge: Judge) -> dict[str, Any]:
    """The resources the run gives the judge (`reljudge.judges.base.Resource`), read from the
    files the options name (``--question-bank FILE``), or ``dataset`` for the dataset's own copy.
    An option the judge takes no resource for is bad input."""
    given = {name: getattr(config, name) for name in RESOURCE_FIELDS if getattr(config, name) is not None}
    declared = {r.name: r for r in judge.resources}
    resources: dict[str, Any] = {}
    for name, value in given.items():
        option = "--" + name.replace("_", "-")
        resource = declared.get(name)
        if resource is None:
            from reljudge.judges.registry import registered

            takers = [
                n for n, cls in sorted(registered().items()) if any(r.name == name for r in cls.resources)
            ]
            raise InputError(
                f"{option} is for --method {' or '.join(takers) or '(none)'}, not {config.method!r}"
            )
        if value == "dataset":
            from reljudge.datasets import load_dataset

            if config.dataset is None:
                raise InputError(f"{option} dataset needs --dataset")
            path = load_dataset(config.dataset).paths.get(resource.dataset_file or name)
            if path is None:
                raise InputError(
                    f"dataset {config.dataset!r} has no {name.replace('_', ' ')}; give {option} FILE"
                )
        else:
            path = Path(value)
        resources[name] = resource.read(path)
    return resources


def judge_inputs(inputs: ResolvedInputs, pool: Pool, given: Mapping[str, Any] | None = None) -> JudgeInputs:
    from reljudge.judges.base import JudgeInputs

    resources: dict[str, Any] = {"nonrelevant_grade": inputs.nonrelevant_grade}
    if pool.pair_categories:
        resources["pair_categories"] = dict(pool.pair_categories)
    resources.update(given or {})
    return JudgeInputs(
        topics=inputs.topics,
        corpus=inputs.corpus,
        pool=pool.docs,
        qrels=inputs.qrels,
        pairs=pool.pairs,
        resources=resources,
    )


def judge_options(config: RunConfig) -> dict[str, Any]:
    """The judge's constructor options: ``--option``s and ``--prompt``, adapted by the judge to
    the run's inputs (`Judge.adapt_options`: with a ``--pairs`` file a pairwise judge judges
    exactly those pairs)."""
    from reljudge.judges.registry import registered

    options = dict(config.options)
    if config.prompt is not None:
        if "prompt" in options:
            raise InputError("give the prompt either with --prompt or with --option prompt=..., not both")
        options["prompt"] = config.prompt  # a bundled prompt id or a template file
    cls = registered().get(config.method)
    if cls is not None:
        options = cls.adapt_options(options, pairs_given=config.pairs is not None)
    return options


def build_judge(config: RunConfig, **overrides: Any) -> Judge:
    from reljudge.judges.registry import available_judges, get_judge

    names = available_judges()
    if config.method not in names:
        raise InputError(f"unknown method {config.method!r}; available: {', '.join(names)}")
    return get_judge(config.method, **{**judge_options(config), **overrides})


def job_identity(config: RunConfig, judge: Judge) -> dict[str, Any]:
    """`RunConfig.identity` plus the SHA-256 of every prompt the judge may send
    (`Judge.prompts`), so that an edited prompt file is not mixed with the records of the old one."""
    identity = config.identity()
    identity["prompt_sha256"] = {name: template.sha256 for name, template in judge.prompts().items()}
    return identity


# ---------------------------------------------------------------------------------------------
# estimates (--dry-run)


def estimate_job(config: RunConfig, judge: Judge, inputs: JudgeInputs, pool: Pool) -> dict[str, Any]:
    """Calls, tokens and cost the job would spend from scratch, with how calls grow with depth."""
    from reljudge.llm.pricing import cost_usd, load_prices, merge_prices
    from reljudge.llm.routing import resolve_model

    est = judge.estimate(inputs)
    backend, provider_model = resolve_model(config.model)
    table = load_prices(config.prices) if config.prices is not None else merge_prices(None)
    cost, known = cost_usd(backend, provider_model, est.prompt_tokens, est.completion_tokens, table)
    growth = judge.estimate_growth(inputs)  # how the calls grow with the pool depth
    return {
        "method": config.method,
        "model": config.model,
        "topics": len(pool.docs),
        "items": pool.n_items,
        "documents": sum(len(d) for d in pool.docs.values()),
        "pool": pool.description,
        "calls": est.calls,
        "prompt_tokens": est.prompt_tokens,
        "completion_tokens": est.completion_tokens,
        "cost_usd": cost,
        "price_known": known,
        "note": est.note,
        "growth": growth,
    }


def render_estimate(est: Mapping[str, Any]) -> str:
    if not est:
        return "dry run: nothing to estimate"
    cost = (
        f"${est['cost_usd']:.4f}"
        if est.get("price_known", True)
        else "unknown (no price for this model; see --prices)"
    )
    lines = [
        f"dry run: {est['method']} with {est['model']} on {est['topics']} topic(s), {est['items']} item(s) ({est['pool']})",
        f"LLM calls: {est['calls']}",
        f"tokens (estimate, ~4 characters a token): {est['prompt_tokens']} prompt + {est['completion_tokens']} completion",
        f"cost (estimate): {cost}",
    ]
    if est.get("existing_records"):
        lines.append(
            f"{est['existing_records']} record(s) already in {est['output_dir']}: a resumed run makes fewer calls"
        )
    passages = est.get("passages") or {}
    if passages.get("truncated"):
        lines.append(
            f"passages: {passages['truncated']} of {passages['read']} cut to {passages['max_chars']:,} "
            "characters (--max-passage-chars)"
        )
    if passages.get("longer"):
        docid, chars = passages["longest"]
        advice = "" if passages.get("max_chars") else "; --max-passage-chars N cuts them"
        lines.append(
            f"passages: {passages['longer']} of {passages['read']} longer than {passages['warn_chars']:,} "
            f"characters (the longest, {docid}, has {chars:,}){advice}"
        )
    if est.get("note"):
        lines.append(f"note: {est['note']}")
    growth = est.get("growth") or []
    if growth:
        lines.append("pairwise calls by pool depth (documents per topic; both orders of each pair):")
        lines.append(f"  {'depth':>5}  {'pairs':>9}  {'all pairs':>10}  {'sampler':>10}")
        for row in growth:
            lines.append(f"  {row['depth']:>5}  {row['pairs']:>9}  {row['all']:>10}  {row['sampler']:>10}")
    lines.append("nothing was called and nothing was written")
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# the run directory


def default_output_dir(config: RunConfig, dataset_name: str) -> Path:
    """``runs/<dataset>-<method>-<model>`` (each part made safe as a file name)."""
    return config.runs_root / f"{sanitise(dataset_name)}-{sanitise(config.method)}-{sanitise(config.model)}"


def _is_none(value: Any) -> bool:
    return value is None


def check_identity(rundir: RunDir, identity: Mapping[str, Any]) -> dict[str, Any]:
    """Refuse to add records made with other settings to an existing run directory.
    Returns the earlier manifest (empty for a new directory)."""
    manifest = rundir.read_manifest()
    if not manifest:
        if rundir.exists() and rundir.judgments_path.stat().st_size > 0:
            raise InputError(
                f"holds judgments but no {rundir.manifest_path.name}, so how they were made is unknown; "
                "use another --output",
                rundir.path,
            )
        return {}
    earlier = (manifest.get("extra") or {}).get("identity")
    if not isinstance(earlier, Mapping):
        raise InputError(
            "not written by 'judge run' (no identity); use another --output", rundir.manifest_path
        )
    from reljudge.io.redact import scrub_secrets

    now = scrub_secrets(dict(identity))  # as the manifest has it (a secret --param is masked there)
    diffs = [
        name
        for name in now
        if (
            earlier[name] != now[name]
            if name in earlier
            else not _ADDED_IDENTITY_FIELDS.get(name, _is_none)(now[name])
        )
    ]
    if diffs:
        shown = "; ".join(f"{n} was {earlier.get(n)!r}, now {now.get(n)!r}" for n in diffs)
        raise InputError(
            f"holds a run made with other settings ({shown}); refusing to mix them. "
            "Give the same settings to resume it, or another --output for a new run",
            rundir.path,
        )
    return manifest


# ---------------------------------------------------------------------------------------------
# derived labels


def derive_qrels(
    judge: Judge,
    records: Iterable[Judgment],
    policy: FloatPolicy,
    *,
    resources: Mapping[str, Any] | None = None,
) -> tuple[dict, dict[str, Any]]:
    """Document labels of a job as qrels (float policy applied), and what aggregation left out.

    The judge scores its records (`Judge.score_sets`: its label records and the stage records
    they rest on, with the resources the run gave it); its primary set (`Judge.primary_set`)
    becomes the qrels. A failed record is never a label; it is counted in the exclusions.

    A document whose score would rest on an incomplete set of records -- as an interrupted run
    leaves them (an EXAM passage not yet graded on every question, a passage not yet assessed
    against every selected nugget) -- is left out until the job completes it; ``incomplete`` in
    the returned info counts them (documents).
    """
    from reljudge.aggregation.exclusions import Exclusions
    from reljudge.io.export import to_qrels

    try:
        sets = judge.score_sets(records, resources)
    except ValueError as err:
        raise InputError(f"cannot derive qrels: {err}") from None
    result = sets.get(judge.primary_set)
    if result is None:  # no label record yet
        return {}, {**Exclusions().as_dict(), "incomplete": 0}
    info: dict[str, Any] = {}
    if "assignments_without_scored_nugget" in result.details:
        info["assignments_without_scored_nugget"] = result.details["assignments_without_scored_nugget"]
    info.update(result.exclusions.as_dict())
    incomplete = set(result.incomplete)
    scores = result.scores
    if incomplete:
        scores = {
            q: {d: v for d, v in docs.items() if (q, d) not in incomplete} for q, docs in scores.items()
        }
        scores = {q: docs for q, docs in scores.items() if docs}
    info["incomplete"] = len(incomplete)
    return to_qrels(scores, float_policy=policy), info


# ---------------------------------------------------------------------------------------------
# the job


@dataclass
class _Session:
    """State of one invocation: running counters over the records it writes (no record is kept,
    so memory does not grow with the number of records)."""

    started: float
    started_at: str
    new_records: int = 0
    cache_hits: int = 0
    record_retries: int = 0  # sum of (attempts - 1) over the new records
    usage: _UsageSum = field(default_factory=lambda: _UsageSum())  # spent at the provider
    retry_causes: Counter[str] = field(default_factory=Counter)  # retried attempts by error kind
    failure_causes: Counter[str] = field(default_factory=Counter)  # calls that finally failed, by kind
    #: hash of each new record's key, to notice a key written twice in this session
    key_hashes: array[int] = field(default_factory=lambda: array("q"))
    #: ordinals of records in judgments.jsonl that a later record of the same key replaces
    superseded: set[int] = field(default_factory=set)
    #: when the session started on an empty judgments file: what `_read_back` would gather,
    #: counted as the records are written (None when it cannot stand in for reading back)
    tally: _ReadBack | None = None

    def count(self, record: Judgment) -> None:
        self.new_records += 1
        provenance = record.provenance
        if provenance.cached:
            self.cache_hits += 1
        else:
            self.usage.add(provenance.usage)
        # a pairwise record sums the attempts of its two orders: each order's first attempt is no retry
        calls = len(record.extra.get("orders") or ()) or 1
        self.record_retries += max(0, provenance.attempts - calls)


class _UsageSum:
    """`Usage` summed with plain numbers (adding pydantic models per record is slow)."""

    __slots__ = ("prompt_tokens", "completion_tokens", "calls", "cost_usd")

    def __init__(self) -> None:
        self.prompt_tokens = self.completion_tokens = self.calls = 0
        self.cost_usd = 0.0

    def add(self, usage: Usage) -> None:
        self.prompt_tokens += usage.prompt_tokens
        self.completion_tokens += usage.completion_tokens
        self.calls += usage.calls
        self.cost_usd += usage.cost_usd

    def total(self) -> Usage:
        return Usage(
            prompt_tokens=self.prompt_tokens,
            completion_tokens=self.completion_tokens,
            calls=self.calls,
            cost_usd=self.cost_usd,
        )


def failure_rate(statuses: Mapping[str, int]) -> float:
    """(unparsed + api_error + refused + truncated) / records that are not ``skipped``."""
    judged = sum(n for s, n in statuses.items() if s != "skipped")
    failed = sum(statuses.get(s, 0) for s in FAILURE_STATUSES)
    return failed / judged if judged else 0.0


def client_config(config: RunConfig) -> ClientConfig:
    """The `ClientConfig` of a job; the API key is read from ``api_key_env`` (when given) and
    exists only in memory."""
    from reljudge.llm import ClientConfig, load_prices
    from reljudge.llm.routing import resolve_model

    try:
        resolve_model(config.model)
    except ValueError as err:
        raise InputError(f"--model {config.model!r}: {err}") from None
    api_key: str | None = None
    if config.api_key_env is not None:
        api_key = os.environ.get(config.api_key_env)
        if not api_key:
            raise InputError(f"--api-key-env {config.api_key_env}: the environment variable is not set")
    kwargs: dict[str, Any] = dict(
        model=config.model,
        base_url=config.base_url,
        api_key=api_key,
        concurrency=config.concurrency,
        rpm=config.rpm,
        tpm=config.tpm,
        timeout_s=config.timeout_s,
        max_attempts=config.max_attempts,
        use_cache=config.use_cache,
        temperature=config.temperature,
        seed=config.seed,
        max_tokens=config.max_tokens,
        logprobs=config.logprobs,
        extra_params=dict(config.params),
        prices=dict(load_prices(config.prices)) if config.prices is not None else None,
    )
    if config.cache_path is not None:
        kwargs["cache_path"] = config.cache_path
    try:
        return ClientConfig(**kwargs)
    except ValueError as err:
        raise InputError(str(err)) from None


@dataclass
class PreparedJob:
    """A job whose inputs are read and checked (nothing written, nothing called yet)."""

    config: RunConfig
    resolved: ResolvedInputs
    pool: Pool
    judge: Judge
    inputs: JudgeInputs
    rundir: RunDir
    manifest: dict[str, Any]
    #: the latest record of each key already in the run directory (a compact, lazy mapping)
    existing: Mapping[tuple[str, str, str, str, str], Judgment]
    #: what reading the pooled passages found (long passages, truncation)
    passages: PassageStats = field(default_factory=lambda: PassageStats())


def prepare(config: RunConfig, *, read_existing: bool = True) -> PreparedJob:
    """Everything that can fail on bad input, before anything is written or called.

    ``read_existing=False`` leaves ``existing`` empty (a job reads the run directory once it
    holds its lock, see `run_job_async`)."""
    from reljudge.io.rundir import RunDir

    judge = build_judge(config)
    resolved = resolve_inputs(config, passages=False)
    resources = load_resources(config, judge)
    pool = build_pool(config, resolved)
    passages = read_passages(config, resolved, pool)  # only the pooled ones
    check_passages(pool, resolved, skip_missing=config.skip_missing)
    rundir = RunDir(config.output or default_output_dir(config, resolved.name))
    manifest = check_identity(rundir, job_identity(config, judge))
    existing: Mapping[tuple[str, str, str, str, str], Judgment] = (
        rundir.index(lazy_methods=_label_methods(judge)).existing if read_existing else {}
    )
    return PreparedJob(
        config=config,
        resolved=resolved,
        pool=pool,
        judge=judge,
        inputs=judge_inputs(resolved, pool, resources),
        rundir=rundir,
        manifest=manifest,
        existing=existing,
        passages=passages,
    )


def _label_methods(judge: Judge) -> tuple[str, ...]:
    return tuple(judge.label_methods) or (judge.name,)


def dry_run(job: PreparedJob) -> RunSummary:
    est = estimate_job(job.config, job.judge, job.inputs, job.pool)
    est["passages"] = job.passages.as_dict()
    if job.existing:
        est.update(existing_records=len(job.existing), output_dir=str(job.rundir.path))
    return RunSummary(
        state="dry-run",
        method=job.config.method,
        model=job.config.model,
        items=job.pool.n_items,
        estimate=est,
        max_failure_rate=job.config.max_failure_rate,
    )


async def run_job_async(
    config: RunConfig,
    client: LLMClient | None = None,
    *,
    on_record: Callable[[Judgment], None] | None = None,
) -> RunSummary:
    """Run one judging job (see the module docstring).

    With ``client``, the job uses that client (its cache, limits and usage counters, e.g. one
    shared by all cells of a sweep) and leaves it open; otherwise it opens its own from
    ``config``. ``on_record`` is called with every new record after it is saved. On
    interruption (KeyboardInterrupt, task cancellation) the records so far are kept, qrels and
    manifest are written, and the exception propagates.
    """
    session = _Session(started=time.monotonic(), started_at=utc_now())
    job = prepare(config, read_existing=config.dry_run)  # a run reads them under its lock
    if config.dry_run:
        return dry_run(job)
    long_passages = job.passages.warning()
    if long_passages is not None:
        logger.warning("%s", long_passages)
    own_config = client_config(config) if client is None else None

    created = not job.rundir.path.exists()
    with writing(job.rundir.path):
        lock = job.rundir.lock()  # one writer per run directory: a second job is refused here
    try:
        return await _run_locked(job, session, client, own_config, created, on_record)
    finally:
        lock.release()


async def _run_locked(
    job: PreparedJob,
    session: _Session,
    client: LLMClient | None,
    own_config: ClientConfig | None,
    created: bool,
    on_record: Callable[[Judgment], None] | None,
) -> RunSummary:
    """`run_job_async` once the run directory's lock is held."""
    from reljudge import __version__
    from reljudge.judges.context import JudgeContext
    from reljudge.progress import JobProgress

    config = job.config
    # read the directory again under the lock: another process may have finished meanwhile
    job.manifest = check_identity(job.rundir, job_identity(config, job.judge))
    # a last record without its newline is kept (and gets it), a torn one is cut: before the
    # index, so that the index and the file the writer appends to agree
    with writing(job.rundir.judgments_path):
        job.rundir.repair_tail()
    # the one streamed pass at start-up: the keys already judged (the label records stay on
    # disk, read back on lookup), which records later ones replace, and the manifest's counts
    index = job.rundir.index(
        lazy_methods=_label_methods(job.judge),
        exclude_statuses=RETRY_FAILED_STATUSES if config.retry_failed else (),
        stats=True,
    )
    existing = job.existing = index.existing
    start_latest = index.latest  # key -> ordinal of its latest record in judgments.jsonl
    session.superseded = index.superseded
    if index.records == 0:
        session.tally = _ReadBack.tally()
    try:
        with writing(job.rundir.manifest_path):
            _write_manifest(job, session, "running", {}, stats=index.stats)
            writer = job.rundir.writer()
    except BaseException:
        if created:
            shutil.rmtree(job.rundir.path, ignore_errors=True)
        raise

    # the bar's total costs an estimate (every prompt rendered): only when a bar is shown
    shown = config.progress if config.progress is not None else sys.stderr.isatty()
    progress = JobProgress(
        total=_expected_records(job.judge, job.inputs, existing) if shown else None,
        desc=f"{config.method} {config.model}",
        enabled=config.progress,
    )

    def on_event(kind: str, info: dict[str, Any]) -> None:
        progress.on_event(kind, info)
        cause = str(info.get("kind") or "other")
        if kind == "retry":
            session.retry_causes[cause] += 1
        elif kind == "failure":
            session.failure_causes[cause] += 1

    def emit(record: Judgment) -> None:
        tally, session.tally = session.tally, None  # restored once the record is counted in it
        with writing(writer.path):  # a full disk ends the job as an input error, records kept
            writer.write(record)
        if tally is not None:
            tally.count_new(record)
            session.tally = tally
        key = record.key
        replaced = start_latest.pop(key, None)
        if replaced is not None:  # this record replaces the latest one of an earlier session
            session.superseded.add(replaced)
        session.key_hashes.append(hash(key))
        session.count(record)
        progress.on_record(record)
        if on_record is not None:
            on_record(record)

    state: JobState = "interrupted"
    abort: ProviderAbort | None = None
    output_failed = False  # the run directory could not be written (a full disk, ...)
    own: LLMClient | None = None
    client_stats: dict[str, Any] = {}
    try:
        if client is None:
            from reljudge.llm import LLMClient

            assert own_config is not None
            async with LLMClient(own_config, on_event=on_event) as own:
                await job.judge.run(job.inputs, JudgeContext(own, emit, existing, tool_version=__version__))
        else:
            await job.judge.run(job.inputs, JudgeContext(client, emit, existing, tool_version=__version__))
        state = "finished"
    except Exception as err:
        abort = find_provider_abort(err)
        if abort is None:
            state = "failed"
            problem = _first_input_error(err)
            output_failed = isinstance(problem, OutputError)
            if problem is not None and problem is not err:  # raised inside the judge's task group
                raise problem from None
            raise
        state = "aborted"  # the provider cannot serve the job: stop, keep what was done
    finally:
        progress.close()
        unwritten = _close_writer(writer)
        if own is not None:
            client_stats = own.stats.as_dict()
        if state == "failed" and created and not session.new_records:
            shutil.rmtree(job.rundir.path, ignore_errors=True)  # nothing done: leave nothing behind
        elif state == "failed" and (unwritten is not None or output_failed):
            # the disk is full (or read-only): writing qrels and manifest would fail the same way;
            # the error that propagates says what happened and that the records so far are kept
            with contextlib.suppress(OSError):
                _finish(job, session, progress, state, client_stats, abort)
        else:
            with writing(job.rundir.path):
                if unwritten is not None:
                    raise unwritten
                summary = _finish(job, session, progress, state, client_stats, abort)
            if state in ("interrupted", "failed"):  # the exception propagates: say what was kept
                print(summary.render(), file=sys.stderr)
    return summary


class OutputError(InputError):
    """The run directory cannot be written (a full disk, a read-only file system, a path under
    a file): ``error: PATH: cannot write: ...``, exit code 2; the records written so far stay."""


@contextlib.contextmanager
def writing(path: Path) -> Iterator[None]:
    """Turn an `OSError` while writing the run directory into an `OutputError` naming the file."""
    try:
        yield
    except OSError as err:
        where = err.filename if isinstance(err.filename, str) else path
        what = err.strerror or str(err)
        raise OutputError(
            f"cannot write: {what}; the records written so far are kept: make room (or give a "
            "writable --output) and re-run the same command to resume",
            where,
        ) from None


def _close_writer(writer: Any) -> OSError | None:
    try:
        writer.close()
    except OSError as err:
        return err
    return None


def _first_input_error(err: BaseException) -> InputError | None:
    """``err`` when it is an `InputError`, or the first one inside its exception groups."""
    if isinstance(err, InputError):
        return err
    if isinstance(err, BaseExceptionGroup):
        for inner in err.exceptions:
            found = _first_input_error(inner)
            if found is not None:
                return found
    return None


def find_provider_abort(err: BaseException) -> ProviderAbort | None:
    """The `ProviderAbort` that ended a job: ``err`` itself or one inside the exception groups
    of the judge's task groups; None when the job ended for another reason."""
    from reljudge.llm.types import ProviderAbort

    if isinstance(err, ProviderAbort):
        return err
    if isinstance(err, BaseExceptionGroup):
        for inner in err.exceptions:
            found = find_provider_abort(inner)
            if found is not None:
                return found
    return None


def _expected_records(judge: Judge, inputs: JudgeInputs, existing: Mapping[Any, Judgment]) -> int | None:
    """Bar total: the judge's estimated label records less those already done (a guide)."""
    try:
        calls = judge.estimate(inputs).label_records
    except Exception:  # an estimate is a nicety for the bar, never a reason to fail
        return None
    labels = judge.label_methods or (judge.name,)
    done = sum(1 for key in existing if key[0] in labels)
    return max(calls - done, 0) or None


def _write_manifest(
    job: PreparedJob,
    session: _Session,
    state: str,
    results: Mapping[str, Any],
    stats: tuple[RecordStats, RecordStats] | None = None,
) -> None:
    config = job.config
    earlier = job.manifest.get("extra") or {}
    extra: dict[str, Any] = {
        "state": state,
        "identity": job_identity(config, job.judge),
        "dataset": {"name": job.resolved.name, "sources": job.resolved.sources},
        "pool": {
            "spec": config.pool,
            "description": job.pool.description,
            "topics": len(job.pool.docs),
            "items": job.pool.n_items,
            "passages": job.passages.as_dict(),
        },
        "wall_time_s": earlier.get("wall_time_s", 0.0),
        **results,
    }
    settings = config.model_dump(mode="json", exclude={"command", "progress", "dry_run"})
    job.rundir.write_manifest(
        command=config.command or [],
        config=settings,
        started_at=session.started_at,
        finished_at=None if state == "running" else utc_now(),
        extra=extra,
        stats=stats,
    )


def _finish(
    job: PreparedJob,
    session: _Session,
    progress: Any,
    state: JobState,
    client_stats: Mapping[str, Any],
    abort: ProviderAbort | None = None,
) -> RunSummary:
    """Derive qrels and write the manifest from what the run directory holds now (one streamed
    pass over judgments.jsonl, see `_read_back`)."""
    from reljudge.io.trec import write_qrels

    config = job.config
    back = _read_back(job, session)
    statuses = back.latest.statuses
    usage = session.usage.total()
    rate = failure_rate(statuses)
    qrels_info: dict[str, Any] = {"file": job.rundir.qrels_path.name, "float_policy": config.float_policy}
    qrels_pairs = incomplete = 0
    unwritable: OSError | None = None
    try:
        qrels, exclusions = derive_qrels(
            job.judge, back.records, config.float_policy, resources=job.inputs.resources
        )  # type: ignore[arg-type]
        del back.records[:]  # the label views are not needed any more
        write_qrels(qrels, job.rundir.qrels_path)
        qrels_pairs = sum(len(d) for d in qrels.values())
        incomplete = exclusions.pop("incomplete", 0)
        qrels_info.update(pairs=qrels_pairs, incomplete=incomplete, exclusions=exclusions)
    except InputError as err:  # e.g. contradicting labels: keep the records, report the problem
        qrels_info["error"] = str(err)
    except OSError as err:  # e.g. a full disk: the manifest says so (if it can be written)
        qrels_info["error"] = f"cannot write: {err.strerror or err}"
        unwritable = err
    wall = round(time.monotonic() - session.started, 3)
    summary = RunSummary(
        state=state,
        method=config.method,
        model=config.model,
        output_dir=job.rundir.path,
        items=job.pool.n_items,
        records=back.latest.judgments,
        new_records=session.new_records,
        statuses={s: statuses[s] for s in STATUSES if statuses[s]},
        fallbacks=dict(sorted(back.fallbacks.items())),
        usage=usage,
        total_usage=back.spent.total(),
        price_known=_price_known(config),
        cache_hits=session.cache_hits,
        retries=max(session.record_retries, progress.retries),
        retry_causes=dict(sorted(session.retry_causes.items())),
        failure_causes=dict(sorted(session.failure_causes.items())),
        wall_time_s=wall,
        failure_rate=rate,
        max_failure_rate=config.max_failure_rate,
        retryable_failures=sum(statuses[s] for s in RETRY_FAILED_STATUSES),
        api_error_kinds=dict(sorted(back.latest.api_error_kinds.items())),
        abort=_abort_info(abort) if abort is not None else None,
        qrels_pairs=qrels_pairs,
        incomplete=incomplete,
        exit_code=EXIT_OK if state == "finished" and rate <= config.max_failure_rate else EXIT_FAILURE,
    )
    earlier_wall = (job.manifest.get("extra") or {}).get("wall_time_s", 0.0)
    results = {
        "parse_fallbacks": summary.fallbacks,
        "failure_rate": round(rate, 6),
        "max_failure_rate": config.max_failure_rate,
        "tokens": {
            "prompt": summary.total_usage.prompt_tokens,
            "completion": summary.total_usage.completion_tokens,
        },
        "cost_usd": round(summary.total_usage.cost_usd, 6),
        "price_known": summary.price_known,
        "wall_time_s": round(earlier_wall + wall, 3),
        "qrels": qrels_info,
        "api_error_kinds": summary.api_error_kinds,
        **({"abort": summary.abort} if summary.abort is not None else {}),
        "last_session": {
            "state": state,
            "new_records": summary.new_records,
            "usage": usage.model_dump(),
            "cache_hits": summary.cache_hits,
            "retries": summary.retries,
            "retry_causes": summary.retry_causes,
            "failure_causes": summary.failure_causes,
            "wall_time_s": wall,
            "client": dict(client_stats),
        },
    }
    _write_manifest(job, session, state, results, stats=(back.latest, back.every))
    if unwritable is not None:
        with writing(job.rundir.qrels_path):
            raise unwritable
    return summary


def _abort_info(abort: ProviderAbort) -> dict[str, Any]:
    return {
        "kind": abort.kind,
        "message": abort.message,
        "status_code": abort.status_code,
        "hint": abort.hint,
    }


@dataclass
class _ReadBack:
    """What `_finish` needs from judgments.jsonl, gathered in one streamed pass."""

    latest: RecordStats  # the latest record of each key
    every: RecordStats  # every record
    spent: _UsageSum  # usage of every record not answered from the cache
    fallbacks: Counter[str]  # labels of latest ok records read by a fallback parser
    #: latest records for `derive_qrels`, in the order their keys first appear: label records
    #: as `LabelView`s (what aggregation reads), the (few) stage records in full
    records: list[Any]

    @classmethod
    def tally(cls) -> _ReadBack:
        """The counts of records written to an empty file, each under its own key ("latest" and
        "every" are then the same counts, one object), kept as they are written. ``records``
        stays empty: holding a view of every record for the whole run would make memory grow
        with the run; they are read back at the end (`_read_back`)."""
        from reljudge.io.rundir import RecordStats

        stats = RecordStats()
        return cls(stats, stats, _UsageSum(), Counter(), [])

    def count_new(self, record: Judgment) -> None:
        """Count a new record for a `tally` (see there)."""
        self.every.add(record)  # = self.latest
        provenance = record.provenance
        if not provenance.cached:
            self.spent.add(provenance.usage)
        if record.status == "ok" and record.parse and record.parse.startswith("fallback"):
            self.fallbacks[record.parse] += 1


def _read_back(job: PreparedJob, session: _Session) -> _ReadBack:
    """One streamed pass over judgments.jsonl. Which records are replaced by a later one of the
    same key is known without holding the keys: from the start-of-session index plus the keys
    this session wrote. Only when this session wrote one key twice (no built-in judge does) is
    the file indexed again to find out exactly."""
    from reljudge.io.judgments import LabelView, scan_judgments
    from reljudge.io.rundir import RecordStats

    superseded = session.superseded
    hashes = sorted(session.key_hashes)
    twice = any(a == b for a, b in zip(hashes, hashes[1:], strict=False))
    del hashes
    labels = frozenset(_label_methods(job.judge))
    if session.tally is not None and not twice:
        # the file was empty when the session started, no key was written twice and every
        # record was counted as written: only the label views are left to read
        from reljudge.io.judgments import iter_label_views

        session.tally.records = list(iter_label_views(job.rundir.judgments_path, labels))
        return session.tally
    if twice:
        superseded = job.rundir.index().superseded
    back = _ReadBack(RecordStats(), RecordStats(), _UsageSum(), Counter(), [])
    path = job.rundir.judgments_path
    if not path.exists():
        return back
    strings: dict[str, str] = {}
    slots: dict[tuple[str, ...], int] = {}  # replaced keys -> their place in ``records``
    records = back.records
    for ordinal, (_, record) in enumerate(scan_judgments(path)):
        back.every.add(record)
        provenance = record.provenance
        if not provenance.cached:
            back.spent.add(provenance.usage)
        if ordinal in superseded:
            slots.setdefault(record.key, len(records))
            if len(records) == slots[record.key]:
                records.append(None)
            continue
        back.latest.add(record)
        if record.status == "ok" and record.parse and record.parse.startswith("fallback"):
            back.fallbacks[record.parse] += 1
        item = LabelView.of(record, strings) if record.method in labels else record
        place = slots.pop(record.key, None) if slots else None
        if place is None:
            records.append(item)
        else:
            records[place] = item
    back.records = [r for r in records if r is not None]
    return back


def _price_known(config: RunConfig) -> bool:
    from reljudge.llm.pricing import find_price, load_prices, merge_prices
    from reljudge.llm.routing import resolve_model

    backend, model = resolve_model(config.model)
    if backend == "ollama":
        return True
    table = load_prices(config.prices) if config.prices is not None else merge_prices(None)
    return find_price(model, table) is not None


def run_job(config: RunConfig, client: LLMClient | None = None) -> RunSummary:
    """Synchronous `run_job_async` (runs its own event loop)."""
    return asyncio.run(run_job_async(config, client))


__all__ = [
    "RunConfig",
    "RunSummary",
    "build_pool",
    "failure_rate",
    "parse_options",
    "parse_pool_spec",
    "read_pairs",
    "run_job",
    "run_job_async",
]
