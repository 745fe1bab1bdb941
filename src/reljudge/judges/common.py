"""Building blocks the built-in judges share: resolving prompt options, checking passages,
turning one chat result (or a refusal to call) into a `Judgment`, and estimating calls.

The rule every judge follows lives here in one place: a chat that failed keeps its status
(api_error / refused / truncated), an answer the parser cannot read is ``unparsed``, and only a
parsed answer carries a label (read by `reljudge.judges.reading`, which never lets the prompt's
or the passage's own text supply it). The raw text is kept either way.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from reljudge.errors import InputError
from reljudge.judges.base import JudgeInputs, Key, estimate_tokens
from reljudge.judges.context import JudgeContext
from reljudge.records import Judgment, Provenance, Usage

if TYPE_CHECKING:
    from reljudge.judges.reading import Answer
    from reljudge.llm import ChatResult
    from reljudge.prompts import PromptTemplate
    from reljudge.prompts.parsing import Parsed

Parser = Callable[[str], "Parsed"]


def resolve_prompt(prompt: Any, *, option: str = "prompt") -> PromptTemplate:
    """A `PromptTemplate` from an option value: a template, or the id of a bundled prompt."""
    from reljudge.prompts import PromptTemplate, get_prompt

    if isinstance(prompt, PromptTemplate):
        return prompt
    if isinstance(prompt, str):
        try:
            return get_prompt(prompt)
        except InputError:
            raise
        except (KeyError, LookupError, ValueError, FileNotFoundError) as err:
            raise InputError(f"{option}: unknown prompt {prompt!r} ({err})") from None
    raise TypeError(f"option {option!r} must be a prompt id or a PromptTemplate, got {type(prompt).__name__}")


def passage_problem(corpus: Mapping[str, str], docid: str) -> str | None:
    """Why a passage cannot be judged (missing or empty text), or None when it can."""
    text = corpus.get(docid)
    if text is None:
        return f"no text for passage {docid!r} in the corpus"
    if not text.strip():
        return f"passage {docid!r} is empty"
    return None


def topic_problem(topics: Mapping[str, str], qid: str) -> str | None:
    text = topics.get(qid)
    if text is None:
        return f"no query text for topic {qid!r}"
    if not text.strip():
        return f"query text of topic {qid!r} is empty"
    return None


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
    """A copy of ``provenance`` that counts no tokens (for the 2nd..nth record of one batched
    call, so that summing usage over records counts each call once)."""
    return provenance.model_copy(update={"usage": Usage()})


def key(method: str, qid: str, docid: str = "", docid_b: str = "", item_id: str = "") -> Key:
    return (method, qid, docid, docid_b, item_id)


def pool_items(inputs: JudgeInputs) -> Iterable[tuple[str, str]]:
    """(qid, docid) for every pooled document, in pool order, without duplicates per topic."""
    for qid, docids in inputs.pool.items():
        seen: set[str] = set()
        for docid in docids:
            if docid not in seen:
                seen.add(docid)
                yield qid, docid


def prompt_tokens(prompt: PromptTemplate, variables: Mapping[str, str]) -> int:
    """Estimated prompt tokens of ``prompt`` rendered with ``variables``: with the model's
    tokenizer inside `reljudge.judges.token_count.counting_with` (a dry-run for a model that has
    one), else about four characters a token."""
    from reljudge.judges.token_count import active_tokenizer

    messages = prompt.render(**variables)
    counter = active_tokenizer()
    if counter is not None:
        return int(counter.messages(messages))
    return sum(estimate_tokens(_content(m)) + 4 for m in messages)


def _content(message: Any) -> str:
    if isinstance(message, Mapping):
        return str(message.get("content", ""))
    return str(getattr(message, "content", message))


def check_choice(option: str, value: Any, choices: Iterable[Any]) -> None:
    allowed = list(choices)
    if value not in allowed:
        raise InputError(f"option {option}={value!r}: expected one of {', '.join(map(repr, allowed))}")


def check_output(prompt: PromptTemplate, types: Iterable[str], judge: str, option: str = "prompt") -> None:
    """An `InputError` unless the prompt's declared output type is one the judge can read."""
    allowed = tuple(types)
    if prompt.output.type not in allowed:
        raise InputError(
            f"{option} {prompt.id!r} answers {prompt.output.describe()}, but the {judge} judge needs "
            f"{' or '.join(allowed)} output"
        )
