"""``--dry-run``: the calls, tokens and cost a job would spend from scratch, and its text."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from reljudge.run.config import RunConfig
from reljudge.run.pool import Pool

if TYPE_CHECKING:
    from reljudge.judges.base import Judge, JudgeInputs
    from reljudge.llm.pricing import PriceTable
    from reljudge.llm.routing import ResolvedModel


#: how prompt tokens are counted without the model's tokenizer (`reljudge.llm.tokens`)
FALLBACK_COUNT = "~4 characters a token"
#: ``--confirm-above``'s default: on a terminal, a job estimated above this many USD asks first
CONFIRM_ABOVE_USD = 5.0
#: on a terminal, a pairwise job with all pairs making more calls than this asks first (whatever the price)
CONFIRM_PAIRWISE_CALLS = 10_000


class NotConfirmed(Exception):
    """The user answered no to ``Proceed? [y/N]``: nothing was called and nothing was written."""


def confirmation_reason(est: Mapping[str, Any], above: float = CONFIRM_ABOVE_USD) -> str | None:
    """Why a job with this estimate asks before it starts (``judge run`` on a terminal without
    ``--yes``), None when it does not: its cost above ``above`` USD, or pairwise with all pairs
    making more than `CONFIRM_PAIRWISE_CALLS` calls."""
    cost = est.get("cost_usd", 0.0)
    if est.get("price_known", True) and cost > above:
        return f"the estimated cost ${cost:.2f} is above --confirm-above ${above:.2f}"
    if est.get("all_pairs") and est.get("calls", 0) > CONFIRM_PAIRWISE_CALLS:
        return (
            f"pairwise with all pairs makes {est['calls']:,} calls (more than {CONFIRM_PAIRWISE_CALLS:,}); "
            "-o pairs=sampler asks far fewer"
        )
    return None


def estimate_job(
    config: RunConfig,
    judge: Judge,
    inputs: JudgeInputs,
    pool: Pool,
    prices: PriceTable | None = None,
    *,
    batch: bool = False,
    model: ResolvedModel | None = None,
) -> dict[str, Any]:
    """Calls, tokens and cost the job would spend from scratch, with how calls grow with depth
    (`Judge.estimate_growth`). ``prices``: the job's price table (default: read from
    ``config.prices``, see `reljudge.llm.pricing.price_table`). The cost is given both ways:
    synchronous calls (``cost_usd_sync``) and the provider's Batch API (``cost_usd_batch``);
    ``cost_usd`` is the one the job pays: the batch cost when ``batch`` (``judge run --batch``).
    ``model``: the job's resolved model (default: ``config.model``, resolved for the quote)."""
    from reljudge.judges.token_count import counting_with
    from reljudge.llm.pricing import batch_cost, has_batch_price, price_cost, price_table
    from reljudge.llm.routing import resolve_model
    from reljudge.llm.tokens import TokenCounter

    with counting_with(TokenCounter(config.model)):  # the model's tokenizer, where one is offline
        est = judge.estimate(inputs)
    if config.samples > 1:  # each item asked --samples times (pointwise judges only, see prepare)
        from dataclasses import replace

        n = config.samples
        note = "; ".join(x for x in (est.note, f"{n} samples per item") if x)
        est = replace(
            est,
            calls=est.calls * n,
            prompt_tokens=est.prompt_tokens * n,
            completion_tokens=est.completion_tokens * n,
            note=note,
            records=est.label_records,
        )
    table = prices if prices is not None else price_table(config.prices)
    resolved = model if model is not None else resolve_model(config.model)
    quote = table.quote(resolved)
    sync, known = price_cost(quote.price, resolved.backend, est.prompt_tokens, est.completion_tokens)
    in_batch, _ = batch_cost(quote.price, resolved.backend, est.prompt_tokens, est.completion_tokens)
    return {
        "method": config.method,
        "model": config.model,
        "topics": len(pool.docs),
        "items": pool.n_items,
        "documents": sum(len(d) for d in pool.docs.values()),
        "pool": pool.description,
        "calls": est.calls,
        "prompt_tokens": est.prompt_tokens,
        #: what counted them: the model's tokenizer, or ~4 characters a token
        "tokens_by": est.tokenizer or FALLBACK_COUNT,
        "completion_tokens": est.completion_tokens,
        "cost_usd": in_batch if batch else sync,
        "cost_usd_sync": sync,
        "cost_usd_batch": in_batch,
        #: whether the price lists batch prices (else the batch cost is the synchronous one)
        "batch_price_listed": has_batch_price(quote.price),
        "batch": batch,
        #: pairwise with every pair of the pool (its calls grow with the square of the depth)
        "all_pairs": getattr(judge, "pairs", None) == "all" and getattr(inputs, "pairs", None) is None,
        "price_known": known,
        "price": quote.as_dict(),  # where the price came from, and its figures per 1M tokens
        "max_cost_usd": config.max_cost,
        "note": est.note,
        "growth": judge.estimate_growth(inputs),  # how the calls grow with the pool depth
    }


def render_estimate(est: Mapping[str, Any]) -> str:
    """The text of ``judge run --dry-run``."""
    if not est:
        return "dry run: nothing to estimate"
    cost = (
        _cost_text(est) if est.get("price_known", True) else "unknown (no price for this model; see --prices)"
    )
    lines = [
        f"dry run: {est['method']} with {est['model']} on {est['topics']} topic(s), {est['items']} item(s) ({est['pool']})",
        f"LLM calls: {est['calls']}",
        f"tokens (estimate, {est.get('tokens_by', FALLBACK_COUNT)}): {est['prompt_tokens']} prompt + "
        f"{est['completion_tokens']} completion",
        f"cost (estimate): {cost}",
    ]
    if est.get("price"):
        lines.append(f"price: {_price_text(est['price'])}")
    lines += _cap_lines(est)
    if est.get("existing_records"):
        lines.append(
            f"{est['existing_records']} record(s) already in {est['output_dir']}: a resumed run makes fewer calls"
        )
    passages = est.get("passages") or {}
    if passages.get("truncated"):
        lines.append(
            f"passages: {passages['truncated']} of {passages['read']} cut to {passages['max_chars']:,} "
            "characters (--max-passage-chars)"
        )
    if passages.get("longer"):
        docid, chars = passages["longest"]
        advice = "" if passages.get("max_chars") else "; --max-passage-chars N cuts them"
        lines.append(
            f"passages: {passages['longer']} of {passages['read']} longer than {passages['warn_chars']:,} "
            f"characters (the longest, {docid}, has {chars:,}){advice}"
        )
    if est.get("note"):
        lines.append(f"note: {est['note']}")
    growth = est.get("growth") or []
    if growth:
        lines.append(f"{est['method']} calls by pool depth (documents per topic):")
        lines += render_table(growth)
    lines.append("nothing was called and nothing was written")
    return "\n".join(lines)


def _cost_text(est: Mapping[str, Any]) -> str:
    """``$1.1700 synchronous, $0.5850 through the Batch API`` (the one the job pays first)."""
    sync = est.get("cost_usd_sync", est["cost_usd"])
    if "cost_usd_batch" not in est or "input" not in (est.get("price") or {"input": 0}):
        return f"${sync:.4f}"  # a local model: free either way
    batch = est["cost_usd_batch"]
    listed = "" if est.get("batch_price_listed", True) else " (no batch price listed: the synchronous one)"
    parts = [f"${sync:.4f} synchronous", f"${batch:.4f} through the Batch API{listed}"]
    return ", ".join(parts[::-1] if est.get("batch") else parts)


def _price_text(price: Mapping[str, Any]) -> str:
    """Where the price came from, with its figures in USD per 1M tokens."""
    names = {"input": "input", "cached_input": "cached", "output": "output"}
    figures = [f"{label} ${price[key]:g}" for key, label in names.items() if price.get(key) is not None]
    if price.get("batch_input") is not None and price.get("batch_output") is not None:
        figures.append(f"batch ${price['batch_input']:g}/${price['batch_output']:g}")
    per = f" ({', '.join(figures)} per 1M tokens)" if figures else ""
    return f"{price.get('source', '?')}{per}"


def _cap_lines(est: Mapping[str, Any]) -> list[str]:
    """What ``--max-cost`` would let the job do, at the estimated cost per call."""
    cap = est.get("max_cost_usd")
    if cap is None:
        return []
    if not est.get("price_known", True):
        return [f"--max-cost ${cap:.4f}: the model has no price, so the cap cannot be kept (see --prices)"]
    cost, calls = est.get("cost_usd", 0.0), est.get("calls", 0)
    if cost <= cap:
        return [f"--max-cost ${cap:.4f}: the estimate fits under the cap"]
    fit = int(cap / (cost / calls)) if calls and cost > 0 else 0
    return [
        f"--max-cost ${cap:.4f}: about {fit} of the {calls} calls fit (the run stops there, exit code 3; "
        "a higher cap resumes it)"
    ]


def render_table(rows: Sequence[Mapping[str, Any]], indent: str = "  ") -> list[str]:
    """Rows of a table (dicts, the keys of the first row are the columns) as right-aligned text,
    a header line first."""
    columns = list(rows[0])
    widths = [max(len(str(c)), *(len(str(row.get(c, ""))) for row in rows)) for c in columns]
    lines = [indent + "  ".join(f"{c:>{w}}" for c, w in zip(columns, widths, strict=True))]
    for row in rows:
        lines.append(
            indent + "  ".join(f"{row.get(c, '')!s:>{w}}" for c, w in zip(columns, widths, strict=True))
        )
    return lines
