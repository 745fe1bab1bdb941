"""Ollama's native API (/api/chat) through the official `ollama` package (``AsyncClient``).

Generic params map to Ollama ``options``: temperature, seed, ``max_tokens`` -> ``num_predict``;
``logprobs``/``top_logprobs`` are top-level request fields (servers older than 0.12 ignore them);
``extra_params`` keys ``format``, ``keep_alive`` and ``think`` are top-level, all others go into
``options``. ``base_url`` is the Ollama host (default ``$OLLAMA_HOST`` or http://127.0.0.1:11434).
"""

from __future__ import annotations

import contextvars
from typing import Any

import httpx
import ollama

from reljudge.llm.backends.base import (
    Backend,
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
            event_hooks={"response": [_remember_retry_after]},
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
        except httpx.TimeoutException as err:  # also a refused connection, with the aiohttp transport
            raise transport_error(err, self.timeout_s) from err
        except (ConnectionError, httpx.TransportError) as err:
            raise ProviderError("connection", f"connection error: {err}") from err
        except (ValueError, TypeError) as err:  # malformed response body
            raise ProviderError("invalid_response", str(err)) from err
        except Exception as err:
            if is_aiohttp_error(err):  # an aiohttp error the transport does not translate
                raise ProviderError("connection", f"connection error: {err}") from err
            raise
        message = resp.message
        return Completion(
            text=(message.content if message is not None else None) or "",
            finish_reason=resp.done_reason,
            prompt_tokens=resp.prompt_eval_count or 0,
            completion_tokens=resp.eval_count or 0,
            logprobs=clean_logprobs(getattr(resp, "logprobs", None)),
            model=resp.model,
        )

    async def aclose(self) -> None:
        await self._client.close()
