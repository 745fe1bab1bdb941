"""Backend adapters: one small class per provider library, all behind `Backend`.

`create_backend(name, ...)` imports the provider library only when that backend is used.
"""

from __future__ import annotations

from typing import Any

from reljudge.llm.backends.base import Backend


def create_backend(
    name: str,
    model: str,
    *,
    base_url: str | None,
    api_key: str | None,
    timeout_s: float,
    concurrency: int | None = None,
) -> Backend:
    """A backend; ``concurrency`` (the most requests in flight) sizes the HTTP connection pool
    of the openai and ollama backends."""
    kwargs: dict[str, Any] = {"base_url": base_url, "api_key": api_key, "timeout_s": timeout_s}
    if name == "openai":
        from reljudge.llm.backends.openai import OpenAIBackend

        return OpenAIBackend(model, concurrency=concurrency, **kwargs)
    if name == "ollama":
        from reljudge.llm.backends.ollama import OllamaBackend

        return OllamaBackend(model, concurrency=concurrency, **kwargs)
    if name == "litellm":
        from reljudge.llm.backends.litellm import LiteLLMBackend

        return LiteLLMBackend(model, **kwargs)
    raise ValueError(f"unknown backend {name!r} (expected openai, ollama or litellm)")


__all__ = ["Backend", "create_backend"]
