"""The judgment record: one LLM label (or one failure to get one) with its full provenance.

Every judge produces `Judgment` records; aggregation, metrics and export read them. A record
is written as one JSON line. A failure is never a label: `label` is None unless `status` is
``ok``, and the raw model output is kept either way.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

Status = Literal["ok", "unparsed", "api_error", "refused", "truncated", "skipped"]
STATUSES: tuple[str, ...] = ("ok", "unparsed", "api_error", "refused", "truncated", "skipped")
FAILURE_STATUSES: frozenset[str] = frozenset({"unparsed", "api_error", "refused", "truncated"})
#: the identity of a judged item inside one run (`Judgment.key`): (method, qid, docid, docid_b, item_id)
Key = tuple[str, str, str, str, str]


def sha256_text(text: str) -> str:
    """Hex SHA-256 of a UTF-8 string (prompt templates, rendered messages)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# one encoder for every call (json.dumps with options builds a new one each time)
_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def canonical_json(value: Any) -> str:
    """Deterministic JSON (sorted keys, no spaces, UTF-8 kept) used for hashing."""
    return _CANONICAL.encode(value)


def messages_sha256(messages: Iterable[Any]) -> str:
    """SHA-256 of chat messages as canonical JSON (`canonical_json`): a list of
    ``{"content", "role"}`` objects. A message is a mapping with ``role`` and ``content`` (other
    keys are not hashed) or an object with those attributes (`reljudge.llm.Message`). It is a
    template's ``sha256`` and what `Provenance.messages_sha256` records of rendered messages."""
    canon = [
        {"role": m["role"], "content": m["content"]}
        if isinstance(m, Mapping)
        else {"role": m.role, "content": m.content}
        for m in messages
    ]
    return sha256_text(canonical_json(canon))


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class Usage(BaseModel):
    """Token usage of one or more LLM calls."""

    model_config = ConfigDict(extra="forbid")

    prompt_tokens: int = 0
    completion_tokens: int = 0
    calls: int = 0  # requests that reached the provider (cache hits are not calls)
    cost_usd: float = 0.0
    #: of the prompt tokens, those the provider read from its prompt cache (priced as cached
    #: input); None when the provider did not say (kept out of the record)
    cached_tokens: int | None = None
    #: of the completion tokens, those the model spent reasoning (o-series, gpt-5); None when
    #: the provider did not say
    reasoning_tokens: int | None = None
    #: of ``cost_usd``, what is an estimate, not the provider's usage at the price: answers
    #: without usage or with usage above what the request could have used, and attempts whose
    #: outcome is unknown, charged their bound (`reljudge.llm.usage_bound`); None: none
    estimated_usd: float | None = None

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            calls=self.calls + other.calls,
            cost_usd=self.cost_usd + other.cost_usd,
            cached_tokens=_plus(self.cached_tokens, other.cached_tokens),
            reasoning_tokens=_plus(self.reasoning_tokens, other.reasoning_tokens),
            estimated_usd=_plus(self.estimated_usd, other.estimated_usd),
        )


def _plus(a: Any, b: Any) -> Any:
    """The sum of two counts a provider may not have reported (None: neither did)."""
    return None if a is None and b is None else (a or 0) + (b or 0)


class Provenance(BaseModel):
    """Where a label came from, precisely enough to reproduce or audit it."""

    model_config = ConfigDict(extra="allow")

    backend: str | None = None
    base_url: str | None = None  # the provider's endpoint (normalised, credentials removed)
    model: str | None = None
    prompt_id: str | None = None
    prompt_sha256: str | None = None  # SHA-256 of the template text
    messages_sha256: str | None = None  # SHA-256 of the rendered messages (canonical JSON)
    params: dict[str, Any] = Field(default_factory=dict)  # temperature, seed, max_tokens, ...
    usage: Usage = Field(default_factory=Usage)
    latency_s: float | None = None
    cached: bool = False
    attempts: int = 0
    tool_version: str | None = None
    timestamp: str = Field(default_factory=utc_now)


class Judgment(BaseModel):
    """One judgment: a label for (qid, docid), a pair (docid, docid_b) or an item (item_id).

    - pointwise judges fill ``docid``;
    - pairwise judges fill ``docid`` and ``docid_b`` (label 1 = docid preferred, 2 = docid_b
      preferred, 0 = tie);
    - per-item judges (EXAM questions, nuggets) fill ``item_id`` (and ``docid`` when the item is
      graded against a passage).
    """

    model_config = ConfigDict(extra="forbid")

    qid: str
    docid: str | None = None
    docid_b: str | None = None
    item_id: str | None = None
    method: str
    label: int | float | None = None
    status: Status = "ok"
    raw: str | None = None
    error: str | None = None
    parse: str | None = None  # how the label was parsed (e.g. "marker", "fallback:last-digit")
    extra: dict[str, Any] = Field(default_factory=dict)
    provenance: Provenance = Field(default_factory=Provenance)

    @model_validator(mode="after")
    def _failure_has_no_label(self) -> Judgment:
        if self.status != "ok" and self.label is not None:
            raise ValueError(f"a judgment with status={self.status!r} cannot carry a label")
        return self

    @property
    def key(self) -> Key:
        """Identity of the judged item inside one run (used to resume and de-duplicate)."""
        return (self.method, self.qid, self.docid or "", self.docid_b or "", self.item_id or "")

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def to_json(self) -> str:
        return self.model_dump_json(exclude_none=True)
