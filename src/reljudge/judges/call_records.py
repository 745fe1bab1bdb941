"""The record of one judged item: one chat result (or a refusal to call) turned into a `Judgment`.

The rule every judge follows lives here in one place: a chat that failed keeps its status
(api_error / refused / truncated), an answer the parser cannot read is ``unparsed``, and only a
parsed answer carries a label (read by `reljudge.judges.reading`, which never lets the prompt's
or the passage's own text supply it). The raw text is kept either way.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from reljudge.judges.base import Key
from reljudge.judges.context import JudgeContext
from reljudge.records import Judgment, Provenance, Usage

if TYPE_CHECKING:
    from reljudge.judges.reading import Answer
    from reljudge.llm import ChatResult
    from reljudge.prompts import PromptTemplate


def chat_failure(result: ChatResult) -> tuple[str, str] | None:
    """(status, error) when the call itself failed, else None."""
    if result.status == "ok":
        return None
    error = result.error or {
        "truncated": "the answer was cut off (finish_reason=length)",
        "refused": "the provider refused to answer (content filter)",
        "api_error": "the provider call failed",
    }.get(result.status, result.status)
    return result.status, error


def answer_provenance(ctx: JudgeContext, prompt: PromptTemplate | None, answer: Answer) -> Provenance:
    """The provenance of the last call of ``answer``, counting the usage and attempts of every
    call made for it (an unreadable answer asked again costs twice)."""
    provenance = ctx.provenance(prompt, answer.result)
    if answer.earlier:
        provenance = provenance.model_copy(update={"usage": answer.usage, "attempts": answer.attempts})
    return provenance


def record_from_answer(
    ctx: JudgeContext,
    prompt: PromptTemplate,
    answer: Answer,
    *,
    method: str,
    qid: str,
    docid: str | None = None,
    docid_b: str | None = None,
    item_id: str | None = None,
    extra: dict[str, Any] | None = None,
    scale: tuple[int, ...] | None = None,
) -> Judgment:
    """The record of one answered item (not emitted): the call's failure, the label read from the
    answer, or ``unparsed``, with the raw text (clipped to `reljudge.judges.reading.RAW_MAX_CHARS`).
    Never raises for a bad answer: a record that cannot be built from it is ``unparsed`` and
    says why. With ``scale`` (the judge's one-token grades) and log-probabilities in the answer,
    ``extra["expected"]`` holds the grade distribution at the label position."""
    fields: dict[str, Any] = {
        "qid": qid,
        "docid": docid,
        "docid_b": docid_b,
        "item_id": item_id,
        "method": method,
    }
    provenance = answer_provenance(ctx, prompt, answer)
    raw = _raw_text(answer.result.text)
    try:
        return Judgment(
            **fields,
            label=answer.label,
            status=answer.status,  # type: ignore[arg-type]
            raw=raw,
            error=answer.error,
            parse=answer.how,
            extra={**(extra or {}), **_clipped_extra(answer), **_expected_extra(answer, scale)},
            provenance=provenance,
        )
    except Exception as err:  # one odd answer must never end the job
        return unreadable_record(fields, raw, answer.how, err, provenance)


def _expected_extra(answer: Answer, scale: tuple[int, ...] | None) -> dict[str, Any]:
    if not scale:
        return {}
    found = answer.distribution(scale)
    return {} if found is None else {"expected": found}


def unreadable_record(
    fields: Mapping[str, Any], raw: str | None, how: str | None, err: Exception, provenance: Provenance
) -> Judgment:
    """An ``unparsed`` record for an answer whose record could not be built (``err``)."""
    message = str(err).splitlines()[0][:200] if str(err) else ""
    return Judgment(
        **fields,
        status="unparsed",
        raw=raw,
        error=f"could not build the record from the answer ({type(err).__name__}: {message})",
        parse=how,
        provenance=provenance,
    )


def _raw_text(text: Any) -> str | None:
    from reljudge.judges.reading import clip

    if text is None:
        return None
    return clip(text if isinstance(text, str) else repr(text))


def _clipped_extra(answer: Answer) -> dict[str, Any]:
    out = answer.extra()
    text = answer.result.text
    if isinstance(text, str) and _raw_text(text) != text:
        out["raw_chars"] = len(text)  # the answer's full length; ``raw`` keeps its head and tail
    return out


def skipped_record(
    ctx: JudgeContext,
    prompt: PromptTemplate | None,
    reason: str,
    *,
    method: str,
    qid: str,
    docid: str | None = None,
    docid_b: str | None = None,
    item_id: str | None = None,
    extra: dict[str, Any] | None = None,
) -> Judgment:
    """A record for an item that was not sent to the LLM (missing or empty text, no nuggets)."""
    return Judgment(
        qid=qid,
        docid=docid,
        docid_b=docid_b,
        item_id=item_id,
        method=method,
        status="skipped",
        error=reason,
        extra=extra or {},
        provenance=ctx.provenance(prompt, None),
    )


def without_usage(provenance: Provenance) -> Provenance:
    """A copy of ``provenance`` that counts no tokens and no attempts (for the 2nd..nth record of
    one batched call, so that summing usage and retries over records counts each call once,
    `reljudge.run.ledger`)."""
    return provenance.model_copy(update={"usage": Usage(), "attempts": 0})


def key(method: str, qid: str, docid: str = "", docid_b: str = "", item_id: str = "") -> Key:
    return (method, qid, docid, docid_b, item_id)
