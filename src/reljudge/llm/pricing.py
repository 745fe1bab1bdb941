"""Cost of LLM calls: litellm's model cost map, with the user's prices on top.

Prices are USD per 1M tokens (`Price`): ``input``, ``output``, ``cached_input`` (prompt tokens
the provider read from its prompt cache, ``usage.prompt_tokens_details.cached_tokens``; without
it they cost the input price), ``batch_input`` and ``batch_output`` (the provider's Batch API;
without them a batch costs the synchronous price, an upper bound).

Where a price comes from (`PriceTable.quote`, which says so in `Quote.source`):

1. **litellm's model cost map** (`reljudge.llm.price_map`), read offline from the installed
   litellm package. A model as the user names it (``gpt-4o``, ``openai/gpt-4.1-mini``,
   ``litellm/anthropic/claude-haiku-4-5``, ``ollama/llama3``) is looked up by its provider and
   name: ``ollama/x`` is provider ``ollama``; a name ``provider/x`` whose first segment is one of
   the map's providers (``anthropic/``, ``azure/``, ``bedrock/``, ``vertex_ai/``, ...) is looked
   up among that provider's keys (``azure/gpt-4o``, or a bare key listed under that
   ``litellm_provider``); a bare name (``gpt-4o``, ``openai/gpt-4o`` through the openai backend)
   among the map's bare keys. The exact key wins, else the longest key the name starts with,
   followed by ``-``, ``:`` or ``@`` (``gpt-4o-2024-08-06`` has its own key;
   ``gpt-4o-mini-2099-01-01`` -> ``gpt-4o-mini``).
2. **The user's file** (``--prices FILE``, YAML or JSON ``{model: {input, output, cached_input,
   batch_input, batch_output}}`` per 1M tokens, or ``[input, output]``) overrides the map field by
   field: an entry may give only some fields for a model the map lists (``gpt-4o: {input: 2}``),
   and must give ``input`` and ``output`` for one it does not. Its keys match the model as named,
   without its backend prefix, or its last segment: exact, else the longest key followed by
   ``-``, ``:`` or ``@``; a map key that matches more of the name wins over a user's prefix
   (the user's ``gpt-4o`` does not price ``gpt-4o-mini``).

A model neither lists costs 0 with ``price_known=False``, except a local one (a backend whose
capabilities say ``free``: ``ollama``): free, price known.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reljudge.errors import InputError, clip, shown
from reljudge.llm.price_map import Price, PriceMap, litellm_map

if TYPE_CHECKING:
    from reljudge.llm.routing import ResolvedModel

__all__ = [
    "Price",
    "PriceTable",
    "Quote",
    "batch_cost",
    "batch_price",
    "cost_usd",
    "is_free",
    "load_prices",
    "merge_prices",
    "model_cost",
    "price_cost",
    "price_known",
    "price_table",
]

#: the fields of a price entry, the first two required for a model the map does not list
PRICE_FIELDS = ("input", "output", "cached_input", "batch_input", "batch_output")
#: what may follow a key that a model name starts with (``gpt-4o`` -> ``gpt-4o-2024-08-06``)
KEY_BOUNDARY = ("-", ":", "@")


@dataclass(frozen=True)
class Quote:
    """A model's price (None: unknown), where it came from, and whether the model is local (free)."""

    price: Price | None
    source: str
    free: bool = False
    #: the map key of ANOTHER model whose price this is (the model's name only starts with it:
    #: ``gpt-4o-mnii`` -> ``gpt-4o``); None when the model has its own entry or no map price
    stand_in: str | None = None

    @property
    def known(self) -> bool:
        return self.price is not None or self.free

    def as_dict(self) -> dict[str, Any]:
        """For the manifest and the dry-run's JSON: the source and the prices per 1M tokens."""
        out: dict[str, Any] = {"source": self.source, "known": self.known}
        if self.stand_in is not None:
            out["priced_as"] = self.stand_in
        if self.price is not None:
            out.update({k: v for k, v in self.price._asdict().items() if v is not None})
        return out


@dataclass(frozen=True)
class PriceTable:
    """The prices of a job: litellm's map (``builtin``; None: read it, `litellm_map`) with the
    user's entries (``overrides``: model key -> partial price fields, validated) on top."""

    overrides: Mapping[str, Mapping[str, float | None]] = field(default_factory=dict)
    path: str | None = None  # the user's price file
    builtin: PriceMap | None = None

    @classmethod
    def of(cls, value: PriceTable | Mapping[str, Any] | None) -> PriceTable:
        """A table from a table, a mapping of user entries (validated here) or None."""
        if isinstance(value, PriceTable):
            return value
        return cls({str(k): _entry(str(k), v, None) for k, v in (value or {}).items()})

    def quote(self, model: str | ResolvedModel) -> Quote:
        """The price of a model as the user names it, or as a job resolved it (see the module
        docstring). A user entry without ``input``/``output`` for a model the map does not list is
        an `InputError`."""
        resolved = _resolved(model)
        backend, name, model = resolved.backend, resolved.model, resolved.named
        table = self.builtin if self.builtin is not None else litellm_map()
        found, matched = map_match(table, backend, name)
        stand_in = found.key if found is not None and matched < len(_bare(table, backend, name)) else None
        user_key, exact = _user_key(self.overrides, [model, name, name.rsplit("/", 1)[-1]])
        if user_key is not None and not exact and found is not None and matched > len(user_key):
            user_key = None  # the map's key is the closer one (gpt-4o-mini, not the user's gpt-4o)
        if user_key is None:
            if found is None:
                free = is_free(backend)
                return Quote(None, "local model: free" if free else f"not in the {table.source}", free)
            return Quote(found.price, f"{table.source}: {found.key}", stand_in=stand_in)
        given = self.overrides[user_key]
        where = f"--prices {self.path}" if self.path else "the given prices"
        fields = dict(found.price._asdict()) if found is not None else {}
        fields.update(given)
        if fields.get("input") is None or fields.get("output") is None:
            raise InputError(
                f"price of {shown(user_key)}: {model} is not in the {table.source}, so its entry "
                "needs both input and output",
                self.path,
            )
        if found is None:
            return Quote(Price(**fields), f"{where}: {user_key}")
        return Quote(
            Price(**fields),
            f"{table.source}: {found.key}, with {', '.join(given)} from {where}",
            stand_in=None if set(given) >= {"input", "output"} else stand_in,
        )

    def __getitem__(self, model: str | ResolvedModel) -> Price:
        """The price of ``model`` (KeyError when unknown)."""
        price = self.quote(model).price
        if price is None:
            raise KeyError(model)
        return price


def _resolved(model: str | ResolvedModel) -> ResolvedModel:
    """``model`` resolved (a string that names no backend rightly is priced as named, by the
    default backend)."""
    from reljudge.llm.routing import ResolvedModel, resolve_model

    if isinstance(model, ResolvedModel):
        return model
    try:
        return resolve_model(model)
    except ValueError:
        from reljudge.llm.backends import DEFAULT_BACKEND

        return ResolvedModel(DEFAULT_BACKEND, model, model)


def map_entry(table: PriceMap, backend: str, name: str) -> Any:
    """The map entry of a provider model name (see the module docstring), or None."""
    return map_match(table, backend, name)[0]


def map_match(table: PriceMap, backend: str, name: str) -> tuple[Any, int]:
    """(the map entry of a provider model name or None, the length of the name its key matched);
    found once per table and name (`PriceMap.matches`)."""
    found = table.matches.get((backend, name))
    if found is None:
        found = table.matches[(backend, name)] = _map_match(table, backend, name)
    return found


def close_names(table: PriceMap, backend: str, name: str, n: int = 1) -> list[str]:
    """The map's model names closest to a name the map does not list as such (difflib), for a
    "did you mean": among the keys a model of the same backend and provider is looked up by."""
    import difflib

    bare = _bare(table, backend, name)
    candidates = [candidate for candidate, _ in _candidates(table, backend, name)]
    return difflib.get_close_matches(bare, candidates, n=n, cutoff=0.8)


def _scope(table: PriceMap, backend: str, name: str) -> tuple[str | None, str]:
    """(the map provider a name is looked up under, or None for the bare keys; the name without it)."""
    provider, bare = _price_provider(backend), name
    head, sep, rest = name.partition("/")
    if provider is None and sep and rest and _is_provider(table, head):
        provider, bare = head, rest
    return provider, bare


def _bare(table: PriceMap, backend: str, name: str) -> str:
    return _scope(table, backend, name)[1]


def _candidates(table: PriceMap, backend: str, name: str) -> Any:
    """(the name a key stands for within the name's scope, its entry), for every key in scope."""
    provider, _ = _scope(table, backend, name)
    for key, entry in table.entries.items():
        if provider is None:
            if "/" in key:
                continue
            candidate = key
        elif key.startswith(provider + "/"):
            candidate = key[len(provider) + 1 :]
        elif "/" not in key and _same_provider(entry.provider, provider):
            candidate = key
        else:
            continue
        yield candidate, entry


def _map_match(table: PriceMap, backend: str, name: str) -> tuple[Any, int]:
    bare = _bare(table, backend, name)
    best = None
    for candidate, entry in _candidates(table, backend, name):
        if candidate == bare:
            return entry, len(bare)
        if bare.startswith(candidate) and bare[len(candidate)] in KEY_BOUNDARY:
            if best is None or len(candidate) > best[0]:
                best = (len(candidate), entry)
    return (best[1], best[0]) if best is not None else (None, 0)


def _price_provider(backend: str) -> str | None:
    """The provider of litellm's map that prices a backend's models (None: by the name)."""
    from reljudge.llm.backends import BACKENDS

    found = BACKENDS.get(backend)
    return found.price_provider if found is not None else None


def _same_provider(listed: str, provider: str) -> bool:
    """``bedrock_converse`` and ``vertex_ai-anthropic_models`` are ``bedrock`` and ``vertex_ai``."""
    return listed == provider or listed.startswith((provider + "_", provider + "-"))


def _is_provider(table: PriceMap, name: str) -> bool:
    prefix = name + "/"
    return any(
        key.startswith(prefix) or _same_provider(entry.provider, name) for key, entry in table.entries.items()
    )


def _user_key(overrides: Mapping[str, Any], candidates: list[str]) -> tuple[str | None, bool]:
    """(the user's key for a model, whether it is exact): exact, else the longest key one of the
    candidates starts with, followed by ``-``, ``:`` or ``@``."""
    for name in candidates:
        if name in overrides:
            return name, True
    best: str | None = None
    for key in overrides:
        for name in candidates:
            if (
                name.startswith(key)
                and name[len(key)] in KEY_BOUNDARY
                and (best is None or len(key) > len(best))
            ):
                best = key
    return best, False


def _entry(name: str, value: Any, path: str | None) -> dict[str, float | None]:
    """A user's price entry, validated: the fields it gives (input and output may be left out)."""
    given: dict[str, Any] | None = None
    if isinstance(value, Price):
        given = value._asdict()
    elif isinstance(value, Mapping) and value and set(value) <= set(PRICE_FIELDS):
        given = dict(value)
    elif isinstance(value, (list, tuple)) and len(value) in (2, 3):
        given = dict(zip(PRICE_FIELDS, value, strict=False))
    if given is not None:
        out: dict[str, float | None] = {}
        for key, x in given.items():
            if x is None and key not in ("input", "output"):
                out[key] = None
                continue
            try:
                number = float(x)
            except (TypeError, ValueError, OverflowError):
                break
            if isinstance(x, bool) or not (math.isfinite(number) and number >= 0):
                break
            out[key] = number
        else:
            return out
    raise InputError(
        f"price of {shown(name)} must be {{input: x, output: y}} in USD per 1M tokens (numbers, 0 or "
        f"more; also cached_input, batch_input, batch_output), got {shown(value)}",
        path,
    )


def merge_prices(overrides: Mapping[str, Any] | None) -> PriceTable:
    """litellm's map with ``overrides`` (validated) on top."""
    return PriceTable.of(overrides)


def load_prices(path: str | Path) -> PriceTable:
    """Read a YAML or JSON price file (see the module docstring) over litellm's map."""
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
    return PriceTable({str(k): _entry(str(k), v, str(p)) for k, v in data.items()}, str(p))


def price_table(path: str | Path | None = None) -> PriceTable:
    """The price table of a job: litellm's map, updated from the ``--prices`` file when one is
    given. The one place a job's price file is read."""
    return load_prices(path) if path is not None else PriceTable()


def cost_usd(
    backend: str, model: str, prompt_tokens: int, completion_tokens: int, table: PriceTable
) -> tuple[float, bool]:
    """(cost in USD, price known) of one response of ``backend``'s ``model``."""
    from reljudge.llm.routing import ResolvedModel, model_string

    quote = table.quote(ResolvedModel(backend, model, model_string(backend, model)))
    return price_cost(quote.price, backend, prompt_tokens, completion_tokens)


def price_cost(
    price: Price | None, backend: str, prompt_tokens: int, completion_tokens: int, cached_tokens: int = 0
) -> tuple[float, bool]:
    """(cost in USD, price known) of one synchronous response, with the price already looked up
    (None: unknown). ``cached_tokens``: of the prompt tokens, those read from the provider's
    prompt cache, priced at ``cached_input`` (the input price when there is none)."""
    if price is None:
        return 0.0, is_free(backend)
    cached = min(max(cached_tokens, 0), prompt_tokens)
    cached_price = price.input if price.cached_input is None else price.cached_input
    paid = (prompt_tokens - cached) * price.input + cached * cached_price + completion_tokens * price.output
    return paid / 1_000_000, True


def batch_price(price: Price | None) -> Price | None:
    """The price of a request sent through the provider's Batch API, as a plain `Price`:
    ``batch_input`` / ``batch_output`` where the table lists them, else the synchronous price (an
    upper bound: a cap never underestimates); cached prompt tokens at the lower of
    ``cached_input`` and the batch input price. None stays None (not in the table)."""
    if price is None:
        return None
    batch_in = price.input if price.batch_input is None else price.batch_input
    batch_out = price.output if price.batch_output is None else price.batch_output
    cached_in = batch_in if price.cached_input is None else min(price.cached_input, batch_in)
    return Price(batch_in, batch_out, cached_in)


def batch_cost(
    price: Price | None, backend: str, prompt_tokens: int, completion_tokens: int, cached_tokens: int = 0
) -> tuple[float, bool]:
    """(cost in USD, price known) of tokens sent through the provider's Batch API, at
    `batch_price`."""
    return price_cost(batch_price(price), backend, prompt_tokens, completion_tokens, cached_tokens)


def has_batch_price(price: Price | None) -> bool:
    """Whether the price lists the provider's batch prices (else a batch is priced synchronously)."""
    return price is not None and price.batch_input is not None and price.batch_output is not None


def is_free(backend: str) -> bool:
    """Whether a model no price lists costs nothing: a local one (the backend's
    `reljudge.llm.backends.capabilities.Capabilities.free`)."""
    from reljudge.llm.backends import BACKENDS

    found = BACKENDS.get(backend)
    return found is not None and found.free


def model_cost(
    model: str | ResolvedModel,
    prompt_tokens: int,
    completion_tokens: int,
    table: PriceTable,
    *,
    batch: bool = False,
) -> tuple[float, bool]:
    """(cost in USD, price known) of ``prompt_tokens`` + ``completion_tokens`` with a model as
    the user names it (``gpt-4o``, ``ollama/llama3.2``; see `reljudge.llm.routing`) or as a job
    resolved it, synchronously or (``batch``) through the provider's Batch API."""
    from reljudge.llm.routing import resolve_model

    resolved = model if not isinstance(model, str) else resolve_model(model)
    price = table.quote(resolved).price
    return (batch_cost if batch else price_cost)(price, resolved.backend, prompt_tokens, completion_tokens)


def price_known(model: str | ResolvedModel, table: PriceTable) -> bool:
    """Whether the cost of a model as the user names it (or as a job resolved it) is known
    (listed, or free)."""
    return table.quote(model).known
