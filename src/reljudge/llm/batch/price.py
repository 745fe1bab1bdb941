"""What a batch request costs: the one place that says so (the pricing code may re-point it to
a table's own batch prices, e.g. litellm's ``input_cost_per_token_batches``)."""

from __future__ import annotations

from typing import Any

from reljudge.llm.pricing import Price

#: a batch costs this share of the synchronous price when the table has no batch price
BATCH_DISCOUNT = 0.5


def batch_price(price: Price | None) -> Price | None:
    """The price of a request sent through a batch: the entry's own batch prices when it has
    them (``batch_input`` / ``batch_output`` attributes), otherwise half the synchronous price
    (OpenAI's and Anthropic's batch discount). None stays None (not in the table)."""
    if price is None:
        return None
    own_input: Any = getattr(price, "batch_input", None)
    own_output: Any = getattr(price, "batch_output", None)
    if own_input is not None and own_output is not None:
        return Price(float(own_input), float(own_output), None)
    cached = None if price.cached_input is None else price.cached_input * BATCH_DISCOUNT
    return Price(price.input * BATCH_DISCOUNT, price.output * BATCH_DISCOUNT, cached)
