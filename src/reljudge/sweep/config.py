"""The sweep configuration: one YAML file, validated with pydantic; errors name ``file:line``.

A sweep crosses datasets × models × tasks × prompts. Shape (see ``examples/sweep.yaml``)::

    name: prompt-sensitivity
    output: out/sweep                 # relative to this file
    datasets:
      - dl19-sample                   # a bundled dataset, or:
      - {name: dl20, topics: ..., qrels: ..., corpus: ..., pairs: ..., runs: "runs/*.gz"}
    models:
      - {name: small, model: ollama/llama3.2, params: {temperature: 0, seed: 42}}
    methods: [binary, graded, pairwise]
    prompts:
      - builtin: umbrela              # a prompt shipped with reljudge
      - file: prompts.json            # many prompt sets ({"0": {"binary": {...}, ...}, ...})
        exclude: ["4", "6"]
      - id: mine                      # inline
        binary: {system: "...", user: "Query: {query}\\nPassage: {document}\\nRelevant (1/0)?"}
    judges:                           # whole judging methods (built in or plugins) as cells too
      - {method: umbrela}
      - {method: exam, name: exam-5q, options: {n_questions: 5}, scale: binary}
    sampling: {per_grade: 10, topics: 5, seed: 42, pairs_per_type: 10}
    limits: {concurrency: 8, rpm: 500, cells: 4}
    analysis: {threshold: 2}

A judge entry runs a registered judge (``judge run --method NAME``, plugins included) with its
own prompts on the same sampled items; its document scores (the ``qrels.txt`` of its cell) are
compared with the human grades as the ``scale`` says (binary or graded, default graded).

Placeholders: binary and graded prompts need ``{query}`` and ``{document}``; pairwise prompts
need ``{query}``, ``{documentA}`` and ``{documentB}`` (in the system or the user message). Any
other ``{name}`` is an error too (it would reach the model unfilled).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from reljudge.errors import InputError, input_error_from_validation, shown
from reljudge.sweep.yamlines import LineMap, load_file_with_lines

TASKS: tuple[Task, ...] = ("binary", "graded", "pairwise")
PLACEHOLDERS: dict[str, tuple[str, ...]] = {
    "binary": ("query", "document"),
    "graded": ("query", "document"),
    "pairwise": ("query", "documentA", "documentB"),
}
_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]*$")

Task = Literal["binary", "graded", "pairwise"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Messages(_Strict):
    """One prompt for one task: a system and a user message template."""

    system: str = ""
    user: str


class DatasetSpec(_Strict):
    """A dataset: a known name (``dl19-sample``, ``trec-dl20``, ...), a dataset directory
    (``path``), or explicit files; explicit files override those of the name or directory."""

    name: str
    path: str | None = None  # a dataset directory (topics.tsv, qrels.txt, passages.tsv, runs/)
    topics: str | None = None
    qrels: str | None = None
    corpus: str | None = None
    pairs: str | None = None  # pairwise sample: ``qid cat1 cat2 docid1 docid2`` or ``qid docA docB``
    runs: str | None = None  # a directory of TREC runs, for ranking stability
    threshold: float | None = None  # overrides analysis.threshold (e.g. 3 for ANTIQUE 1-4 grades)
    unacceptable: float | None = None  # grade at or below which a document is "low" (0; ANTIQUE 1)

    @model_validator(mode="before")
    @classmethod
    def _from_name(cls, value: Any) -> Any:
        return {"name": value} if isinstance(value, str) else value

    @field_validator("name")
    @classmethod
    def _safe_name(cls, value: str) -> str:
        if not _ID.match(value):
            raise ValueError(f"dataset name {shown(value)}: use letters, digits, '.', '_', '+', '-'")
        return value


class ModelSpec(_Strict):
    """One model: ``model`` is a reljudge model string (``ollama/llama3.2``, ``gpt-4o``, ...)."""

    name: str | None = None  # label in tables and directory names (default: the model string)
    model: str
    backend: str | None = None  # a backend name (`reljudge.llm.backends.BACKENDS`)
    base_url: str | None = None
    api_key_env: str | None = None  # the environment variable holding the key (never the key)
    params: dict[str, Any] = Field(default_factory=dict)  # temperature, seed, max_tokens, ...
    price: dict[str, float] | None = None  # USD per 1M tokens: {input: x, output: y}

    @model_validator(mode="before")
    @classmethod
    def _no_inline_key(cls, value: Any) -> Any:
        if isinstance(value, dict) and "api_key" in value:
            raise ValueError("do not put API keys in the sweep file; name the variable with api_key_env")
        return value

    @field_validator("backend")
    @classmethod
    def _known_backend(cls, value: str | None) -> str | None:
        from reljudge.llm.backends import BACKENDS

        if value is not None and value not in BACKENDS:
            raise ValueError(f"unknown backend {shown(value)}; known: {', '.join(BACKENDS)}")
        return value

    @field_validator("params")
    @classmethod
    def _known_params(cls, value: dict[str, Any]) -> dict[str, Any]:
        known = {"temperature", "seed", "max_tokens", "logprobs", "top_logprobs", "extra"}
        unknown = sorted(set(value) - known)
        if unknown:
            raise ValueError(
                f"unknown model parameter(s) {unknown}; known: {sorted(known)} (others go under extra)"
            )
        from reljudge.io.redact import credential_field

        found = credential_field(value)
        if found:
            raise ValueError(
                f"{found}: do not put credentials in the sweep file; name the variable with api_key_env"
            )
        return value

    @property
    def label(self) -> str:
        return self.name or self.model

    @property
    def model_string(self) -> str:
        return f"{self.backend}/{self.model}" if self.backend else self.model


class PromptSource(_Strict):
    """Exactly one of: ``builtin`` (a shipped prompt id), ``file`` (a prompt collection) or
    inline task templates (``binary`` / ``graded`` / ``pairwise``) with an ``id``."""

    id: str | None = None
    group: str | None = None  # e.g. human / llm; default: from the collection's participant_name
    builtin: str | None = None
    file: str | None = None
    ids: list[str] | None = None  # keep only these ids of a collection
    exclude: list[str] = Field(default_factory=list)  # drop these ids of a collection
    invalid: Literal["error", "skip"] = "error"  # a collection prompt with bad placeholders
    binary: Messages | None = None
    graded: Messages | None = None
    pairwise: Messages | None = None

    @field_validator("ids", "exclude", mode="before")
    @classmethod
    def _ids_as_strings(cls, value: Any) -> Any:
        if isinstance(value, list):
            return [str(v) for v in value]
        return value

    @model_validator(mode="after")
    def _one_kind(self) -> PromptSource:
        inline = any(getattr(self, t) is not None for t in TASKS)
        kinds = [k for k, on in (("builtin", self.builtin), ("file", self.file), ("inline", inline)) if on]
        if len(kinds) != 1:
            raise ValueError(
                "a prompt entry needs exactly one of 'builtin', 'file' or inline templates "
                f"(binary/graded/pairwise); got {', '.join(kinds) or 'none'}"
            )
        if inline and not self.id:
            raise ValueError("an inline prompt needs an 'id'")
        if not self.file and (self.ids is not None or self.exclude or self.invalid != "error"):
            raise ValueError("'ids', 'exclude' and 'invalid' apply to a prompt 'file' only")
        if self.id is not None and not _ID.match(self.id):
            raise ValueError(f"prompt id {shown(self.id)}: use letters, digits, '.', '_', '+', '-'")
        return self


class JudgeEntry(_Strict):
    """A judging method as sweep cells: ``method`` is a registered judge (`judge run --method`),
    ``options`` its options, ``name`` the cell's label (default: the method), ``scale`` how the
    analysis compares its document scores with the human grades, ``pairs`` whether it judges the
    sweep's pairs (as ``judge run --pairs``) rather than its sampled passages."""

    method: str
    name: str | None = None
    options: dict[str, Any] = Field(default_factory=dict)
    scale: Literal["binary", "graded"] = "graded"
    pairs: bool = False  # judge the sweep's pairs (a judge that compares two passages), not its pool

    @model_validator(mode="before")
    @classmethod
    def _from_name(cls, value: Any) -> Any:
        return {"method": value} if isinstance(value, str) else value

    @field_validator("name")
    @classmethod
    def _safe_name(cls, value: str | None) -> str | None:
        if value is not None and not _ID.match(value):
            raise ValueError(f"judge name {shown(value)}: use letters, digits, '.', '_', '+', '-'")
        return value

    @property
    def label(self) -> str:
        return self.name or self.method


class Sampling(_Strict):
    """Which items each cell judges (the same for every cell of a dataset)."""

    topics: int | list[str] | None = None  # first N topics (in file order) or these qids
    per_grade: int | None = None  # at most N passages per human grade per topic (seeded)
    pairs: str | None = None  # a pairs file for every dataset (else the dataset's, else sampled)
    pairs_per_type: int = 10  # sampled pairs per top/mid/low combination per topic
    seed: int = 42

    @field_validator("topics", mode="before")
    @classmethod
    def _topics(cls, value: Any) -> Any:
        if isinstance(value, list):
            return [str(v) for v in value]
        return value

    @field_validator("per_grade", "pairs_per_type")
    @classmethod
    def _positive(cls, value: int | None) -> int | None:
        if value is not None and value < 1:
            raise ValueError("must be at least 1")
        return value


class Limits(_Strict):
    """Shared by all cells: one client per model, one cache, these limits."""

    concurrency: int = 8  # LLM calls in flight per model
    rpm: float | None = None
    tpm: float | None = None
    timeout_s: float = 60.0
    max_attempts: int = 6
    cells: int = 4  # cells judged at the same time
    #: every cell through the provider's Batch API, ``cells`` at once (`reljudge.sweep.batch`); the
    #: same as ``judge sweep --batch``
    batch: bool = False

    @field_validator("concurrency", "cells", "max_attempts")
    @classmethod
    def _at_least_one(cls, value: int) -> int:
        if value < 1:
            raise ValueError("must be at least 1")
        return value


def _alpha_levels() -> dict[str, Literal["nominal", "ordinal", "interval"]]:
    """Each task's α level unless the config names another."""
    return {"binary": "nominal", "graded": "ordinal", "pairwise": "nominal"}


class Analysis(_Strict):
    """Conventions of the agreement tables (all stated in the report)."""

    threshold: float = 2  # binary relevance: human grade >= threshold (TREC DL: 2-3 relevant)
    kappa_weights: Literal["linear", "quadratic"] | None = None  # graded κ (None = unweighted)
    alpha_level: dict[str, Literal["nominal", "ordinal", "interval"]] = Field(default_factory=_alpha_levels)
    ranking_measure: str = "nDCG@10"
    plots: bool = True

    @field_validator("alpha_level")
    @classmethod
    def _tasks(cls, value: dict[str, str]) -> dict[str, str]:
        unknown = sorted(set(value) - set(TASKS))
        if unknown:
            raise ValueError(f"unknown task(s) {unknown}; tasks are {list(TASKS)}")
        return {**_alpha_levels(), **value}


class SweepConfig(_Strict):
    name: str = "sweep"
    output: str = "runs/sweep"  # relative to the config file
    datasets: list[DatasetSpec] = Field(min_length=1)
    models: list[ModelSpec] = Field(min_length=1)
    methods: list[Task] = Field(default_factory=lambda: list(TASKS))
    prompts: list[PromptSource] = Field(default_factory=list)
    judges: list[JudgeEntry] = Field(default_factory=list)
    sampling: Sampling = Field(default_factory=Sampling)
    limits: Limits = Field(default_factory=Limits)
    analysis: Analysis = Field(default_factory=Analysis)
    cache: str | None = None  # LLM cache file (default: the user cache); relative to this file

    # not part of the file: where it was read from (for relative paths and error lines)
    source: str | None = Field(default=None, exclude=True)
    base_dir: str = Field(default=".", exclude=True)
    lines: Any = Field(default=None, exclude=True, repr=False)

    @model_validator(mode="after")
    def _unique(self) -> SweepConfig:
        if not self.prompts and not self.judges:
            raise ValueError("a sweep needs 'prompts', 'judges' or both")
        named: tuple[tuple[str, Sequence[str]], ...] = (
            ("dataset", [d.name for d in self.datasets]),
            ("model name", [m.label for m in self.models]),
            ("method", list(self.methods)),
            ("judge name", [j.label for j in self.judges]),
        )
        for what, names in named:
            dupes = sorted({n for n in names if names.count(n) > 1})
            if dupes:
                raise ValueError(f"duplicate {what}(s): {', '.join(dupes)}")
        return self

    def path(self, value: str | Path) -> Path:
        """A path from the file, resolved against the file's directory."""
        p = Path(value).expanduser()
        return p if p.is_absolute() else Path(self.base_dir) / p

    def line(self, *path: Any) -> int | None:
        return self.lines.get(path) if isinstance(self.lines, LineMap) else None

    @property
    def output_dir(self) -> Path:
        return self.path(self.output)


def parse_sweep_config(data: Any, lines: LineMap, source: str | Path, base_dir: str | Path) -> SweepConfig:
    """Validate an already parsed document (see `load_sweep_config`)."""
    source = str(source)
    if not isinstance(data, dict):
        raise InputError(
            "a sweep file must be a mapping (datasets:, models:, prompts:, ...)", source, lines.get(())
        )
    try:
        config = SweepConfig.model_validate(data)
    except ValidationError as err:
        raise input_error_from_validation(err, path=source, line=lines.get) from None
    config.source = source
    config.base_dir = str(base_dir)
    config.lines = lines
    return config


def load_sweep_config(path: str | Path) -> SweepConfig:
    """Read and validate a sweep YAML file. Prompts are checked by `reljudge.sweep.prompts`."""
    path = Path(path)
    data, lines = load_file_with_lines(path)
    return parse_sweep_config(data, lines, path, path.parent)


def check_placeholders(task: str, system: str, user: str) -> str | None:
    """What is wrong with a template's placeholders for ``task``, or None when it is usable."""
    found = set(_PLACEHOLDER.findall(system)) | set(_PLACEHOLDER.findall(user))
    need = PLACEHOLDERS[task]
    missing = [p for p in need if p not in found]
    unknown = sorted(found - set(need))
    problems = []
    if missing:
        problems.append("missing " + ", ".join("{" + p + "}" for p in missing))
    if unknown:
        problems.append("unknown " + ", ".join("{" + p + "}" for p in unknown))
    if not user.strip():
        problems.append("empty user message")
    if not problems:
        return None
    return (
        f"{task} prompt: "
        + "; ".join(problems)
        + f" (a {task} prompt uses "
        + ", ".join("{" + p + "}" for p in need)
        + ")"
    )
