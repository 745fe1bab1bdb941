"""Model prices from litellm's maintained model cost map, read offline.

The installed litellm package ships the map as ``litellm/model_prices_and_context_window_backup.json``
(prices in USD per token, one entry per model key). `litellm_map` reads that file straight from
the package directory -- litellm itself is never imported (its import takes seconds and, by
default, fetches the newest map from the network) -- once per process, at most
`MAX_MAP_BYTES`, keeping only the entries of text models (modes ``chat``, ``completion``,
``responses``) whose input and output prices are finite numbers from 0 to `MAX_USD_PER_TOKEN`.

Fields used (USD per token, turned into USD per 1M tokens): ``input_cost_per_token``,
``output_cost_per_token``, ``cache_read_input_token_cost`` (cached input),
``input_cost_per_token_batches`` and ``output_cost_per_token_batches`` (the provider's Batch API).

When the file is missing, too large or malformed, the map is empty, one warning says why, and
every model is unpriced (a local ``ollama`` model stays free); ``--prices FILE`` still prices
them. There is no hand-kept fallback table: litellm is a required dependency, and a stale
table would price runs wrongly without saying so.
"""

from __future__ import annotations

import functools
import json
import logging
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

logger = logging.getLogger(__name__)

MAP_FILE = "model_prices_and_context_window_backup.json"
#: the largest map read (litellm 1.106's is 3 MB)
MAX_MAP_BYTES = 64 * 1024 * 1024
#: a per-token price above this (1 USD a token) is taken for garbage and the entry skipped
MAX_USD_PER_TOKEN = 1.0
#: the modes of text models a judge can call
TEXT_MODES = frozenset({"chat", "completion", "responses"})
#: litellm field -> our field (per 1M tokens)
FIELDS = {
    "input_cost_per_token": "input",
    "output_cost_per_token": "output",
    "cache_read_input_token_cost": "cached_input",
    "input_cost_per_token_batches": "batch_input",
    "output_cost_per_token_batches": "batch_output",
}


class Price(NamedTuple):
    """A model's prices in USD per 1M tokens."""

    input: float  # prompt tokens
    output: float  # completion tokens (reasoning tokens are completion tokens)
    cached_input: float | None = None  # prompt tokens read from the provider's cache
    batch_input: float | None = None  # prompt tokens sent through the provider's Batch API
    batch_output: float | None = None  # completion tokens of a Batch API answer


@dataclass(frozen=True)
class MapEntry:
    key: str  # the map's key (``gpt-4o``, ``azure/gpt-4o``, ``ollama/llama3``)
    provider: str  # its ``litellm_provider`` (``openai``, ``anthropic``, ``bedrock_converse``)
    price: Price


@dataclass(frozen=True)
class PriceMap:
    """The usable entries of litellm's map, where it came from, and what went wrong (if anything)."""

    entries: Mapping[str, MapEntry] = field(default_factory=dict)
    version: str | None = None  # the litellm package's version
    path: str | None = None
    problem: str | None = None  # why the map is empty
    #: (backend, model name) -> what `reljudge.llm.pricing.map_match` found for it (a sweep asks
    #: for the same few models in every cell; the entries never change)
    matches: dict[tuple[str, str], tuple[Any, int]] = field(default_factory=dict, compare=False, repr=False)

    @property
    def source(self) -> str:
        """``litellm 1.106.2 model cost map`` (the name prices from it are quoted with)."""
        return f"litellm {self.version or '(version unknown)'} model cost map"


def per_million(value: Any) -> float | None:
    """USD per token -> USD per 1M tokens; None for anything but a finite number in range."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if not (math.isfinite(value) and 0 <= value <= MAX_USD_PER_TOKEN):
        return None
    return float(f"{value * 1_000_000:.10g}")  # 2.5e-06 -> 2.5, not 2.4999999999999996


def parse_map(data: Any) -> dict[str, MapEntry]:
    """The priced text-model entries of a decoded map (anything else is skipped)."""
    entries: dict[str, MapEntry] = {}
    if not isinstance(data, Mapping):
        return entries
    for key, value in data.items():
        if not isinstance(key, str) or not isinstance(value, Mapping) or key == "sample_spec":
            continue
        mode = value.get("mode")
        if mode is not None and mode not in TEXT_MODES:
            continue
        numbers = {ours: per_million(value.get(theirs)) for theirs, ours in FIELDS.items()}
        input_price, output_price = numbers.pop("input"), numbers.pop("output")
        if input_price is None or output_price is None:
            continue
        provider = value.get("litellm_provider")
        price = Price(input_price, output_price, **numbers)
        entries[key] = MapEntry(key, provider if isinstance(provider, str) else "", price)
    return entries


def map_file() -> tuple[Path | None, str | None]:
    """The map file of the installed litellm package and the package's version (without importing it)."""
    import importlib.metadata
    import importlib.util

    try:
        spec = importlib.util.find_spec("litellm")  # finds the package, does not import it
    except (ImportError, ValueError):
        spec = None
    try:
        version: str | None = importlib.metadata.version("litellm")
    except importlib.metadata.PackageNotFoundError:
        version = None
    for location in (spec.submodule_search_locations or []) if spec is not None else []:
        return Path(location) / MAP_FILE, version
    return None, version


def read_map(path: Path | None, version: str | None) -> PriceMap:
    """The `PriceMap` of a map file (empty, with its ``problem``, when it cannot be used)."""
    if path is None:
        return PriceMap(version=version, problem="the litellm package is not installed")
    try:
        with path.open("rb") as handle:
            raw = handle.read(MAX_MAP_BYTES + 1)
    except OSError as err:
        return PriceMap(version=version, path=str(path), problem=f"cannot read {path}: {err.strerror or err}")
    if len(raw) > MAX_MAP_BYTES:
        return PriceMap(
            version=version, path=str(path), problem=f"{path} is larger than {MAX_MAP_BYTES:,} bytes"
        )
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError) as err:
        return PriceMap(
            version=version, path=str(path), problem=f"{path} is not valid JSON: {str(err)[:200]}"
        )
    entries = parse_map(data)
    if not entries:
        return PriceMap(version=version, path=str(path), problem=f"{path} holds no priced text model")
    return PriceMap(entries, version, str(path))


@functools.lru_cache(maxsize=1)
def litellm_map() -> PriceMap:
    """litellm's model cost map (read once per process; see the module docstring)."""
    prices = read_map(*map_file())
    if prices.problem is not None:
        logger.warning(
            "no model prices: %s; every model but a local one is unpriced (give prices with --prices FILE)",
            prices.problem,
        )
    return prices
