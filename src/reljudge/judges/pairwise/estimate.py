"""The prompt tokens of every pair of a topic's pool, counted without rendering a prompt per pair.

`reljudge.judges.common.prompt_tokens` renders a prompt and counts ``max(1, (chars + 3) // 4) + 4``
tokens per message. A message's length is linear in the lengths of the values filled in:
``c + k_q*len(query) + k_a*len(first) + k_b*len(second)`` (the constants found by rendering the
prompt four times with probe values). Over all pairs ``i < j`` of ``n`` documents the sum of
``(T + 3) // 4`` is ``(sum(T + 3) - sum((T + 3) % 4)) / 4``: the first sum in closed form, the
second from a histogram of the residues mod 4 of the earlier documents -- O(n) per topic instead
of n(n-1)/2 renders, and exactly the same count.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

#: (query, first, second) -> the prompt's variables
Variables = Callable[[str, str, str], dict[str, str]]


def _content(message: Any) -> str:
    return str(message.get("content", "")) if isinstance(message, dict) else str(message)


def message_terms(prompt: Any, variables: Variables) -> list[tuple[int, int, int, int]]:
    """(c, k_query, k_first, k_second) of each message of ``prompt``."""

    def lengths(q: str, a: str, b: str) -> list[int]:
        return [len(_content(m)) for m in prompt.render(**variables(q, a, b))]

    base = lengths("", "", "")
    dq, da, db = lengths("x", "", ""), lengths("", "x", ""), lengths("", "", "x")
    return [(c, q - c, a - c, b - c) for c, q, a, b in zip(base, dq, da, db, strict=True)]


def all_pairs_tokens(
    terms: list[tuple[int, int, int, int]], query_chars: int, doc_chars: Sequence[int]
) -> int:
    """The sum over all pairs ``i < j`` of ``doc_chars`` (documents in pool order, each
    non-empty) of the prompt tokens of the prompt with (query, document i, document j)."""
    n = len(doc_chars)
    pairs = n * (n - 1) // 2
    if not pairs:
        return 0
    total = 4 * len(terms) * pairs  # the 4 tokens of each message
    for c, kq, ka, kb in terms:
        s = c + kq * query_chars + 3
        if ka == 0 and kb == 0:  # a message that does not depend on the documents
            total += pairs * max(1, s // 4)
            continue
        # sum of T + 3 over i < j: document i is first in n - 1 - i pairs, second in i pairs
        linear = pairs * s + sum(length * (ka * (n - 1 - i) + kb * i) for i, length in enumerate(doc_chars))
        residues = 0
        seen = [0, 0, 0, 0]  # earlier documents by (k_first * length) % 4
        for length in doc_chars:
            tail = s + kb * length
            residues += sum(count * ((tail + r) % 4) for r, count in enumerate(seen) if count)
            seen[(ka * length) % 4] += 1
        total += (linear - residues) // 4  # T >= 1 here: max(1, ...) changes nothing
    return total
