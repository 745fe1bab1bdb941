"""Model strings select the backend.

The rule (first path segment is the backend when it names one):

=================================  ========  ==========================
model string                       backend   model sent to the provider
=================================  ========  ==========================
``gpt-4o`` (no known prefix)       openai    ``gpt-4o``
``openai/gpt-4o``                  openai    ``gpt-4o``
``ollama/llama3.2``                ollama    ``llama3.2``
``litellm/anthropic/claude-x``     litellm   ``anthropic/claude-x``
=================================  ========  ==========================

Only the first ``/`` is significant, so ``openai/meta-llama/Llama-3-8B`` sends
``meta-llama/Llama-3-8B`` to an OpenAI-compatible server (vLLM, OpenRouter, ...), and a model
name that itself contains ``/`` but no known prefix (``Qwen/Qwen2.5-7B``) goes to openai as is.
"""

from __future__ import annotations

from typing import NamedTuple

BACKENDS: tuple[str, ...] = ("openai", "ollama", "litellm")


class ResolvedModel(NamedTuple):
    backend: str
    model: str


def resolve_model(model: str) -> ResolvedModel:
    """Split a model string into (backend, provider model name); see the module docstring."""
    text = model.strip()
    if not text:
        raise ValueError("empty model name")
    prefix, sep, rest = text.partition("/")
    if sep and prefix.lower() in BACKENDS:
        if not rest.strip():
            raise ValueError(f"model string {model!r} names the backend {prefix!r} but no model")
        return ResolvedModel(prefix.lower(), rest.strip())
    return ResolvedModel("openai", text)
