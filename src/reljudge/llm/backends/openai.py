"""OpenAI and every OpenAI-compatible server (vLLM, OpenRouter, Azure-compatible proxies, llama.cpp,
Ollama's /v1, ...) through the official `openai` package (``AsyncOpenAI``, SDK retries disabled).

Requests go through the SDK's client (``AsyncOpenAI.post`` on ``/chat/completions``, parsed into
the SDK's ``ChatCompletion``): the same HTTP client, headers, error classes and response model as
``chat.completions.create``, without its per-call transformation of the typed request arguments
(about a millisecond of CPU per call), since the body built here is already plain JSON.

Quirks: reasoning models (o1/o3/o4/gpt-5 families) take ``max_completion_tokens`` instead of
``max_tokens`` and accept only the default temperature, so temperature is not sent and is recorded
as None.
"""

from __future__ import annotations

import os
import re
from typing import Any

import openai
from openai.types.chat import ChatCompletion

from reljudge.llm.backends.base import (
    Backend,
    classify_status,
    clean_logprobs,
    http_transport,
    pool_limits,
    transport_error,
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
                "/chat/completions", body=self._body(messages, wire), cast_to=ChatCompletion
            )
        except openai.APITimeoutError as err:  # also a refused connection, with the aiohttp transport
            raise transport_error(err, self.timeout_s) from err
        except openai.APIConnectionError as err:
            raise ProviderError("connection", f"connection error: {err}") from err
        except openai.APIStatusError as err:
            raise classify_status(
                err.status_code, _status_message(err), retry_after_from_headers(err.response.headers)
            ) from err
        except openai.APIResponseValidationError as err:
            raise ProviderError("invalid_response", str(err)) from err
        except openai.OpenAIError as err:
            raise ProviderError("other", str(err)) from err
        if not getattr(resp, "choices", None):
            raise ProviderError("invalid_response", "the response has no choices")
        choice = resp.choices[0]
        message = choice.message
        usage = resp.usage
        return Completion(
            text=(message.content if message is not None else None) or "",
            finish_reason=choice.finish_reason,
            prompt_tokens=(usage.prompt_tokens or 0) if usage else 0,
            completion_tokens=(usage.completion_tokens or 0) if usage else 0,
            logprobs=clean_logprobs(choice.logprobs.content) if choice.logprobs is not None else None,
            refusal=getattr(message, "refusal", None) if message is not None else None,
            model=resp.model,
        )

    def _body(self, messages: list[dict[str, str]], wire: dict[str, Any]) -> dict[str, Any]:
        """The JSON body ``chat.completions.create(model=..., messages=..., **wire)`` sends."""
        body: dict[str, Any] = {"messages": messages, "model": self.model}
        for name, value in wire.items():
            if name == "extra_body":
                body.update(value)
            else:
                body[name] = value
        return body

    async def aclose(self) -> None:
        await self._client.close()


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
