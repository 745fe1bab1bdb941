"""An OpenAI-compatible embeddings endpoint as the encoder of ``judge fd`` (``--encoder
openai/MODEL``, e.g. ``openai/text-embedding-3-small``; ``--base-url`` for a local server).

The requests go through the project's own LLM client (`reljudge.llm.LLMClient.embed`): its key
handling (``OPENAI_API_KEY`` or ``api_key``; secrets redacted from errors), rate limits
(``rpm``/``tpm``), timeout, bounded response size and retry policy. The vectors are cached by
`reljudge.vectors.embedding_cache.TextEmbeddings` (the same disk cache as a local model), not by
the response cache. A final provider failure is an `InputError` naming the model.
`EndpointEncoder` is a `reljudge.vectors.embedding_source.TextEncoder`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import numpy as np

from reljudge.errors import InputError

PREFIX = "openai/"


def is_endpoint_model(name: str) -> bool:
    """Whether ``--encoder NAME`` names an embeddings endpoint (``openai/MODEL``)."""
    return name.startswith(PREFIX) and len(name) > len(PREFIX)


class EndpointEncoder:
    """Embeds texts through the embeddings endpoint of an OpenAI-compatible server."""

    pooling = "the provider's"
    max_length = None  # the provider's own limit

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        rpm: float | None = None,
        tpm: float | None = None,
        timeout_s: float = 60.0,
        max_attempts: int = 6,
    ) -> None:
        from reljudge.llm import ClientConfig, LLMClient

        if not is_endpoint_model(model):
            raise InputError(f"an embeddings endpoint model is named {PREFIX}MODEL, got {model!r}")
        config = ClientConfig(
            model=model,
            base_url=base_url,
            api_key=api_key,
            rpm=rpm,
            tpm=tpm,
            timeout_s=timeout_s,
            max_attempts=max_attempts,
            cache_path=None,
            use_cache=False,
            concurrency=1,
        )
        self.name = model
        self.location = "embeddings endpoint " + (config.base_url or "of the provider")
        self.loaded = True
        self.load_seconds = 0.0
        self._client = LLMClient(config)
        self._loop = asyncio.new_event_loop()

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        from reljudge.llm import ProviderError

        try:
            vectors = self._loop.run_until_complete(self._client.embed(list(texts)))
        except ProviderError as err:
            raise InputError(f"embeddings endpoint for {self.name!r} failed: {err}") from None
        return np.asarray(vectors, dtype=np.float32).reshape(len(texts), -1)

    @property
    def usage(self):
        return self._client.usage

    def close(self) -> None:
        if not self._loop.is_closed():
            self._loop.run_until_complete(self._client.aclose())
            self._loop.close()
