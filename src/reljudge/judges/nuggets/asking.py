"""Asking for a nugget stage's answer with validation: bounded retries of unreadable answers (new
requests at a small temperature with their own seeds, never the cached answer that could not be
read), and for batched label lists a fallback to one call per item."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from reljudge.judges.base import run_all
from reljudge.judges.call_records import chat_failure, without_usage
from reljudge.judges.reading import clip, read_text
from reljudge.prompts.parsing import Parsed, parse_label_list
from reljudge.records import Provenance, Usage

if TYPE_CHECKING:
    from reljudge.judges.context import JudgeContext
    from reljudge.llm import ChatResult
    from reljudge.prompts import PromptTemplate

RETRY_TEMPERATURE = 0.2
#: answer lengths sent as ``max_tokens`` when neither the judge nor the run sets one
CREATE_BUDGET = 4096
LABEL_BUDGET = 2048


@dataclass(frozen=True)
class Reader:
    """How one kind of answer is read: ``parse`` the text, then ``accept`` the parse result as a
    value (or say why not: ``(None, error)``)."""

    parse: Callable[[str], Parsed]
    accept: Callable[[Parsed], tuple[Any, str | None]]


@dataclass
class Asked:
    """The outcome of one question to the LLM, after bounded retries of unreadable answers."""

    result: ChatResult
    value: Any
    status: str
    how: str | None
    error: str | None
    usage: Usage


@dataclass
class ItemLabel:
    """One item's label from a batched answer (or its own call), with the record fields."""

    status: str
    label: str | None
    how: str | None
    error: str | None
    raw: str | None
    provenance: Provenance


def attempt_params(max_tokens: int | None, attempt: int) -> dict[str, Any]:
    """The request parameters of attempt ``attempt`` (0 first): a retry of an unreadable answer is
    a new request at temperature `RETRY_TEMPERATURE` with its own seed, not the same answer."""
    params: dict[str, Any] = {} if max_tokens is None else {"max_tokens": max_tokens}
    if attempt > 0:  # a new request, not the cached answer that could not be read
        params.update(temperature=RETRY_TEMPERATURE, seed=attempt)
    return params


async def ask(
    ctx: JudgeContext,
    prompt: PromptTemplate,
    variables: dict[str, str],
    read: Reader,
    *,
    retries: int,
    max_tokens: int | None,
    budget: int = LABEL_BUDGET,
) -> Asked:
    """Ask once, and up to ``retries`` times more while the answer cannot be read; an unreadable
    answer is dropped from the response cache."""
    usage = Usage()
    asked: Asked | None = None
    for attempt in range(retries + 1):
        result = await ctx.chat(prompt, variables, budget=budget, **attempt_params(max_tokens, attempt))
        usage = usage + result.usage
        failed = chat_failure(result)
        if failed is not None:  # the client already retried transient errors
            return Asked(result, None, failed[0], None, failed[1], usage)
        parsed = read_text(result.text, read.parse, prompt=result.prompt, template=prompt).parsed
        value, error = read.accept(parsed)
        if value is not None:
            how = parsed.how if attempt == 0 else f"{parsed.how} (retry {attempt})"
            return Asked(result, value, "ok", how, None, usage)
        ctx.client.forget(result)  # an unreadable answer is never replayed from the cache
        status = "refused" if parsed.how == "refusal" else "unparsed"
        asked = Asked(result, None, status, parsed.how, f"{error} after {attempt + 1} attempt(s)", usage)
    assert asked is not None
    return asked


async def label_items(
    ctx: JudgeContext,
    prompt: PromptTemplate,
    variables: Callable[[Sequence[str]], dict[str, str]],
    items: Sequence[str],
    vocabulary: tuple[str, ...],
    *,
    retries: int,
    max_tokens: int | None,
) -> list[ItemLabel]:
    """One label per item from a batched call; per-item calls when the batch answer cannot
    be read after the retries (or was refused)."""
    batch = await ask(
        ctx,
        prompt,
        variables(items),
        label_reader(vocabulary, len(items)),
        retries=retries,
        max_tokens=max_tokens,
    )
    provenance = ctx.provenance(prompt, batch.result).model_copy(update={"usage": batch.usage})
    if batch.status == "ok":
        return [
            ItemLabel(
                "ok",
                label,
                batch.how,
                None,
                clip(batch.result.text),
                provenance if i == 0 else without_usage(provenance),
            )
            for i, label in enumerate(batch.value)
        ]
    if batch.status == "api_error" or len(items) == 1:
        return [
            ItemLabel(
                batch.status,
                None,
                batch.how,
                batch.error,
                clip(batch.result.text),
                provenance if i == 0 else without_usage(provenance),
            )
            for i in range(len(items))
        ]
    singles = await run_all(
        [
            ask(ctx, prompt, variables([item]), label_reader(vocabulary, 1), retries=0, max_tokens=max_tokens)
            for item in items
        ]
    )
    out = []
    for i, single in enumerate(singles):
        usage = single.usage + batch.usage if i == 0 else single.usage
        single_prov = ctx.provenance(prompt, single.result).model_copy(update={"usage": usage})
        how = f"per-item fallback: {single.how}" if single.how else "per-item fallback"
        error = None if single.status == "ok" else f"batch: {batch.error}; alone: {single.error}"
        label = single.value[0] if single.status == "ok" else None
        out.append(ItemLabel(single.status, label, how, error, clip(single.result.text), single_prov))
    return out


def label_reader(vocabulary: tuple[str, ...], n: int) -> Reader:
    def accept(parsed: Parsed) -> tuple[Any, str | None]:
        if parsed.status != "ok" or parsed.items is None:
            return None, f"no list of {n} labels from {list(vocabulary)} in the answer ({parsed.how})"
        labels = list(parsed.items)
        if len(labels) != n:
            return None, f"expected {n} labels, got {len(labels)}"
        return labels, None

    return Reader(lambda text: parse_label_list(text, vocabulary, n), accept)
