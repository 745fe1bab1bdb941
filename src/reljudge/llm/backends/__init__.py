"""Backend adapters: one small class per provider library, all behind `Backend`.

`BACKENDS` is the registry: a backend name (the model-string prefix, see `reljudge.llm.routing`)
and where its adapter lives. `create_backend` imports the adapter, and its provider library, only
when that backend is used. A new backend is one module and one line in `BACKENDS`.
"""

from __future__ import annotations

import importlib

from reljudge.llm.backends.base import Backend

#: backend name -> "module:Class" of its adapter
BACKENDS: dict[str, str] = {
    "openai": "reljudge.llm.backends.openai:OpenAIBackend",
    "ollama": "reljudge.llm.backends.ollama:OllamaBackend",
    "litellm": "reljudge.llm.backends.litellm:LiteLLMBackend",
}


def create_backend(
    name: str,
    model: str,
    *,
    base_url: str | None,
    api_key: str | None,
    timeout_s: float,
    concurrency: int | None = None,
) -> Backend:
    """A backend; ``concurrency`` (the most requests in flight) sizes the HTTP connection pool of
    the adapters that keep one."""
    target = BACKENDS.get(name)
    if target is None:
        raise ValueError(f"unknown backend {name!r} (expected {', '.join(BACKENDS)})")
    module, _, class_name = target.partition(":")
    adapter: type[Backend] = getattr(importlib.import_module(module), class_name)
    return adapter(model, base_url=base_url, api_key=api_key, timeout_s=timeout_s, concurrency=concurrency)


__all__ = ["BACKENDS", "Backend", "create_backend"]
