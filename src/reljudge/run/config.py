"""`RunConfig`: everything one judging job needs, and the one declaration of the run options.

Each field that a command-line option sets carries its `Flag` (``Annotated[type, Flag(...)]``):
the option's name, help text and the commands that take it. ``judge run`` and ``judge probe``
generate their options from these (`reljudge.cli.options`), so adding a run option means adding
one field here.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from reljudge.run.options import (
    BATCH_FLAGS,
    GENERATE_HELP,
    NOT_BATCH_FILES,
    NOT_GENERATE,
    Flag,
    FloatPolicy,
    answers_help,
    judge_option_list,
    method_help,
    parse_concurrency,
    parse_concurrency_flag,
    parse_float_policy,
    parse_pool_spec,
    pointwise_help,
    request_field_list,
    scores_help,
)

#: how a job ended: all items done, Ctrl-C or a signal, an error, the provider could not serve it,
#: or the next request would have gone over ``--max-cost``
JobState = Literal["finished", "interrupted", "failed", "aborted", "capped"]
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
    "scores",
    "samples",
    "constrain",
    "params",
    "question_bank",
    "base_url",
    "max_passage_chars",
)
#: options that name a resource file a judge can take (`reljudge.judges.base.Resource`)
RESOURCE_FIELDS: tuple[str, ...] = ("question_bank", "answers", "grids", "images")
#: passages longer than this many characters are reported (a warning, and in ``--dry-run``):
#: MS MARCO passages are under 1,000; a 20,000-character one is usually an extraction accident
DEFAULT_WARN_PASSAGE_CHARS = 20_000

RUN = ("run",)  # options of `judge run` only


def _no_cache(no_cache: bool) -> bool:
    return not no_cache


def _no_progress(no_progress: bool) -> bool | None:
    return False if no_progress else None


class RunConfig(BaseModel):
    """Everything one judging job needs. Mirrors the options of ``judge run``."""

    model_config = ConfigDict(extra="forbid")

    method: Annotated[
        str,
        Flag(
            "--method",
            method_help,
            variants={"probe": {"help": pointwise_help}},
        ),
    ]
    model: Annotated[
        str,
        Flag(
            "--model",
            "Model, e.g. gpt-4o, openai/<name> (any OpenAI-compatible server), ollama/llama3.2, "
            "litellm/<provider>/<name>.",
            variants={"probe": {"help": "Model, as for 'judge run'."}},
        ),
    ]
    base_url: Annotated[
        str | None, Flag("--base-url", "Server URL (vLLM, llama.cpp, Ollama on another host, a proxy).")
    ] = None
    #: the NAME of the variable holding the key, never the key
    api_key_env: Annotated[
        str | None,
        Flag(
            "--api-key-env",
            "Name of the environment variable holding the API key (default: the provider's usual "
            "one, e.g. OPENAI_API_KEY). The key is never written anywhere.",
        ),
    ] = None
    dataset: Annotated[
        str | None,
        Flag(
            "--dataset",
            "A known dataset (dl19-sample, trec-dl19, ...; see 'judge datasets'), a dataset directory, or "
            "irds:<id> (an ir_datasets collection, read offline from its cache).",
        ),
    ] = None
    topics: Annotated[
        Path | None, Flag("--topics", "Topics file 'qid<TAB>query' (overrides the dataset's).")
    ] = None
    qrels: Annotated[
        Path | None, Flag("--qrels", "Qrels file 'qid iter docid grade' (overrides the dataset's).")
    ] = None
    corpus: Annotated[
        Path | None, Flag("--corpus", "Passages: 'docid<TAB>text' TSV or JSONL (overrides the dataset's).")
    ] = None
    pool: Annotated[
        str,
        Flag(
            "--pool",
            "What to judge: 'qrels' (the judged pairs), 'run:FILE:K' (a run's top K) or "
            "'unjudged:FILE:K' (the top K not in the qrels).",
            variants={"probe": {"help": "What to sample from: 'qrels', 'run:FILE:K' or 'unjudged:FILE:K'."}},
        ),
    ] = "qrels"  # qrels | run:FILE:K | unjudged:FILE:K
    pairs: Annotated[
        Path | None,
        Flag(
            "--pairs",
            "Pairwise: the pairs to judge, 'qid docidA docidB' per line or the 'qid cat1 cat2 docid1 docid2' TSV.",
            commands=RUN,
        ),
    ] = None
    prompt: Annotated[
        str | None,
        Flag(
            "--prompt",
            "Prompt id (see 'judge prompts list') or a template file, e.g. umbrela/bing-fewshot for "
            "few-shot UMBRELA.",
        ),
    ] = None
    options: Annotated[
        dict[str, Any],
        Flag(
            "--option",
            "Judge option key=value (repeatable), e.g. -o pairs=sampler -o p=5 for pairwise; a wrong "
            "name lists the judge's options.",
            short="-o",
            type=list[str] | None,
            default=None,
            parse=judge_option_list,
        ),
    ] = Field(default_factory=dict)
    output: Annotated[
        Path | None,
        Flag(
            "--out",
            "Run directory (default runs/<dataset>-<method>-<model>/). Re-running the same command resumes it.",
            aliases=("--output",),
            commands=RUN,
        ),
    ] = None
    runs_root: Path = Path("runs")
    concurrency: Annotated[
        int | str,
        Flag(
            "--concurrency",
            "Most requests in flight: N is the ceiling of an adaptive level (grows while answers "
            "are healthy, backs off on 429s and rising latency); fixed:N keeps exactly N.",
            type=str,
            default="8",
            min=None,
            max=None,
            parse=parse_concurrency_flag,
        ),
    ] = 8
    rpm: Annotated[float | None, Flag("--rpm", "Cap on requests per minute (> 0).")] = Field(None, gt=0)
    tpm: Annotated[float | None, Flag("--tpm", "Cap on tokens per minute (> 0).")] = Field(None, gt=0)
    timeout_s: Annotated[float, Flag("--timeout", "Seconds per request attempt (> 0).")] = Field(60.0, gt=0)
    max_attempts: Annotated[
        int, Flag("--max-attempts", "Attempts per call (retries on 429, 5xx, timeouts).")
    ] = Field(6, ge=1)
    limit: Annotated[
        int | None,
        Flag(
            "--limit",
            "Judge only the first N items of the pool (topics in file order, documents in qrels order "
            "or by rank; a pair counts as one item).",
            commands=RUN,
        ),
    ] = Field(None, ge=1)
    topics_limit: Annotated[
        int | None, Flag("--topics-limit", "Judge only the first N topics of the pool.", commands=RUN)
    ] = Field(None, ge=1)
    dry_run: Annotated[
        bool,
        Flag(
            "--dry-run",
            "Print the number of calls, tokens and cost; call nothing, write nothing.",
            commands=RUN,
        ),
    ] = False
    retry_failed: Annotated[
        bool,
        Flag(
            "--retry-failed",
            "Judge again the records that failed: api_error, truncated and unparsed (a plain resume keeps them).",
            commands=RUN,
        ),
    ] = False
    #: ``--batch`` and its options: through the provider's Batch API (`reljudge.run.batch`)
    batch: Annotated[bool, BATCH_FLAGS["batch"]] = False
    batch_poll: Annotated[float, BATCH_FLAGS["poll"]] = Field(30.0, ge=0.01, le=600)
    batch_max_wait: Annotated[float | None, BATCH_FLAGS["wait"]] = Field(None, gt=0, allow_inf_nan=False)
    batch_limits: Annotated[dict[str, int], BATCH_FLAGS["limit"]] = Field(default_factory=dict)
    batch_resend_lost: Annotated[bool, BATCH_FLAGS["resend"]] = False
    skip_missing: Annotated[
        bool,
        Flag(
            "--skip-missing", "Record passages without text as 'skipped' instead of stopping.", commands=RUN
        ),
    ] = False
    use_cache: Annotated[
        bool,
        Flag(
            "--no-cache",
            "Neither read nor write the response cache.",
            type=bool,
            default=False,
            parse=_no_cache,
        ),
    ] = True
    cache_path: Annotated[
        Path | None,
        Flag(
            "--cache", "Response cache file (default $RELJUDGE_CACHE or ~/.cache/reljudge/llm-cache.sqlite)."
        ),
    ] = None
    cache_only: Annotated[
        bool,
        Flag(
            "--cache-only",
            "Answer from the response cache only (an offline replay): no request is sent, a request the "
            "cache cannot answer stops the job naming it; the run directory may then name another --base-url.",
        ),
    ] = False
    max_failure_rate: Annotated[
        float,
        Flag(
            "--max-failure-rate",
            "Exit with code 1 when the share of failed records (unparsed, api_error, refused, truncated) "
            "is above this.",
            commands=RUN,
        ),
    ] = Field(0.05, ge=0, le=1)
    temperature: Annotated[
        float | None, Flag("--temperature", "Sampling temperature.", type=float, min=0.0)
    ] = 0.0
    seed: Annotated[
        int | None,
        Flag(
            "--seed",
            "Sampling seed (where the provider supports it).",
            variants={"probe": {"name": "--model-seed", "help": "Sampling seed sent to the model."}},
        ),
    ] = 42
    max_tokens: Annotated[int | None, Flag("--max-tokens", "Cap on answer tokens.")] = Field(None, ge=1)
    logprobs: Annotated[
        bool,
        Flag(
            "--logprobs",
            "Ask for token log-probabilities (kept in each record's extra.logprobs).",
            commands=RUN,
        ),
    ] = False
    scores: Annotated[
        str,
        Flag(
            "--scores",
            scores_help,
            commands=RUN,
        ),
    ] = "labels"
    samples: Annotated[
        int,
        Flag(
            "--samples",
            "Ask each pointwise item N times (needs --temperature > 0; sample i > 0 is sent with seed + i and "
            "cached apart): the record's label is the majority (ties to the lowest label), with the agreement "
            "and every sample in extra.",
            commands=RUN,
        ),
    ] = Field(1, ge=1, le=100)
    constrain: Annotated[
        str,
        Flag(
            "--constrain",
            "off (default), auto, grammar, guided-choice, json-schema or ollama-format: constrain the answer to "
            "the judge's valid labels with the backend's own mechanism (auto: Ollama format, OpenAI structured "
            "outputs, else llama.cpp grammar); the prompt text is unchanged, records note extra.constrained.",
            commands=RUN,
        ),
    ] = "off"
    #: a question file for judges that take one, or "dataset"
    question_bank: Annotated[
        str | None,
        Flag(
            "--question-bank",
            "EXAM: grade these questions instead of generating them: a '<qid>_<n><TAB>question' file, "
            "or 'dataset' for the dataset's own bank.",
            commands=RUN,
        ),
    ] = None
    answers: Annotated[  # generated answers a judge evaluates instead of passages (nuggets)
        list[Path] | None,
        Flag(
            "--answers",
            answers_help,
            type=list[Path] | None, default=None, parse=lambda given: list(given or ()) or None, commands=RUN,
        ),
    ] = None  # fmt: skip
    #: image grids and the images table, for the vision-language judges (`reljudge.judges.vision`)
    grids: Annotated[
        str | None,
        Flag(
            "--grids",
            "image-relevance, grid-pairwise: the grids file (prompt<TAB>system<TAB>position<TAB>image); "
            "the prompts are the topics (--topics).",
            commands=RUN,
        ),
    ] = None
    images: Annotated[
        str | None,
        Flag(
            "--images",
            "image-relevance, grid-pairwise: the images table (image<TAB>path-or-url, paths relative to "
            "the table's directory).",
            commands=RUN,
        ),
    ] = None
    #: extra request fields (--param)
    params: Annotated[
        dict[str, Any],
        Flag(
            "--param",
            "Extra request field key=value sent with every call (repeatable; YAML/JSON values), e.g. "
            "--param 'grammar=root ::= [0-3]' for llama.cpp or --param 'response_format={type: json_object}'.",
            type=list[str] | None,
            default=None,
            parse=request_field_list,
        ),
    ] = Field(default_factory=dict)
    prices: Annotated[
        Path | None,
        Flag(
            "--prices",
            "YAML/JSON prices {model: {input: USD/1M, output: USD/1M}} (also cached_input, batch_input, "
            "batch_output) over litellm's model cost map, field by field.",
        ),
    ] = None
    #: models whose answers are kept though they are not the one asked for
    accept_served_model: Annotated[
        tuple[str, ...],
        Flag(
            "--accept-served-model",
            "Keep answers that name this model though another was asked for (repeatable); without it such "
            "answers are api_errors (a dated snapshot of the model asked for is the same model).",
            type=list[str] | None,
            default=None,
            parse=lambda given: tuple(given or ()),
        ),
    ] = ()
    #: a hard cap on the USD the run directory's calls cost (all sessions)
    max_cost: Annotated[
        float | None,
        Flag(
            "--max-cost",
            "Stop sending requests before the run's cost (in USD, all sessions of the run directory) would go "
            "over this: everything is saved, the exit code is 3, and the same command with a higher cap resumes. "
            "Needs a known price (see --prices).",
            commands=RUN,
        ),
    ] = Field(None, ge=0, allow_inf_nan=False)
    #: cut longer passages to this many characters
    max_passage_chars: Annotated[
        int | None,
        Flag(
            "--max-passage-chars",
            "Cut passages longer than N characters to N before judging (part of the job's settings: a "
            "resume needs the same N).",
            commands=RUN,
        ),
    ] = Field(None, ge=1)
    #: warn about longer ones (0: never)
    warn_passage_chars: Annotated[
        int,
        Flag(
            "--warn-passage-chars",
            "Warn about pooled passages longer than N characters (0: never); --dry-run counts them.",
            commands=RUN,
        ),
    ] = Field(DEFAULT_WARN_PASSAGE_CHARS, ge=0)
    float_policy: Annotated[
        FloatPolicy,
        Flag(
            "--float",
            "Non-integer labels in qrels.txt: round (half up), scale (x100, round) or keep.",
            type=str,
            parse=parse_float_policy,
            commands=RUN,
        ),
    ] = "round"
    #: None: a bar when stderr is a terminal
    progress: Annotated[
        bool | None,
        Flag(
            "--no-progress",
            "No progress bar (it is shown only on a terminal anyway).",
            type=bool,
            default=False,
            parse=_no_progress,
            commands=RUN,
        ),
    ] = None
    command: list[str] | None = None  # the command line, for the manifest (secrets are masked)

    @field_validator("pool")
    @classmethod
    def _check_pool(cls, value: str) -> str:
        parse_pool_spec(value)
        return value

    def identity(self) -> dict[str, Any]:
        """The settings that make two runs' records comparable (checked on resume). The base
        URL is normalised and without credentials (``""`` for the provider's default); an offline
        replay (``cache_only``) leaves it out, since its answers come from the cache, which keys
        them without the URL (`reljudge.llm.cache`)."""
        from reljudge.llm.backends.base import normalise_base_url

        identity = {name: _jsonable(getattr(self, name)) for name in IDENTITY_FIELDS}
        identity["base_url"] = normalise_base_url(self.base_url)
        if self.cache_only:  # a replay from the cache may name any server, or none
            del identity["base_url"]
        identity["answers"] = bool(self.answers)  # not which: a run extends to more systems
        return identity

    @model_validator(mode="after")
    def _check_samples(self) -> RunConfig:
        if self.samples > 1 and not self.temperature:
            raise ValueError("--samples needs a --temperature above 0 (at 0 every sample is the same answer)")
        return self

    @field_validator("concurrency", mode="before")
    @classmethod
    def _check_concurrency(cls, value: Any) -> int | str:
        return parse_concurrency(value)

    @field_validator("constrain")
    @classmethod
    def _check_constrain(cls, value: str) -> str:
        allowed = ("off", "auto", "grammar", "guided-choice", "json-schema", "ollama-format")
        if value not in allowed:
            raise ValueError(f"--constrain must be one of {', '.join(allowed)}, got {value!r}")
        return value

    @field_validator("scores")
    @classmethod
    def _check_scores(cls, value: str) -> str:
        if value not in ("labels", "expected"):
            raise ValueError(f"--scores must be labels or expected, got {value!r}")
        return value

    @classmethod
    def flags(cls, command: str = "run") -> dict[str, Flag]:
        """Field name -> the `Flag` that sets it in ``command`` (fields in declaration order).
        ``generate`` takes the options of ``run`` but `NOT_GENERATE`; ``batch-files`` (``judge
        batch export|import``) those of ``run`` but `NOT_BATCH_FILES`."""
        if command == "generate":
            from dataclasses import replace

            return {
                name: replace(flag, help=GENERATE_HELP[name]) if name in GENERATE_HELP else flag
                for name, flag in cls.flags("run").items()
                if name not in NOT_GENERATE
            }
        if command == "batch-files":
            return {n: f for n, f in cls.flags("run").items() if n not in NOT_BATCH_FILES}
        found: dict[str, Flag] = {}
        for name, info in cls.model_fields.items():
            for meta in info.metadata:
                if isinstance(meta, Flag):
                    flag = meta.for_command(command)
                    if flag is not None:
                        found[name] = flag
        return found


def _jsonable(value: Any) -> Any:
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in sorted(value.items())}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return value


__all__ = [
    "DEFAULT_WARN_PASSAGE_CHARS",
    "IDENTITY_FIELDS",
    "RESOURCE_FIELDS",
    "Flag",
    "JobState",
    "RunConfig",
]
