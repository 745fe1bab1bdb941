"""The interface every backend adapter implements.

An adapter turns generic decoding params (temperature, seed, max_tokens, logprobs, top_logprobs,
plus extra provider params) into its library's call, performs one request (no retries: the
client retries), and converts the library's exceptions into `ProviderError` kinds.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any

from reljudge.llm.types import MAX_TOKENS_PER_CALL, Completion, ProviderError

# Substrings that identify a context-length / content-filter error in provider messages.
CONTEXT_LENGTH_HINTS = (
    "context_length_exceeded",
    "context length",
    "context window",
    "maximum context",
    "too many tokens",
    "prompt is too long",
    "input is too long",
)
CONTENT_FILTER_HINTS = ("content_filter", "content_policy", "content management policy", "safety system")


def classify_status(status: int | None, message: str, retry_after: float | None = None) -> ProviderError:
    """Map an HTTP status + message to a `ProviderError` (shared by the adapters)."""
    low = message.lower()
    if status == 429:
        return ProviderError("rate_limit", message, status_code=status, retry_after=retry_after)
    if status is not None and status >= 500:
        return ProviderError("server", message, status_code=status, retry_after=retry_after)
    if status == 408:
        return ProviderError("timeout", message, status_code=status, retry_after=retry_after)
    if any(h in low for h in CONTEXT_LENGTH_HINTS):
        return ProviderError("context_length", message, status_code=status)
    if any(h in low for h in CONTENT_FILTER_HINTS):
        return ProviderError("content_filter", message, status_code=status)
    if status in (401, 403):
        return ProviderError("auth", message, status_code=status)
    if status is not None and 400 <= status < 500:
        return ProviderError("bad_request", message, status_code=status)
    return ProviderError("other", message, status_code=status)


class Backend(ABC):
    """One provider connection. Use as an async context manager or call `aclose`."""

    name: str = ""
    supports_logprobs: bool = True

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None,
        api_key: str | None,
        timeout_s: float,
        concurrency: int | None = None,
    ) -> None:
        """``concurrency``: the most requests in flight (adapters with a connection pool size it)."""
        self.model = model
        self.base_url = base_url
        self.timeout_s = timeout_s

    def adapt_params(self, params: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        """(keyword arguments for the library call, effective params to record).

        Default: OpenAI names, None values dropped, logprobs only when asked and supported.
        """
        effective = {k: v for k, v in params.items() if v is not None}
        if not effective.get("logprobs") or not self.supports_logprobs:
            effective.pop("logprobs", None)
            effective.pop("top_logprobs", None)
        return dict(effective), effective

    @abstractmethod
    async def complete(self, messages: list[dict[str, str]], wire: dict[str, Any]) -> Completion:
        """One request. Raises `ProviderError` on any failure."""

    def batch_body(self, messages: list[dict[str, str]], wire: dict[str, Any]) -> dict[str, Any]:
        """The body of this request in an OpenAI batch line (`reljudge.llm.batch`): what the
        synchronous path sends. Only OpenAI-compatible backends have one."""
        raise ValueError(
            f"the {self.name} backend cannot send requests through a batch (use an openai/ model)"
        )

    async def aclose(self) -> None:  # noqa: B027 - optional hook
        pass


def pool_limits(concurrency: int | None) -> Any:
    """httpx connection-pool limits for at most ``concurrency`` requests in flight (None: the
    library's default). A pool far larger than the requests in flight only costs CPU: httpcore
    checks every pooled connection each time a request starts or ends."""
    if concurrency is None:
        return None
    import httpx

    return httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)


# HTTP transports: "aiohttp" (default) sends requests through aiohttp behind the httpx interface
# both SDKs use (the `httpx-aiohttp` package, the transport of the openai SDK's
# `DefaultAioHttpClient`); "httpx" keeps httpx's own transport (httpcore). Measured against the
# mock server at L=0, C=16-64: ~1.0-1.4 ms of client CPU per call with aiohttp against
# ~2.7-3.2 ms with httpcore, whose pool re-checks every pooled connection for each queued request.
TRANSPORTS = ("aiohttp", "httpx")


def http_transport(kind: str, concurrency: int | None) -> Any:
    """The httpx transport to pass as ``transport=`` (None: httpx's own, sized by `pool_limits`).

    An explicit transport turns httpx's proxy variables (``HTTP_PROXY``, ``NO_PROXY``, ...) off, so
    when the environment sets a proxy httpx's transport is kept and handles them as before.
    """
    if kind not in TRANSPORTS:
        raise ValueError(f"unknown HTTP transport {kind!r} (expected one of {', '.join(TRANSPORTS)})")
    if kind == "httpx" or _env_proxies():
        return None
    import httpx

    from reljudge.llm.backends._aiohttp import AiohttpTransport

    limits = pool_limits(concurrency) or httpx.Limits(max_connections=100, max_keepalive_connections=20)
    return AiohttpTransport(limits=limits)


def _env_proxies() -> bool:
    import urllib.request

    return any(scheme in ("http", "https", "all") for scheme in urllib.request.getproxies())


def transport_error(err: BaseException, timeout_s: float) -> ProviderError:
    """`ProviderError` for a failure below HTTP (no status): "timeout" or "connection".

    The aiohttp transport reports every aiohttp connection error, a refused connection or a
    dropped one included, as ``httpx.ConnectTimeout``; the original aiohttp exception is kept as
    the cause, so a real timeout is told apart by walking the chain, as with httpcore.
    """
    seen: BaseException | None = err
    while seen is not None:
        if is_aiohttp_error(seen):
            if isinstance(seen, TimeoutError):  # aiohttp's timeouts subclass the built-in one
                break
            return ProviderError("connection", f"connection error: {seen or type(seen).__name__}")
        seen = seen.__cause__ or seen.__context__
    return ProviderError("timeout", f"no answer within {timeout_s:g} s")


def is_aiohttp_error(err: BaseException) -> bool:
    return type(err).__module__.startswith("aiohttp")


def normalise_base_url(url: str | None) -> str:
    if not url:
        return ""
    text = url.strip().rstrip("/")
    scheme, sep, rest = text.partition("://")
    if not sep:
        return text.lower()
    host, slash, path = rest.partition("/")
    if "@" in host:  # drop credentials embedded in the URL
        host = host.rsplit("@", 1)[1]
    return f"{scheme.lower()}://{host.lower()}{slash}{path}"


def clean_logprobs(items: Any) -> list[dict[str, Any]] | None:
    """Normalise token logprobs (objects or dicts) to plain dicts of the expected types.

    An entry whose token is not a string is dropped, a logprob that is not a finite number becomes
    None; anything but a list gives None (a provider's odd shape never reaches a record).
    """
    if not items or not isinstance(items, (list, tuple)):
        return None
    out: list[dict[str, Any]] = []
    for item in items:
        token, logprob, tops_in = _token_fields(item)
        if token is None:
            continue
        tops = []
        for top in tops_in if isinstance(tops_in, (list, tuple)) else ():
            t_token, t_logprob, _ = _token_fields(top)
            if t_token is not None:
                tops.append({"token": t_token, "logprob": t_logprob})
        out.append({"token": token, "logprob": logprob, "top_logprobs": tops})
    return out or None


def _token_fields(item: Any) -> tuple[str | None, float | None, Any]:
    get: Callable[[str], Any]
    if isinstance(item, dict):
        get = item.get
    else:
        get = lambda k: getattr(item, k, None)  # noqa: E731
    token, logprob = get("token"), get("logprob")
    if not isinstance(token, str):
        return None, None, None
    if isinstance(logprob, bool) or not isinstance(logprob, (int, float)) or not math.isfinite(logprob):
        logprob = None
    return token, (float(logprob) if logprob is not None else None), get("top_logprobs")


def clamp_tokens(value: Any) -> int:
    """A reported token count as a sane int: ``0..MAX_TOKENS_PER_CALL`` (anything not a finite,
    non-negative number is 0; 1e30 or 1e400, which JSON reads as infinity, is the bound; 1.5 is 1)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return 0
    if isinstance(value, float) and math.isnan(value):
        return 0
    if value <= 0:
        return 0
    if value >= MAX_TOKENS_PER_CALL:
        return MAX_TOKENS_PER_CALL
    return int(value)


def usage_details(usage: Any, prompt_tokens: int, completion_tokens: int) -> tuple[int | None, int | None]:
    """(cached prompt tokens, reasoning tokens) of a usage object or dict: OpenAI's
    ``prompt_tokens_details.cached_tokens`` and ``completion_tokens_details.reasoning_tokens``;
    None for one the provider did not send (or sent as something else than an object holding a
    number). Each is clamped like every count (`clamp_tokens`) and to at most the prompt or
    completion tokens it is a part of, so a provider cannot make a call cost more than its own
    counts say, nor less than nothing."""

    def get(obj: Any, name: str) -> Any:
        return obj.get(name) if isinstance(obj, dict) else getattr(obj, name, None)

    def part(details_name: str, name: str, whole: int) -> int | None:
        value = get(get(usage, details_name), name) if usage is not None else None
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return None
        return min(clamp_tokens(value), whole)

    return (
        part("prompt_tokens_details", "cached_tokens", prompt_tokens),
        part("completion_tokens_details", "reasoning_tokens", completion_tokens),
    )


def content_text(content: Any) -> tuple[str, str | None]:
    """(answer text, refusal) from a message's ``content``.

    A string is the text; None is no text. A list of parts (several OpenAI-compatible servers send
    ``[{"type": "text", "text": "..."}]``) gives its text parts joined, and a ``refusal`` part's
    text as the refusal; parts of other types (images, audio) are skipped. Any other shape (a
    number, an object, a part that is neither a string nor an object, a ``text`` that is not a
    string) raises ``ProviderError("invalid_response")``: the answer is unusable, and never cached.
    """
    if content is None:
        return "", None
    if isinstance(content, str):
        return content, None
    if isinstance(content, list):
        texts: list[str] = []
        refusals: list[str] = []
        for part in content:
            if isinstance(part, str):
                texts.append(part)
                continue
            if not isinstance(part, dict):
                raise ProviderError(
                    "invalid_response",
                    f"a part of the answer's content is {type(part).__name__}, not an object",
                )
            kind = part.get("type", "text")
            if kind in ("text", "output_text"):
                text = part.get("text", "")
                if not isinstance(text, str):
                    raise ProviderError(
                        "invalid_response",
                        f"a text part of the answer is {type(text).__name__}, not a string",
                    )
                texts.append(text)
            elif kind == "refusal" and isinstance(part.get("refusal"), str):
                refusals.append(part["refusal"])
        return "".join(texts), ("".join(refusals) or None)
    raise ProviderError(
        "invalid_response",
        f"the answer's content is {type(content).__name__} (expected a string or a list of text parts)",
    )


__all__ = [
    "Backend",
    "ProviderError",
    "clamp_tokens",
    "usage_details",
    "classify_status",
    "clean_logprobs",
    "content_text",
    "normalise_base_url",
]
