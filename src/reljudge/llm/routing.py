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

A job resolves its model string once (`reljudge.run.prepare`): the `ResolvedModel` travels with
the job to the client, the prices and the batch path, and says what the backend can do
(`ResolvedModel.capabilities`).
"""

from __future__ import annotations

from dataclasses import dataclass

from reljudge.llm.backends import BACKENDS, DEFAULT_BACKEND, Capabilities


@dataclass(frozen=True)
class ResolvedModel:
    """A model string, resolved: its backend, the model name sent to the provider, and the
    string as it was named (prices given by the user match it)."""

    backend: str
    model: str
    named: str

    @property
    def capabilities(self) -> Capabilities:
        """What the backend can do (`reljudge.llm.backends.capabilities`)."""
        return BACKENDS[self.backend]


def resolve_model(model: str) -> ResolvedModel:
    """Split a model string into its backend and provider model name; see the module docstring."""
    text = model.strip()
    if not text:
        raise ValueError("empty model name")
    prefix, sep, rest = text.partition("/")
    if sep and prefix.lower() in BACKENDS:
        if not rest.strip():
            raise ValueError(f"model string {model!r} names the backend {prefix!r} but no model")
        return ResolvedModel(prefix.lower(), rest.strip(), model)
    if sep:
        near = [b for b in BACKENDS if edit_distance(prefix.lower(), b, limit=2) <= 2]
        if near:
            raise ValueError(
                f"unknown backend prefix {prefix!r} (did you mean {near[0]!r}?); "
                f"write {DEFAULT_BACKEND}/{text} to send the name as is"
            )
    return ResolvedModel(DEFAULT_BACKEND, text, model)


def model_string(backend: str, model: str) -> str:
    """The model string that selects ``backend`` with the provider name ``model`` (the default
    backend's names go without a prefix)."""
    return f"{backend}/{model}" if backend != DEFAULT_BACKEND else model


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
