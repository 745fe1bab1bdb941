"""Backend adapters: one small class per provider library, all behind `Backend`.

`BACKENDS` is the registry: a backend name (the model-string prefix, see `reljudge.llm.routing`)
and its `Capabilities` (`reljudge.llm.backends.capabilities`): where its adapter lives, which
provider library it needs, whether it is free, its constrained-output mechanism, its batch
service, the hints after a fatal error. Callers ask these, never a backend's name.
`create_backend` imports the adapter, and its provider library, only when that backend is used. A
new backend is one adapter module, one `Capabilities` class and one line in `BACKENDS`.
"""

from __future__ import annotations

import importlib

from reljudge.llm.backends.base import Backend
from reljudge.llm.backends.capabilities import (
    Capabilities,
    LiteLLMCapabilities,
    OllamaCapabilities,
    OpenAICapabilities,
)

#: backend name -> its capabilities
BACKENDS: dict[str, Capabilities] = {
    "openai": OpenAICapabilities(),
    "ollama": OllamaCapabilities(),
    "litellm": LiteLLMCapabilities(),
}
#: the backend of a model string that names none (``gpt-4o``, ``Qwen/Qwen2.5-7B``)
DEFAULT_BACKEND = "openai"


def capabilities(name: str) -> Capabilities:
    """The capabilities of the backend ``name`` (ValueError for an unknown one)."""
    found = BACKENDS.get(name)
    if found is None:
        raise ValueError(f"unknown backend {name!r} (expected {', '.join(BACKENDS)})")
    return found


def sdk_libraries() -> tuple[str, ...]:
    """The provider libraries the backends import (a run's manifest records their versions)."""
    return tuple(dict.fromkeys(b.sdk for b in BACKENDS.values()))


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
    the adapters that keep one. ValueError for an unknown backend, or one whose provider library
    is not installed."""
    backend = capabilities(name)
    module, _, class_name = backend.adapter.partition(":")
    try:
        adapter: type[Backend] = getattr(importlib.import_module(module), class_name)
    except ModuleNotFoundError as err:
        if err.name != backend.sdk:
            raise
        raise ValueError(
            f"the {name} backend needs the {backend.sdk} package, which is not installed "
            f"(pip install {backend.sdk})"
        ) from None
    return adapter(model, base_url=base_url, api_key=api_key, timeout_s=timeout_s, concurrency=concurrency)


__all__ = [
    "BACKENDS",
    "DEFAULT_BACKEND",
    "Backend",
    "Capabilities",
    "capabilities",
    "create_backend",
    "sdk_libraries",
]
