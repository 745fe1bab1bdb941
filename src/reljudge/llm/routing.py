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

A first segment within edit distance 2 of a backend name (``ollam/llama3.2``, ``opneai/gpt-4o``) is
taken for a typo and refused (ValueError) before anything is sent; ``openai/ollam/llama3.2`` sends
such a name as is.
"""

from __future__ import annotations

from typing import NamedTuple

from reljudge.llm.backends import BACKENDS


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
    if sep:
        near = [b for b in BACKENDS if edit_distance(prefix.lower(), b, limit=2) <= 2]
        if near:
            raise ValueError(
                f"unknown backend prefix {prefix!r} (did you mean {near[0]!r}?); "
                f"write openai/{text} to send the name as is"
            )
    return ResolvedModel("openai", text)


def edit_distance(a: str, b: str, limit: int | None = None) -> int:
    """Levenshtein distance of two strings (``limit + 1`` as soon as it is known to exceed ``limit``)."""
    if limit is not None and abs(len(a) - len(b)) > limit:
        return limit + 1
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        if limit is not None and min(current) > limit:
            return limit + 1
        previous = current
    return previous[-1]
