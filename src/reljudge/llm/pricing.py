"""Cost of LLM calls from a small, user-overridable price table.

Prices are USD per 1M tokens ``{"input": x, "output": y, "cached_input": z}``, as listed by the
providers in 2025; they change, so check them and override with `load_prices` (YAML or JSON, same
shape) or ``ClientConfig.prices``. ``cached_input`` (optional) is the price of prompt tokens the
provider read from its prompt cache (``usage.prompt_tokens_details.cached_tokens``); without it
they cost the input price. A model matches the longest table key that its name starts with after
dropping any ``provider/`` prefix (``gpt-4o-2024-08-06`` -> ``gpt-4o``,
``anthropic/claude-3-5-haiku-latest`` -> ``claude-3-5-haiku``). An unknown model costs 0 with
``price_known=False``. Models served by the ``ollama`` backend are local: cost 0, price known,
unless the table lists them.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

from reljudge.errors import InputError, clip, shown


class Price(NamedTuple):
    input: float  # USD per 1M prompt tokens
    output: float  # USD per 1M completion tokens (reasoning tokens are completion tokens)
    cached_input: float | None = None  # USD per 1M prompt tokens read from the provider's cache


DEFAULT_PRICES: dict[str, Price] = {
    "gpt-4o": Price(2.50, 10.00, 1.25),
    "gpt-4o-mini": Price(0.15, 0.60, 0.075),
    "gpt-4.1": Price(2.00, 8.00, 0.50),
    "gpt-4.1-mini": Price(0.40, 1.60, 0.10),
    "gpt-4.1-nano": Price(0.10, 0.40, 0.025),
    "gpt-4-turbo": Price(10.00, 30.00),
    "gpt-3.5-turbo": Price(0.50, 1.50),
    "o3-mini": Price(1.10, 4.40, 0.55),
    "o4-mini": Price(1.10, 4.40, 0.275),
    "claude-3-5-sonnet": Price(3.00, 15.00, 0.30),
    "claude-3-7-sonnet": Price(3.00, 15.00, 0.30),
    "claude-sonnet-4": Price(3.00, 15.00, 0.30),
    "claude-3-5-haiku": Price(0.80, 4.00, 0.08),
    "claude-3-haiku": Price(0.25, 1.25, 0.03),
    "claude-haiku-4-5": Price(1.00, 5.00, 0.10),
}


def _to_price(name: str, value: Any, path: str | None) -> Price:
    if isinstance(value, Price):
        return value
    given: tuple[Any, ...] | None = None
    if isinstance(value, Mapping) and "input" in value and "output" in value:
        given = (value["input"], value["output"], value.get("cached_input"))
    elif isinstance(value, (list, tuple)) and len(value) in (2, 3):
        given = tuple(value)
    if given is not None:
        try:  # input and output are required, cached_input may be None
            numbers = [None if i == 2 and x is None else float(x) for i, x in enumerate(given)]
        except (TypeError, ValueError, OverflowError):
            numbers = []
        if numbers and all(x is None or (math.isfinite(x) and x >= 0) for x in numbers):
            return Price(*numbers)
    raise InputError(
        f"price of {shown(name)} must be {{input: x, output: y}} or {{input, output, cached_input}} "
        f"in USD per 1M tokens (numbers, 0 or more), got {shown(value)}",
        path,
    )


def merge_prices(
    overrides: Mapping[str, Any] | None, base: Mapping[str, Price] | None = None
) -> dict[str, Price]:
    """The default table (or ``base``) updated with ``overrides`` (validated)."""
    table = dict(DEFAULT_PRICES if base is None else base)
    for name, value in (overrides or {}).items():
        table[str(name)] = _to_price(str(name), value, None)
    return table


def load_prices(path: str | Path) -> dict[str, Price]:
    """Read a YAML or JSON price file ``{model: {input: x, output: y}}``; returns the default table
    updated with its entries."""
    from reljudge.io.yamlsafe import load_yaml, read_yaml_text

    p = Path(path)
    text = read_yaml_text(p, "price file")
    if p.suffix.lower() == ".json":
        try:
            data = json.loads(text)
        except (ValueError, RecursionError) as err:
            raise InputError(f"not valid JSON: {clip(str(err), 200)}", p) from None
    else:
        data = load_yaml(text, p)
    if not isinstance(data, Mapping):
        raise InputError("a price file must map model names to {input, output}", p)
    table = dict(DEFAULT_PRICES)
    for name, value in data.items():
        table[str(name)] = _to_price(str(name), value, str(p))
    return table


def price_table(path: str | Path | None = None) -> dict[str, Price]:
    """The price table of a job: the built-in one, updated from the ``--prices`` file when one
    is given. The one place a job's price file is read."""
    return load_prices(path) if path is not None else merge_prices(None)


def find_price(model: str, table: Mapping[str, Price]) -> Price | None:
    """Longest-prefix match of the model name (with or without its ``provider/`` prefix)."""
    candidates = [model, model.rsplit("/", 1)[-1]]
    for name in candidates:
        if name in table:
            return table[name]
    best: str | None = None
    for key in table:
        for name in candidates:
            if name.startswith(key) and (best is None or len(key) > len(best)):
                best = key
    return table[best] if best is not None else None


def cost_usd(
    backend: str, model: str, prompt_tokens: int, completion_tokens: int, table: Mapping[str, Price]
) -> tuple[float, bool]:
    """(cost in USD, price known) of one response."""
    return price_cost(find_price(model, table), backend, prompt_tokens, completion_tokens)


def price_cost(
    price: Price | None, backend: str, prompt_tokens: int, completion_tokens: int, cached_tokens: int = 0
) -> tuple[float, bool]:
    """`cost_usd` with the price already looked up (`find_price`; None: not in the table).
    ``cached_tokens``: of the prompt tokens, those read from the provider's prompt cache, priced
    at ``cached_input`` (the input price when the table has none)."""
    if price is None:
        return 0.0, is_free(backend)
    cached = min(max(cached_tokens, 0), prompt_tokens)
    cached_price = price.input if price.cached_input is None else price.cached_input
    paid = (prompt_tokens - cached) * price.input + cached * cached_price + completion_tokens * price.output
    return paid / 1_000_000, True


def is_free(backend: str) -> bool:
    """Whether a model the price table does not list costs nothing: a local one (``ollama``)."""
    return backend == "ollama"


def model_cost(
    model: str, prompt_tokens: int, completion_tokens: int, table: Mapping[str, Price]
) -> tuple[float, bool]:
    """(cost in USD, price known) of ``prompt_tokens`` + ``completion_tokens`` with a model as
    the user names it (``gpt-4o``, ``ollama/llama3.2``; see `reljudge.llm.routing`)."""
    from reljudge.llm.routing import resolve_model

    backend, name = resolve_model(model)
    return cost_usd(backend, name, prompt_tokens, completion_tokens, table)


def price_known(model: str, table: Mapping[str, Price]) -> bool:
    """Whether the cost of a model as the user names it is known (listed, or free)."""
    return model_cost(model, 0, 0, table)[1]
