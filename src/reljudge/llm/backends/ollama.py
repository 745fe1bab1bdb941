"""Ollama's native API (/api/chat) through the official `ollama` package (``AsyncClient``).

Generic params map to Ollama ``options``: temperature, seed, ``max_tokens`` -> ``num_predict``;
``logprobs``/``top_logprobs`` are top-level request fields (servers older than 0.12 ignore them);
``extra_params`` keys ``format``, ``keep_alive`` and ``think`` are top-level, all others go into
``options``. ``base_url`` is the Ollama host (default ``$OLLAMA_HOST`` or http://127.0.0.1:11434).

The library validates the response with its pydantic model: a body that does not fit (a content
that is not a string, a token count that is not an integer, such as ``1.5`` or ``1e400``) is an
``invalid_response``; counts that fit but make no sense (negative, 1e30) are clamped
(`clamp_tokens`). Ollama's native API is spoken by Ollama itself, so a body of the wrong types means
a broken server rather than a dialect worth reading (the openai backend is lenient about usage).
HTTP guards (`reljudge.llm.backends._http`): the body is read up to `MAX_RESPONSE_BYTES` (decoded),
and redirects are followed (explicitly, ``follow_redirects=True``) only within the same origin.
"""

from __future__ import annotations

import contextvars
from typing import Any

import httpx
import ollama

from reljudge.llm.backends._http import event_hooks, guard_error
from reljudge.llm.backends.base import (
    Backend,
    clamp_tokens,
    classify_status,
    clean_logprobs,
    http_transport,
    is_aiohttp_error,
    pool_limits,
    transport_error,
)
from reljudge.llm.retry import parse_retry_after
from reljudge.llm.types import Completion, ProviderError

_TOP_LEVEL = frozenset({"format", "keep_alive", "think"})
_OPTION_NAMES = {"max_tokens": "num_predict"}
# The ollama library drops response headers on errors; an httpx hook keeps Retry-After per task.
_retry_after: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "reljudge_ollama_retry_after", default=None
)


async def _remember_retry_after(response: httpx.Response) -> None:
    if response.status_code >= 400:
        _retry_after.set(response.headers.get("retry-after"))


class OllamaBackend(Backend):
    name = "ollama"

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
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else None
        limits = pool_limits(concurrency)
        extra: dict[str, Any] = {"limits": limits} if limits is not None else {}
        chosen = http_transport(transport, concurrency)
        if chosen is not None:
            extra = {"transport": chosen}
        self._client = ollama.AsyncClient(
            host=base_url,
            timeout=timeout_s,
            headers=headers,
            follow_redirects=True,  # same origin only: the response hook refuses the others
            event_hooks=event_hooks([_remember_retry_after]),
            **extra,
        )

    def adapt_params(self, params: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        _, effective = super().adapt_params(params)
        wire: dict[str, Any] = {}
        options: dict[str, Any] = {}
        for key, value in effective.items():
            if key in ("logprobs", "top_logprobs") or key in _TOP_LEVEL:
                wire[key] = value
            elif key == "options" and isinstance(value, dict):
                options.update(value)
            else:
                options[_OPTION_NAMES.get(key, key)] = value
        if options:
            wire["options"] = options
        return wire, effective

    async def complete(self, messages: list[dict[str, str]], wire: dict[str, Any]) -> Completion:
        _retry_after.set(None)
        try:
            resp = await self._client.chat(model=self.model, messages=messages, stream=False, **wire)
        except ollama.ResponseError as err:
            raise classify_status(
                err.status_code, str(err.error), parse_retry_after(_retry_after.get())
            ) from err
        except Exception as err:
            raise _provider_error(err, self.timeout_s) from err
        message = resp.message
        text = message.content if message is not None else None
        if text is not None and not isinstance(text, str):  # the library's model says str
            raise ProviderError("invalid_response", f"the answer's content is {type(text).__name__}")
        return Completion(
            text=text or "",
            finish_reason=resp.done_reason if isinstance(resp.done_reason, str) else None,
            prompt_tokens=clamp_tokens(resp.prompt_eval_count),
            completion_tokens=clamp_tokens(resp.eval_count),
            logprobs=clean_logprobs(getattr(resp, "logprobs", None)),
            model=resp.model,
        )

    async def aclose(self) -> None:
        await self._client.close()


def _provider_error(err: Exception, timeout_s: float) -> ProviderError:
    guarded = guard_error(err)  # the body cap and the redirect guard
    if guarded is not None:
        return guarded.as_provider_error()
    if isinstance(err, httpx.TimeoutException):  # also a refused connection, with the aiohttp transport
        return transport_error(err, timeout_s)
    if isinstance(err, (ConnectionError, httpx.TransportError)):
        return ProviderError("connection", f"connection error: {err}")
    if isinstance(err, (ValueError, TypeError, RecursionError)):  # a malformed response body
        return ProviderError("invalid_response", _first_line(str(err)))
    if is_aiohttp_error(err):  # an aiohttp error the transport does not translate
        return ProviderError("connection", f"connection error: {err}")
    return ProviderError("other", f"unexpected {type(err).__name__}: {_first_line(str(err))}")


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else text
