"""OpenAI and every OpenAI-compatible server (vLLM, OpenRouter, Azure-compatible proxies, llama.cpp,
Ollama's /v1, ...) through the official `openai` package (``AsyncOpenAI``, SDK retries disabled).

Requests go through the SDK's client (``AsyncOpenAI.post`` on ``/chat/completions``): the same
HTTP client, headers and error classes as ``chat.completions.create``, without its per-call
transformation of the typed request arguments (about a millisecond of CPU per call), since the
body built here is already plain JSON. The answer is read from the response's JSON here
(`completion_from_json`) rather than by the SDK's model, which takes any shape on trust (a list or
a number as ``content``) and whose validation of ``usage`` (``1e400``, ``1.5``) would lose an
answer for a bad token count: here a content that is not text is an ``invalid_response``, and
token counts are clamped (`clamp_tokens`) while the answer is kept.

HTTP guards (`reljudge.llm.backends._http`): the body is read up to `MAX_RESPONSE_BYTES` (decoded),
and redirects are followed (explicitly, ``follow_redirects=True``) only within the same origin.

Quirks: reasoning models (o1/o3/o4/gpt-5 families) take ``max_completion_tokens`` instead of
``max_tokens`` and accept only the default temperature, so temperature is not sent and is recorded
as None.
"""

from __future__ import annotations

import json
import logging
import os
import re
from typing import Any

import httpx
import openai

from reljudge.io.lines import replace_surrogates
from reljudge.llm.adaptive import rate_headers
from reljudge.llm.backends._http import event_hooks, guard_error
from reljudge.llm.backends.base import (
    Backend,
    clamp_tokens,
    classify_status,
    clean_logprobs,
    content_text,
    http_transport,
    pool_limits,
    transport_error,
    usage_details,
)
from reljudge.llm.retry import retry_after_from_headers
from reljudge.llm.types import Completion, ProviderError

# Request fields the SDK takes as keyword arguments; any other field (llama.cpp's ``grammar``, vLLM's
# ``guided_choice``, ...) is sent in the JSON body through ``extra_body``.
_SDK_FIELDS = frozenset(
    {
        "temperature",
        "seed",
        "max_tokens",
        "max_completion_tokens",
        "logprobs",
        "top_logprobs",
        "top_p",
        "stop",
        "n",
        "presence_penalty",
        "frequency_penalty",
        "response_format",
        "logit_bias",
        "user",
        "tools",
        "tool_choice",
        "parallel_tool_calls",
        "reasoning_effort",
        "service_tier",
        "metadata",
        "store",
        "modalities",
        "prediction",
        "verbosity",
    }
)
_REASONING_MODEL = re.compile(r"^(o\d|gpt-5)", re.IGNORECASE)
_PLACEHOLDER_KEY = "EMPTY"  # OpenAI-compatible local servers accept any key


class OpenAIBackend(Backend):
    name = "openai"

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None,
        api_key: str | None,
        timeout_s: float,
        concurrency: int | None = None,
        transport: str = "aiohttp",
    ) -> None:
        super().__init__(model, base_url=base_url, api_key=api_key, timeout_s=timeout_s)
        key = api_key or os.environ.get("OPENAI_API_KEY")
        if not key:
            if base_url is None and not os.environ.get("OPENAI_BASE_URL"):
                raise ValueError(
                    "no API key for the openai backend: set OPENAI_API_KEY or pass api_key "
                    "(or set base_url for a local OpenAI-compatible server)"
                )
            key = _PLACEHOLDER_KEY
        http_kwargs: dict[str, Any] = {
            "timeout": timeout_s,
            "transport": http_transport(transport, concurrency),
            "follow_redirects": True,  # same origin only: the response hook refuses the others
            "event_hooks": event_hooks(),
        }
        limits = pool_limits(concurrency)
        if limits is not None:
            http_kwargs["limits"] = limits  # used by httpx's transport only
        http_client = openai.DefaultAsyncHttpxClient(**http_kwargs)  # the SDK's defaults, our transport
        self._client = openai.AsyncOpenAI(
            api_key=key, base_url=base_url, max_retries=0, timeout=timeout_s, http_client=http_client
        )

    @property
    def reasoning_model(self) -> bool:
        return bool(_REASONING_MODEL.match(self.model.rsplit("/", 1)[-1]))

    def adapt_params(self, params: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        wire, effective = super().adapt_params(params)
        if self.reasoning_model:
            if "max_tokens" in wire:
                wire["max_completion_tokens"] = wire.pop("max_tokens")
            wire.pop("temperature", None)
            effective["temperature"] = None  # forced to the provider default
        body = {k: wire.pop(k) for k in list(wire) if k not in _SDK_FIELDS}
        if body:
            wire["extra_body"] = body
        return wire, effective

    async def complete(self, messages: list[dict[str, str]], wire: dict[str, Any]) -> Completion:
        try:
            resp = await self._client.post(
                "/chat/completions", body=self._body(messages, wire), cast_to=httpx.Response
            )
        except openai.APIError as err:
            raise _provider_error(err, self.timeout_s) from err
        except openai.OpenAIError as err:
            raise ProviderError("other", str(err)) from err
        completion = completion_from_json(resp.content)
        completion.rate_headers = rate_headers(resp.headers)
        return completion

    async def embed(self, texts: list[str]) -> tuple[list[list[float]], int]:
        """Vectors of ``texts`` from the ``/embeddings`` endpoint, in input order, and the prompt
        tokens it reported (`embeddings_from_json` checks the body)."""
        body = {"model": self.model, "input": texts, "encoding_format": "float"}
        try:
            resp = await self._client.post("/embeddings", body=body, cast_to=httpx.Response)
        except openai.APIError as err:
            raise _provider_error(err, self.timeout_s) from err
        except openai.OpenAIError as err:
            raise ProviderError("other", str(err)) from err
        return embeddings_from_json(resp.content, len(texts))

    def batch_body(self, messages: list[dict[str, str]], wire: dict[str, Any]) -> dict[str, Any]:
        return self._body(messages, wire)

    def _body(self, messages: list[dict[str, str]], wire: dict[str, Any]) -> dict[str, Any]:
        """The JSON body ``chat.completions.create(model=..., messages=..., **wire)`` sends (also
        the ``body`` of a batch request line, `reljudge.llm.batch`)."""
        body: dict[str, Any] = {"messages": messages, "model": self.model}
        for name, value in wire.items():
            if name == "extra_body":
                body.update(value)
            else:
                body[name] = value
        return body

    async def aclose(self) -> None:
        await self._client.close()


def _provider_error(err: openai.APIError, timeout_s: float) -> ProviderError:
    guarded = guard_error(err)  # the body cap and the redirect guard, wrapped by the SDK
    if guarded is not None:
        return guarded.as_provider_error()
    if isinstance(err, openai.APITimeoutError):  # also a refused connection, with the aiohttp transport
        return transport_error(err, timeout_s)
    if isinstance(err, openai.APIConnectionError):
        return ProviderError("connection", f"connection error: {err}")
    if isinstance(err, openai.APIStatusError):
        error = classify_status(
            err.status_code, _status_message(err), retry_after_from_headers(err.response.headers)
        )
        error.rate_headers = rate_headers(err.response.headers)
        return error
    if isinstance(err, openai.APIResponseValidationError):
        return ProviderError("invalid_response", str(err))
    return ProviderError("other", str(err))


def completion_from_json(body: bytes) -> Completion:
    """The `Completion` of a chat-completions response body; ``ProviderError("invalid_response")``
    when it is not one (not JSON, no choices, a content that is not text)."""
    try:
        data = json.loads(body)
    except (ValueError, RecursionError) as err:  # RecursionError: a deeply nested body
        raise ProviderError("invalid_response", f"the response is not JSON: {type(err).__name__}") from None
    return completion_from_data(data)


logger = logging.getLogger(__name__)

#: the warning of a response with lone surrogates was given (once per process)
_surrogates_said = False


def completion_from_data(data: Any) -> Completion:
    """`completion_from_json` of a body already decoded (a batch output line's ``response.body``).
    A lone surrogate (a ``\\udc80`` escape of half a UTF-16 pair), which no cache or file can hold,
    is read as U+FFFD, with one warning."""
    global _surrogates_said
    data, replaced = replace_surrogates(data)
    if replaced and not _surrogates_said:
        _surrogates_said = True
        logger.warning("a response held %d lone surrogate(s) (invalid Unicode): read as U+FFFD", replaced)
    if not isinstance(data, dict):
        raise ProviderError("invalid_response", "the response is not a JSON object")
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices:
        raise ProviderError("invalid_response", "the response has no choices")
    choice = choices[0]
    if not isinstance(choice, dict):
        raise ProviderError("invalid_response", "the response's choice is not an object")
    message = choice.get("message")
    if message is not None and not isinstance(message, dict):
        raise ProviderError("invalid_response", "the response's message is not an object")
    message = message or {}
    text, part_refusal = content_text(message.get("content"))
    refusal = message.get("refusal")
    usage = data.get("usage")
    usage = usage if isinstance(usage, dict) else {}
    logprobs = choice.get("logprobs")
    finish = choice.get("finish_reason")
    model = data.get("model")
    prompt_tokens = clamp_tokens(usage.get("prompt_tokens"))
    completion_tokens = clamp_tokens(usage.get("completion_tokens"))
    cached, reasoning = usage_details(usage, prompt_tokens, completion_tokens)
    return Completion(
        text=text,
        finish_reason=finish if isinstance(finish, str) else None,
        prompt_tokens=prompt_tokens,
        completion_tokens=completion_tokens,
        cached_tokens=cached,
        reasoning_tokens=reasoning,
        logprobs=clean_logprobs(logprobs.get("content")) if isinstance(logprobs, dict) else None,
        refusal=refusal if isinstance(refusal, str) and refusal else part_refusal,
        model=model if isinstance(model, str) else None,
    )


#: the most dimensions an embedding may have (a bound on what a provider can make us hold)
MAX_EMBEDDING_DIM = 16384


def embeddings_from_json(body: bytes, n: int) -> tuple[list[list[float]], int]:
    """The ``n`` vectors of an embeddings response body in input order, and its prompt tokens;
    ``ProviderError("invalid_response")`` for anything else: not JSON, not ``n`` items, an index
    missing or repeated, a vector that is not a list of finite numbers, unequal or too many
    dimensions."""
    import math

    try:
        data = json.loads(body)
    except (ValueError, RecursionError) as err:
        raise ProviderError("invalid_response", f"the response is not JSON: {type(err).__name__}") from None
    items = data.get("data") if isinstance(data, dict) else None
    if not isinstance(items, list) or len(items) != n:
        got = len(items) if isinstance(items, list) else "no"
        raise ProviderError("invalid_response", f"the response has {got} embeddings for {n} inputs")
    out: list[list[float] | None] = [None] * n
    dim = None
    for position, item in enumerate(items):
        if not isinstance(item, dict):
            raise ProviderError("invalid_response", "an embedding item is not an object")
        index = item.get("index", position)
        vector = item.get("embedding")
        if (
            not isinstance(index, int)
            or isinstance(index, bool)
            or not 0 <= index < n
            or out[index] is not None
        ):
            raise ProviderError(
                "invalid_response",
                f"embedding index {str(index)[:20]!r} is missing, repeated or out of range",
            )
        if not isinstance(vector, list) or not vector or len(vector) > MAX_EMBEDDING_DIM:
            raise ProviderError("invalid_response", "an embedding is not a list of 1 to 16384 numbers")
        if isinstance(vector[0], list):
            raise ProviderError(
                "invalid_response",
                "an embedding is a list of lists (one vector per token?): the server must pool them into "
                "one vector per input (e.g. llama.cpp's mean pooling)",
            )
        if dim is not None and len(vector) != dim:
            raise ProviderError(
                "invalid_response", f"embeddings of {dim} and {len(vector)} dimensions in one response"
            )
        dim = len(vector)
        if not all(
            isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v) for v in vector
        ):
            raise ProviderError("invalid_response", "an embedding holds a value that is not a finite number")
        out[index] = [float(v) for v in vector]
    usage = data.get("usage")
    tokens = clamp_tokens(usage.get("prompt_tokens")) if isinstance(usage, dict) else 0
    return [v for v in out if v is not None], tokens


def _status_message(err: openai.APIStatusError) -> str:
    body = err.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict):
            msg = inner.get("message")
            code = inner.get("code")
            if msg:
                return f"{msg} [{code}]" if code else str(msg)
        elif isinstance(inner, str):
            return inner
    return err.message or str(err)
