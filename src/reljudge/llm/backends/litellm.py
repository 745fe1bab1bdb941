"""Any provider LiteLLM supports, through ``litellm.acompletion`` (imported lazily: it is slow to
import). The model after the ``litellm/`` prefix is passed as is (``anthropic/claude-...``,
``openai/gpt-4o``, ``ollama_chat/llama3.2``); ``base_url`` becomes ``api_base``. LiteLLM's own
retries are disabled. LiteLLM's remote price map is not fetched (offline).
"""

from __future__ import annotations

import os
from typing import Any

from reljudge.llm.backends.base import Backend, classify_status, clean_logprobs
from reljudge.llm.retry import retry_after_from_headers
from reljudge.llm.types import Completion, ProviderError


def _import_litellm() -> Any:
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    litellm.suppress_debug_info = True
    return litellm


class LiteLLMBackend(Backend):
    name = "litellm"

    def __init__(self, model: str, *, base_url: str | None, api_key: str | None, timeout_s: float) -> None:
        super().__init__(model, base_url=base_url, api_key=api_key, timeout_s=timeout_s)
        self._api_key = api_key
        self._litellm = _import_litellm()

    async def complete(self, messages: list[dict[str, str]], wire: dict[str, Any]) -> Completion:
        litellm = self._litellm
        kwargs: dict[str, Any] = dict(wire)
        if self.base_url:
            kwargs["api_base"] = self.base_url
        if self._api_key:
            kwargs["api_key"] = self._api_key
        try:
            resp = await litellm.acompletion(
                model=self.model,
                messages=messages,
                timeout=self.timeout_s,
                num_retries=0,
                max_retries=0,
                **kwargs,
            )
        except Exception as err:
            raise _classify(litellm, err, self.timeout_s) from err
        choices = getattr(resp, "choices", None)
        if not choices:
            raise ProviderError("invalid_response", "the response has no choices")
        choice = choices[0]
        message = getattr(choice, "message", None)
        usage = getattr(resp, "usage", None)
        logprobs = getattr(choice, "logprobs", None)
        if logprobs is not None and not isinstance(logprobs, list):
            logprobs = (
                logprobs.get("content") if isinstance(logprobs, dict) else getattr(logprobs, "content", None)
            )
        return Completion(
            text=(getattr(message, "content", None) if message is not None else None) or "",
            finish_reason=getattr(choice, "finish_reason", None),
            prompt_tokens=(getattr(usage, "prompt_tokens", 0) or 0) if usage else 0,
            completion_tokens=(getattr(usage, "completion_tokens", 0) or 0) if usage else 0,
            logprobs=clean_logprobs(logprobs),
            model=getattr(resp, "model", None),
        )


def _classify(litellm: Any, err: Exception, timeout_s: float) -> ProviderError:
    exc = litellm.exceptions
    message = str(getattr(err, "message", None) or err)
    headers = getattr(err, "litellm_response_headers", None) or getattr(
        getattr(err, "response", None), "headers", None
    )
    retry_after = retry_after_from_headers(headers)
    if isinstance(err, exc.Timeout):
        return ProviderError("timeout", f"no answer within {timeout_s:g} s")
    if isinstance(err, exc.ContextWindowExceededError):
        return ProviderError("context_length", message, status_code=getattr(err, "status_code", None))
    if isinstance(err, exc.ContentPolicyViolationError):
        return ProviderError("content_filter", message, status_code=getattr(err, "status_code", None))
    if isinstance(err, exc.RateLimitError):
        return ProviderError("rate_limit", message, status_code=429, retry_after=retry_after)
    status = getattr(err, "status_code", None)
    if isinstance(err, exc.APIConnectionError) and (status is None or status == 500):
        # litellm reports transport failures as APIConnectionError with status 500
        return ProviderError("connection", message, status_code=None)
    if isinstance(status, int):
        return classify_status(status, message, retry_after)
    return ProviderError("other", f"{type(err).__name__}: {message}")
