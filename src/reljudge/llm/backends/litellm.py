"""Any provider LiteLLM supports, through ``litellm.acompletion`` (imported lazily: it is slow to
import). The model after the ``litellm/`` prefix is passed as is (``anthropic/claude-...``,
``openai/gpt-4o``, ``ollama_chat/llama3.2``); ``base_url`` becomes ``api_base``. LiteLLM's own
retries are disabled. LiteLLM's remote price map is not fetched (offline).

Params: the generic decoding params (temperature, seed, max_tokens, logprobs, top_logprobs) that
the provider does not take, by ``litellm.get_supported_openai_params``, are not sent (Anthropic
takes no ``seed``: sending it fails every call) and are left out of the effective params recorded
in provenance. Params given explicitly as extra params are sent as given.

Errors: a missing or refused credential is ``auth``; a 200 response LiteLLM cannot read (not JSON,
no choices, a content that is not text, LiteLLM's "Invalid response object") is
``invalid_response``, not retried; the message kept is its first line, at most 300 characters
(LiteLLM puts whole tracebacks into some).

Bounds: LiteLLM has its own HTTP clients, one kind per provider, so the body cap and the redirect
guard of the openai and ollama backends do not apply here; the client still caps the answer text
(`MAX_ANSWER_CHARS`), the error text, and clamps token counts.
"""

from __future__ import annotations

import os
from typing import Any

from reljudge.llm.backends.base import (
    Backend,
    clamp_tokens,
    classify_status,
    clean_logprobs,
    content_text,
    usage_details,
)
from reljudge.llm.retry import retry_after_from_headers
from reljudge.llm.types import Completion, ProviderError

#: the generic params dropped for a provider that does not support them
GENERIC_PARAMS = ("temperature", "seed", "max_tokens", "logprobs", "top_logprobs")
MAX_MESSAGE_CHARS = 300
_CREDENTIAL_HINTS = (
    "missing credentials",
    "api_key client option must be set",
    "missing api key",
    "no key is set",
    "api key not found",
    "no api key",
)
_MALFORMED_HINTS = (
    "invalid response object",
    "unable to get json response",
    "'choices'",
    "expecting value",
    "jsondecodeerror",
    "validation error",
)


def _import_litellm() -> Any:
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    litellm.suppress_debug_info = True
    return litellm


#: the LiteLLM providers whose batches go through `reljudge.llm.batch.litellm_service` (its
#: docstring says why these and not the others)
BATCH_PROVIDERS = ("openai", "litellm_proxy")
_REFUSED = {
    "azure": "LiteLLM reads an Azure output file whole into memory (no bounded download)",
    "vertex_ai": "LiteLLM rewrites Vertex AI request files (their lines are not the synchronous requests)",
    "bedrock": "LiteLLM rewrites Bedrock request files (their lines are not the synchronous requests)",
    "hosted_vllm": "LiteLLM runs hosted_vllm batches itself, in this process",
}


def batch_provider(model: str) -> tuple[str, str]:
    """(LiteLLM provider, the provider's model name) of a LiteLLM model string
    (``openai/gpt-4o-mini`` -> ``("openai", "gpt-4o-mini")``); ValueError for a provider whose
    batches this adapter does not send, with the reason."""
    litellm = _import_litellm()
    try:
        name, provider, _, _ = litellm.get_llm_provider(model)
    except Exception as err:
        raise ValueError(f"LiteLLM does not know the provider of {model!r}: {str(err)[:200]}") from None
    if provider not in BATCH_PROVIDERS:
        why = _REFUSED.get(provider, "LiteLLM has no OpenAI-format batch API for it")
        raise ValueError(
            f"batch mode through LiteLLM takes the providers {', '.join(BATCH_PROVIDERS)}, not {provider!r} "
            f"({why}); run it without --batch"
        )
    return provider, name


class LiteLLMBackend(Backend):
    name = "litellm"

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None,
        api_key: str | None,
        timeout_s: float,
        concurrency: int | None = None,
    ) -> None:
        super().__init__(model, base_url=base_url, api_key=api_key, timeout_s=timeout_s)
        self._api_key = api_key
        self._litellm = _import_litellm()
        self.unsupported = self._unsupported_generic_params()
        self._batch_model: str | None = None  # the provider's model name in a batch line

    def _unsupported_generic_params(self) -> frozenset[str]:
        """The generic params this provider does not take (empty when LiteLLM does not know)."""
        try:
            model, provider, _, _ = self._litellm.get_llm_provider(self.model)
            supported = self._litellm.get_supported_openai_params(model=model, custom_llm_provider=provider)
        except Exception:  # an unknown provider: send everything, as before
            return frozenset()
        if not supported:
            return frozenset()
        return frozenset(p for p in GENERIC_PARAMS if p not in supported)

    def adapt_params(self, params: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        wire, effective = super().adapt_params(params)
        for name in self.unsupported:
            wire.pop(name, None)
            effective.pop(name, None)
        return wire, effective

    def batch_body(self, messages: list[dict[str, str]], wire: dict[str, Any]) -> dict[str, Any]:
        """The body of this request in an OpenAI batch line, for the providers whose batches go
        through `reljudge.llm.batch.litellm_service` (ValueError for the others): the provider's
        model name (without LiteLLM's ``<provider>/``), the messages and the params sent."""
        name = self._batch_model
        if name is None:  # once: LiteLLM's provider lookup costs more than the rest of the line
            _, name = batch_provider(self.model)
            self._batch_model = name
        body: dict[str, Any] = {"messages": messages, "model": name}
        for key, value in wire.items():
            if key == "extra_body":
                body.update(value)
            else:
                body[key] = value
        return body

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
        text, part_refusal = content_text(getattr(message, "content", None) if message is not None else None)
        finish = getattr(choice, "finish_reason", None)
        model = getattr(resp, "model", None)
        prompt_tokens = clamp_tokens(getattr(usage, "prompt_tokens", 0)) if usage else 0
        completion_tokens = clamp_tokens(getattr(usage, "completion_tokens", 0)) if usage else 0
        cached, reasoning = usage_details(usage, prompt_tokens, completion_tokens)
        return Completion(
            text=text,
            finish_reason=finish if isinstance(finish, str) else None,
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            cached_tokens=cached,
            reasoning_tokens=reasoning,
            logprobs=clean_logprobs(logprobs),
            refusal=part_refusal,
            model=model if isinstance(model, str) else None,
        )


def short_message(text: str, limit: int = MAX_MESSAGE_CHARS) -> str:
    """The first non-empty line of ``text`` without a traceback LiteLLM glued to it, at most
    ``limit`` characters."""
    text = text.split("Traceback (most recent call last)", 1)[0]
    for line in text.splitlines():
        if line.strip():
            line = line.strip()
            return line if len(line) <= limit else line[: limit - 3] + "..."
    return ""


def _classify(litellm: Any, err: Exception, timeout_s: float) -> ProviderError:
    exc = litellm.exceptions
    full = str(getattr(err, "message", None) or err)
    message = short_message(full) or type(err).__name__
    low = full.lower()
    headers = getattr(err, "litellm_response_headers", None) or getattr(
        getattr(err, "response", None), "headers", None
    )
    retry_after = retry_after_from_headers(headers)
    status = getattr(err, "status_code", None)
    status = status if isinstance(status, int) else None
    if isinstance(err, exc.Timeout):
        return ProviderError("timeout", f"no answer within {timeout_s:g} s")
    if isinstance(err, exc.AuthenticationError) or (
        status in (None, 500) and any(h in low for h in _CREDENTIAL_HINTS)
    ):
        # litellm reports a missing key of some providers as an HTTP 500: nothing to retry
        return ProviderError("auth", message, status_code=None if status in (None, 500) else status)
    if isinstance(err, exc.ContextWindowExceededError):
        return ProviderError("context_length", message, status_code=status)
    if isinstance(err, exc.ContentPolicyViolationError):
        return ProviderError("content_filter", message, status_code=status)
    if isinstance(err, exc.RateLimitError):
        return ProviderError("rate_limit", message, status_code=429, retry_after=retry_after)
    if status in (None, 200, 500) and any(h in low for h in _MALFORMED_HINTS):
        # a 200 response litellm could not read, which it reports as a 500 (with a traceback)
        return ProviderError("invalid_response", message)
    if isinstance(err, exc.APIConnectionError) and status in (None, 500):
        # litellm reports transport failures as APIConnectionError with status 500
        return ProviderError("connection", message, status_code=None)
    if status is not None:
        return classify_status(status, message, retry_after)
    return ProviderError("other", f"{type(err).__name__}: {message}")
