"""The LLM layer: one async chat interface over the openai, ollama and litellm backends.

>>> from reljudge.llm import LLMClient, ClientConfig
>>> async with LLMClient(ClientConfig(model="ollama/llama3.2")) as client:   # doctest: +SKIP
...     res = await client.chat([{"role": "user", "content": "Hi"}])

See `reljudge.llm.routing` for how model strings select a backend, `reljudge.llm.client` for the
call pipeline (cache, limits, retries, fail fast: `ProviderAbort`) and `reljudge.llm.pricing` for costs.
"""

from reljudge.llm.cache import CacheStats, ResponseCache
from reljudge.llm.client import ClientStats, LLMClient, chat_sync
from reljudge.llm.pricing import Price, PriceTable, load_prices
from reljudge.llm.routing import ResolvedModel, resolve_model
from reljudge.llm.types import (
    ChatResult,
    ClientConfig,
    Message,
    ProviderAbort,
    ProviderError,
    default_cache_path,
)
from reljudge.records import messages_sha256

__all__ = [
    "CacheStats",
    "ChatResult",
    "ClientConfig",
    "ClientStats",
    "LLMClient",
    "Message",
    "Price",
    "PriceTable",
    "ProviderAbort",
    "ProviderError",
    "ResolvedModel",
    "ResponseCache",
    "chat_sync",
    "default_cache_path",
    "load_prices",
    "messages_sha256",
    "resolve_model",
]
