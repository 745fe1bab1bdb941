"""Value types of the LLM layer: messages, the client configuration, the result of one chat call,
and the provider error every backend adapter raises.

These types carry no behaviour beyond validation and small conveniences, so that judges can build
messages and read results without importing any provider library.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from reljudge.records import Usage

ChatStatus = Literal["ok", "api_error", "refused", "truncated"]
CHAT_STATUSES: tuple[str, ...] = ("ok", "api_error", "refused", "truncated")
ROLES: frozenset[str] = frozenset({"system", "user", "assistant", "developer"})

# Kinds of provider failures. Retryable: rate_limit, server, timeout, connection.
ErrorKind = Literal[
    "rate_limit",  # 429
    "server",  # 5xx (incl. 503 overloaded)
    "timeout",  # request took longer than timeout_s
    "connection",  # could not connect / connection dropped
    "bad_request",  # other 4xx: invalid params, unknown model, ...
    "auth",  # 401 / 403
    "context_length",  # prompt too long for the model
    "content_filter",  # the provider refused the prompt or answer
    "invalid_response",  # a 200 response we cannot read
    "other",
]
RETRYABLE_KINDS: frozenset[str] = frozenset({"rate_limit", "server", "timeout", "connection"})

# Bounds on what a provider sends (a hostile or broken server must not crash, hang or bloat a run).
#: the most bytes of a response body read (after gzip/deflate decoding); a bigger body is an
#: ``invalid_response`` ("response too large"), never retried. 8 MiB holds ~2M tokens of text.
MAX_RESPONSE_BYTES = 8 * 1024 * 1024
#: the most characters of answer text a `ChatResult` carries; a longer answer keeps its first
#: ``MAX_ANSWER_CHARS`` characters, with ``status="truncated"`` and ``oversized=True``.
MAX_ANSWER_CHARS = 1024 * 1024
#: reported token counts are clamped to ``0..MAX_TOKENS_PER_CALL`` (a billion tokens is far beyond
#: any context window), so a reported 1e30 can neither inflate costs nor stall the TPM limiter.
MAX_TOKENS_PER_CALL = 10**9
#: the most characters of a provider's error message kept in ``ChatResult.error``.
MAX_ERROR_CHARS = 1000


def default_cache_path() -> Path:
    """``$RELJUDGE_CACHE`` if set, else ``$XDG_CACHE_HOME/reljudge/llm-cache.sqlite``
    (``~/.cache/reljudge/llm-cache.sqlite``)."""
    env = os.environ.get("RELJUDGE_CACHE")
    if env:
        return Path(env).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base).expanduser() / "reljudge" / "llm-cache.sqlite"


@dataclass(frozen=True)
class Message:
    """One chat message. ``role`` is system, user, assistant (or developer). ``content`` is a
    string, or a tuple of parts (`reljudge.llm.images.TextPart`, `ImagePart`): text and images."""

    role: str
    content: str | tuple[Any, ...]

    def __post_init__(self) -> None:
        if self.role not in ROLES:
            raise ValueError(f"unknown message role {self.role!r} (expected one of {sorted(ROLES)})")
        if isinstance(self.content, tuple):
            from reljudge.llm.images import ImagePart, TextPart

            if not self.content or not all(isinstance(p, (TextPart, ImagePart)) for p in self.content):
                raise TypeError("message content parts must be TextPart or ImagePart (at least one)")
        elif not isinstance(self.content, str):
            raise TypeError(f"message content must be a string, got {type(self.content).__name__}")

    @classmethod
    def system(cls, content: str) -> Message:
        return cls("system", content)

    @classmethod
    def user(cls, content: str) -> Message:
        return cls("user", content)

    @classmethod
    def assistant(cls, content: str) -> Message:
        return cls("assistant", content)

    @classmethod
    def coerce(cls, value: Message | Mapping[str, Any]) -> Message:
        if isinstance(value, Message):
            return value
        if isinstance(value, Mapping):
            try:
                content = value["content"]
                role = str(value["role"])
            except KeyError as err:
                raise ValueError(
                    f"a chat message needs 'role' and 'content', got keys {sorted(value)}"
                ) from err
            if isinstance(content, (list, tuple)):  # OpenAI's content parts (text, image_url)
                from reljudge.llm.images import coerce_part

                content = tuple(coerce_part(p) for p in content)
            return cls(role, content)
        raise TypeError(f"a chat message must be a Message or a dict, got {type(value).__name__}")

    @property
    def has_images(self) -> bool:
        return isinstance(self.content, tuple) and any(hasattr(p, "image") for p in self.content)

    def to_dict(self) -> dict[str, Any]:
        """The message as hashed and kept: image parts by their SHA-256 (`reljudge.llm.images`)."""
        if isinstance(self.content, tuple):
            return {"role": self.role, "content": [p.hashed() for p in self.content]}
        return {"role": self.role, "content": self.content}

    def to_wire(self) -> dict[str, Any]:
        """The message as sent: image parts as URLs or base64 data URLs."""
        if isinstance(self.content, tuple):
            return {"role": self.role, "content": [p.wire() for p in self.content]}
        return {"role": self.role, "content": self.content}


@dataclass
class ClientConfig:
    """Everything an `LLMClient` needs. See `reljudge.llm.routing` for how ``model`` picks a backend.

    ``api_key=None`` reads the provider's usual environment variable (OPENAI_API_KEY, ...).
    ``rpm``/``tpm`` cap requests and tokens per minute across all calls of one client.
    ``timeout_s`` bounds each attempt; ``max_attempts`` bounds attempts per call (1 = no retry).
    Backoff between retries is exponential with full jitter: up to
    ``backoff_base_s * 2**n`` seconds, capped at ``backoff_max_s``; a ``Retry-After`` header
    replaces it (capped at ``retry_after_max_s``).
    ``extra_params`` are sent as-is with each request (and are part of the cache key).
    ``prices``: a `reljudge.llm.pricing.PriceTable`, or entries (USD per 1M tokens) over litellm's
    model cost map (see `pricing`).

    Fail fast (see `ProviderAbort`): until the client's first request to the provider has finished
    (with its retries) the other requests wait, so a misconfigured job sends one request, not the
    pool. ``abort_after`` (K, default 8) is how many consecutive final failures of a permanent kind
    (a 4xx other than context length and content filter), or of connection/timeout, end the job
    when nothing succeeded in between; an authentication error or a 404, and a first request that
    cannot reach the server at all, end it at once. ``fail_fast=False`` turns both off.
    """

    model: str
    base_url: str | None = None
    api_key: str | None = field(default=None, repr=False)
    concurrency: int = 8
    #: ``concurrency`` is the ceiling of an adaptive level (`reljudge.llm.adaptive`), not a fixed one
    adaptive: bool = False
    rpm: float | None = None
    tpm: float | None = None
    timeout_s: float = 60.0
    max_attempts: int = 6
    cache_path: Path | None = field(default_factory=default_cache_path)
    use_cache: bool = True
    #: answer from the response cache only: no request leaves the machine, and a call the cache
    #: cannot answer raises `ProviderAbort` (kind ``cache_miss``) -- an offline replay
    cache_only: bool = False
    temperature: float | None = 0.0
    seed: int | None = 42
    max_tokens: int | None = None
    logprobs: bool = False
    top_logprobs: int | None = None
    extra_params: dict[str, Any] = field(default_factory=dict)
    prices: Any = None  # a PriceTable, a mapping of entries over litellm's map, or None
    backoff_base_s: float = 1.0
    backoff_max_s: float = 60.0
    retry_after_max_s: float = 120.0
    fail_fast: bool = True
    abort_after: int = 8
    #: a hard cap on the USD spent at the provider (`reljudge.llm.budget`), None: no cap
    max_cost_usd: float | None = None
    #: models whose answers are kept though they are not ``model`` (`reljudge.llm.results.served_model_problem`)
    accept_served_models: tuple[str, ...] = ()
    #: what was spent before this client (earlier sessions of a run), counted under the cap
    spent_usd: float = 0.0
    #: ``model`` as the job resolved it (a `reljudge.llm.routing.ResolvedModel`, which needs the
    #: backends this module is below), which the client then does not resolve again; None: the
    #: client resolves ``model``
    resolved: Any = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not self.model or not isinstance(self.model, str):
            raise ValueError("ClientConfig.model must be a non-empty string")
        if self.resolved is not None and self.resolved.named != self.model:
            raise ValueError(f"ClientConfig.resolved is not the model {self.model!r} resolved")
        if self.concurrency < 1:
            raise ValueError(f"concurrency must be >= 1, got {self.concurrency}")
        if self.max_attempts < 1:
            raise ValueError(f"max_attempts must be >= 1, got {self.max_attempts}")
        if self.abort_after < 1:
            raise ValueError(f"abort_after must be >= 1, got {self.abort_after}")
        if self.timeout_s <= 0:
            raise ValueError(f"timeout_s must be > 0, got {self.timeout_s}")
        for name in ("rpm", "tpm"):
            value = getattr(self, name)
            if value is not None and value <= 0:
                raise ValueError(f"{name} must be > 0 or None, got {value}")
        if self.max_cost_usd is not None and not self.max_cost_usd >= 0:
            raise ValueError(f"max_cost_usd must be >= 0 or None, got {self.max_cost_usd}")
        if self.top_logprobs is not None and not 0 <= self.top_logprobs <= 20:
            raise ValueError(f"top_logprobs must be in 0..20, got {self.top_logprobs}")
        if self.cache_only and not self.use_cache:
            raise ValueError("--cache-only answers from the response cache: it cannot go with --no-cache")
        if self.cache_path is not None:
            self.cache_path = Path(self.cache_path).expanduser()
        from reljudge.io.redact import credential_field

        found = credential_field(self.extra_params)
        if found:  # written in clear to batch files and cache keys: the key goes in api_key
            raise ValueError(f"extra_params {found!r} is a credential: pass it as api_key")

    def decoding_params(self) -> dict[str, Any]:
        """The decoding parameters of a request, before per-call overrides."""
        params: dict[str, Any] = {"temperature": self.temperature, "seed": self.seed}
        if self.max_tokens is not None:
            params["max_tokens"] = self.max_tokens
        if self.logprobs:
            params["logprobs"] = True
            if self.top_logprobs is not None:
                params["top_logprobs"] = self.top_logprobs
        params.update(self.extra_params)
        return params


@dataclass
class ChatResult:
    """The outcome of one `LLMClient.chat` call; a failure is a result, never an exception.

    ``status``: ok | truncated (finish_reason=length, text kept) | refused (content filter) |
    api_error (``error`` says why; it never contains the API key).
    ``usage``: tokens of the answer; ``usage.calls`` counts requests sent to the provider for this
    call (attempts, so retries count); a cache hit has ``calls=0`` and ``cost_usd=0`` but keeps
    the token counts of the original answer for information.
    ``logprobs``: list of ``{"token", "logprob", "top_logprobs": [{"token", "logprob"}]}`` or None.
    ``latency_s``: seconds from when the last attempt was sent (after the wait for a concurrency
    slot and the rate limiter) to its answer; for a cache hit, the lookup.
    ``params``: the effective decoding params sent (after provider adaptation).
    ``prompt``: the messages sent (kept in memory for the answer's reader, never stored).
    ``oversized``: the answer was longer than `MAX_ANSWER_CHARS`; ``text`` holds its beginning and
    the status is ``truncated``.
    The text, error and logprobs never contain the client's secrets (API key, the password of a
    ``user:pass@`` base URL, its Basic credentials): an echo of one is replaced by ``***``.
    """

    text: str
    status: ChatStatus
    backend: str
    model: str
    messages_sha256: str
    params: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    error_kind: str | None = None
    finish_reason: str | None = None
    usage: Usage = field(default_factory=Usage)
    price_known: bool = True
    latency_s: float = 0.0
    cached: bool = False
    attempts: int = 0
    logprobs: list[dict[str, Any]] | None = None
    #: the provider's base URL as the cache key has it (normalised, credentials removed)
    base_url: str = ""
    #: the response-cache key of this call (None without a cache); `LLMClient.forget` drops it
    cache_key: str | None = field(default=None, repr=False)
    #: the messages this result answers (role/content dicts), so that a reader can tell text the
    #: model copied from its prompt from text it wrote; never written to records or the cache
    prompt: list[dict[str, str]] | None = field(default=None, repr=False)
    oversized: bool = False

    @property
    def ok(self) -> bool:
        return self.status == "ok"


class ProviderError(Exception):
    """A classified provider failure, raised by backend adapters and handled by the client.

    ``kind`` decides retrying (see `RETRYABLE_KINDS`); ``retry_after`` is the server's
    ``Retry-After`` in seconds when it sent one.
    """

    def __init__(
        self,
        kind: str,
        message: str,
        *,
        status_code: int | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.status_code = status_code
        self.retry_after = retry_after
        self.rate_headers: dict[str, str] | None = None  # `reljudge.llm.adaptive.RATE_HEADERS` sent

    @property
    def retryable(self) -> bool:
        return self.kind in RETRYABLE_KINDS

    def __str__(self) -> str:
        code = f" (HTTP {self.status_code})" if self.status_code else ""
        return f"{self.kind}{code}: {self.message}"


class ProviderAbort(Exception):
    """The provider cannot serve this job: `LLMClient.chat` raises it instead of sending more
    requests (see `ClientConfig` for when). Every later call of the client raises the same one.

    ``kind`` is the `ProviderError` kind that decided it (``auth``, ``bad_request``,
    ``connection``, ``timeout``, ...), ``message`` the provider's message (secrets masked),
    ``status_code`` its HTTP status, ``hint`` what to check (or None). ``str()`` is one line.
    """

    def __init__(
        self, kind: str, message: str, *, status_code: int | None = None, hint: str | None = None
    ) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.status_code = status_code
        self.hint = hint

    def __str__(self) -> str:
        code = f" (HTTP {self.status_code})" if self.status_code else ""
        text = f"the provider cannot serve this job: {self.kind}{code}: {self.message}"
        if self.hint:
            text += f" (hint: {self.hint})"
        return " ".join(text.split())


class Deferred(Exception):
    """A chat that the batch mode of `LLMClient` collected instead of sending
    (`reljudge.llm.batch`): the item that asked it gets no record in this pass; its answer comes
    back through a batch and the next pass reads it from the response cache. ``key`` is the
    request's response-cache key (its batch ``custom_id``)."""

    def __init__(self, key: str = "") -> None:
        super().__init__(key)
        self.key = key


@dataclass
class Completion:
    """What a backend returns for one successful request (before status/caching logic)."""

    text: str
    finish_reason: str | None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    logprobs: list[dict[str, Any]] | None = None
    refusal: str | None = None
    model: str | None = None  # the model name the provider reports
    #: ``usage.prompt_tokens_details.cached_tokens`` (at most ``prompt_tokens``), None if not sent
    cached_tokens: int | None = None
    #: ``usage.completion_tokens_details.reasoning_tokens`` (at most ``completion_tokens``)
    reasoning_tokens: int | None = None
    #: the provider's ``x-ratelimit-*`` headers (`reljudge.llm.adaptive.RATE_HEADERS`), if sent
    rate_headers: dict[str, str] | None = None
    #: set by `reljudge.llm.usage_bound.UsageBound.check`: "missing" (no usage reported) or
    #: "over" (usage above what the request could have used, clamped); None: usage within bounds
    usage_anomaly: str | None = None
    #: the (prompt, completion) tokens the provider reported, when they were clamped ("over")
    reported_usage: tuple[int, int] | None = None
