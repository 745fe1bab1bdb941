"""Prompt tokens counted without rendering a prompt per item, for dry-runs.

`prompt_tokens` renders a prompt and counts ``max(1, (chars + 3) // 4) + 4``
tokens per message. A message's length is linear in the lengths of the values filled in:
``c + k_1*len(value_1) + ... + k_m*len(value_m)`` (`linear_terms` finds the constants by rendering
the prompt once with empty values and once per value with one character). Then:

- `item_tokens`: one item's tokens from its values' lengths, without rendering
  (`columns_tokens`: the sum over many items);
- `all_pairs_tokens`: the sum over every pair ``i < j`` of a topic's documents. The sum of
  ``(T + 3) // 4`` is ``(sum(T + 3) - sum((T + 3) % 4)) / 4``: the first sum in closed form, the
  second from a histogram of the residues mod 4 of the earlier documents -- O(n) per topic
  instead of n(n-1)/2 renders.

Both give exactly the count of rendering each prompt (tests compare them), as long as the
judge's ``variables`` passes the texts through unchanged (the judges check that before using
them).

With the model's tokenizer (`counting_with` a `reljudge.llm.tokens.TokenCounter` that has one;
``judge run --dry-run`` sets it for OpenAI models), pointwise judges and pairwise judges with
given or all pairs count tokens instead:
`tokenizer_terms` gives each message's tokens with empty values (its overhead included) and how
many times each value appears in it; an item's tokens are those plus each value's own tokens
(`TextTokens`: each distinct text tokenized once). BPE merges across a value's borders make this
differ from tokenizing each rendered prompt by a few tokens a prompt (measured in the README).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

from reljudge.judges.base import estimate_tokens

if TYPE_CHECKING:
    from reljudge.llm.tokens import TokenCounter
    from reljudge.prompts import PromptTemplate

#: (c, k_1, ..., k_m) of one message
Terms = tuple[int, ...]


def _content(message: Any) -> str:
    return str(message.get("content", "")) if isinstance(message, dict) else str(message)


def linear_terms(prompt: Any, variables: Callable[..., dict[str, str]], arity: int) -> list[Terms]:
    """(c, k_1, ..., k_arity) of each message of ``prompt`` filled by ``variables(v_1, ...)``."""

    def lengths(i: int | None) -> list[int]:
        values = ["x" if j == i else "" for j in range(arity)]
        return [len(_content(m)) for m in prompt.render(**variables(*values))]

    base = lengths(None)
    probes = [lengths(i) for i in range(arity)]
    return [(c, *(probe[m] - c for probe in probes)) for m, c in enumerate(base)]


def item_tokens(terms: list[Terms], lengths: Sequence[int]) -> int:
    """The prompt tokens of one item whose values have these lengths."""
    total = 0
    for c, *ks in terms:
        chars = c + sum(k * n for k, n in zip(ks, lengths, strict=True))
        total += max(1, (chars + 3) // 4) + 4
    return total


def columns_tokens(terms: list[Terms], columns: Sequence[Sequence[int]]) -> int:
    """The sum of `item_tokens` over many items, given as columns of lengths (one column per
    value; vectorised with numpy)."""
    import numpy as np

    if not columns or not len(columns[0]):
        return 0
    cols = [np.asarray(col, dtype=np.int64) for col in columns]
    total = 0
    for c, *ks in terms:
        chars = np.full(len(cols[0]), c, dtype=np.int64)
        for k, col in zip(ks, cols, strict=True):
            if k:
                chars += k * col
        total += int(np.maximum(1, (chars + 3) // 4).sum()) + 4 * len(chars)
    return total


def all_pairs_tokens(terms: list[Terms], query_chars: int, doc_chars: Sequence[int]) -> int:
    """The sum over all pairs ``i < j`` of ``doc_chars`` (documents in pool order, each
    non-empty) of the tokens of the prompt with (query, document i, document j)."""
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


#: the tokenizer of the model a dry-run estimates for (None: ~4 characters a token)
_TOKENIZER: ContextVar[TokenCounter | None] = ContextVar("reljudge_estimate_tokenizer", default=None)


@contextlib.contextmanager
def counting_with(counter: TokenCounter | None) -> Iterator[None]:
    """Within the block, judges' estimates count tokens with ``counter`` when it has the model's
    tokenizer (``counter.exact``); else they keep ~4 characters a token."""
    token = _TOKENIZER.set(counter if counter is not None and counter.exact else None)
    try:
        yield
    finally:
        _TOKENIZER.reset(token)


def active_tokenizer() -> TokenCounter | None:
    """The tokenizer `counting_with` set, or None."""
    return _TOKENIZER.get()


def prompt_tokens(prompt: PromptTemplate, variables: Mapping[str, str]) -> int:
    """Estimated prompt tokens of ``prompt`` rendered with ``variables``: with the model's
    tokenizer inside `counting_with` (a dry-run for a model that has one), else about four
    characters a token."""
    messages = prompt.render(**variables)
    counter = active_tokenizer()
    if counter is not None:
        return int(counter.messages(messages))
    return sum(estimate_tokens(_message_text(m)) + 4 for m in messages)


def _message_text(message: Any) -> str:
    if isinstance(message, Mapping):
        return str(message.get("content", ""))
    return str(getattr(message, "content", message))


def tokenizer_terms(
    prompt: Any, variables: Callable[..., dict[str, str]], arity: int, counter: TokenCounter
) -> list[Terms]:
    """(t, k_1, ..., k_arity) of each message: ``t`` its tokens with empty values (with the
    message's overhead, the first message also the answer's priming), ``k_i`` how many times
    value ``i`` appears in it."""
    from reljudge.llm.tokens import REPLY_PRIMING_TOKENS

    chars = linear_terms(prompt, variables, arity)
    empty = prompt.render(**variables(*([""] * arity)))
    terms: list[Terms] = []
    for m, (message, (_, *ks)) in enumerate(zip(empty, chars, strict=True)):
        base = counter.messages([message]) - REPLY_PRIMING_TOKENS
        terms.append((base + (REPLY_PRIMING_TOKENS if m == 0 else 0), *ks))
    return terms


class TextTokens:
    """The tokens of texts by key (a docid, a qid), each text tokenized once."""

    def __init__(self, counter: TokenCounter) -> None:
        self.counter = counter
        self._known: dict[Any, int] = {}

    def __call__(self, key: Any, text: str) -> int:
        found = self._known.get(key)
        if found is None:
            found = self._known[key] = self.counter.text(text) if text else 0
        return found


def tokenizer_item_tokens(terms: list[Terms], counts: Sequence[int]) -> int:
    """The prompt tokens of one item whose values have these token counts (`tokenizer_terms`)."""
    return sum(t + sum(k * n for k, n in zip(ks, counts, strict=True)) for t, *ks in terms)


def tokenizer_sum_tokens(terms: list[Terms], items: int, sums: Sequence[int]) -> int:
    """The prompt tokens of ``items`` items whose values' token counts add up to ``sums``: the
    sum of `tokenizer_item_tokens` over them, as the terms are linear in the counts."""
    return sum(items * t + sum(k * n for k, n in zip(ks, sums, strict=True)) for t, *ks in terms)


def tokenizer_all_pairs_tokens(terms: list[Terms], query_tokens: int, doc_tokens: Sequence[int]) -> int:
    """`all_pairs_tokens` with the tokenizer (`tokenizer_terms`): the sum over all pairs ``i < j``
    of ``doc_tokens`` (in pool order) of the prompt with (query, document i, document j)."""
    n = len(doc_tokens)
    pairs = n * (n - 1) // 2
    total = 0
    for t, kq, ka, kb in terms:
        # document i is first in n - 1 - i pairs, second in i pairs
        total += pairs * (t + kq * query_tokens)
        total += sum(tokens * (ka * (n - 1 - i) + kb * i) for i, tokens in enumerate(doc_tokens))
    return total if pairs else 0
