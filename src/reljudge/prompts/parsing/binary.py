"""Binary answers: 1/0 (digit or yes/no style), and EXAM's answerability of an extracted answer."""

from __future__ import annotations

import re

from reljudge.prompts.parsing.text import (
    _BARE_NUMBER,
    _NUMBER,
    _REFUSAL,
    _VALUE_END,
    Parsed,
    _exact_token,
    _is_enumerated,
    _json_value,
    _lines,
    _memo_short,
    _ok,
    _prepare,
    _ranged,
    _ranged_at,
    _refused,
    _scale_conflict,
    _strip_wrapping,
    _unparsed,
)

# --- binary ----------------------------------------------------------------------------------

_BINARY_KEYS = (
    "relevant",
    "relevance",
    "is relevant",
    "label",
    "answer",
    "score",
    "judgment",
    "judgement",
    "verdict",
    "grade",
)
_LABELLED_BINARY = re.compile(
    r"(?<![A-Za-z])(?:final\s+)?(?:answer|label|relevance|relevant|score|judg(?:e)?ment|output|verdict|grade|decision)"
    r"(?![A-Za-z])\s*(?:is|:|=|-)\s*[\"'(\[]?\s*([01])" + _VALUE_END,
    re.I,
)
_LABELLED_YESNO = re.compile(
    r"(?<![A-Za-z])(?:final\s+)?(?:answer|label|relevant|verdict|decision|judg(?:e)?ment|output)(?![A-Za-z])\s*(?:is|:|=|-)\s*[\"'(\[]?\s*(yes|no)(?![A-Za-z])",
    re.I,
)
_LONG_QUOTE = re.compile(r'"[^"\n]{4,}"')
_RELEVANCE_WORD = re.compile(r"(?:(not|non|ir)[\s-]*)?relevant", re.I)


def _relevance_word(s: str) -> int | None:
    m = _RELEVANCE_WORD.fullmatch(_strip_wrapping(s))
    if not m:
        return None
    return 0 if m.group(1) else 1


@_memo_short
def parse_binary(text: str | None, style: str = "digit") -> Parsed:
    """0 or 1.

    ``style="digit"`` (prompts asking "answer 1 for yes and 0 for no"): ``exact``/``labelled``
    (the answer is 0/1, ``Answer: 1``); fallbacks ``json``, ``labelled`` (last "answer/label/
    relevance: 0|1"), ``last-line``, ``leading`` ("1 - the passage ..."), ``yesno`` (the answer
    is Yes/No), ``relevance-word`` ("Relevant" / "Not relevant"), ``sole-digit`` (0 or 1 is the
    only number).

    ``style="yesno"`` (prompts asking "Respond with 'Yes' or 'No'"): ``exact``/``labelled``;
    fallbacks ``leading`` ("Yes, the passage ..."), ``labelled``, ``last-line``, ``digit``,
    ``relevance-word``. A bare "no" inside prose is never read as the answer.

    ``style="answerability"``: see `parse_exam_answerability`.
    """
    if style == "answerability":
        return parse_exam_answerability(text)
    if style not in ("digit", "yesno"):
        raise ValueError(f"unknown binary style {style!r}")
    vis = _prepare(text)
    if not vis:
        return _unparsed("empty")
    stated = _scale_conflict(vis, 0, 1)
    if stated is not None:
        return _unparsed(stated)
    if style == "digit":
        m, prefixed = _exact_token(vis, _NUMBER)
        if m:
            return _ranged(m.group(0), 0, 1, "labelled" if prefixed else "exact")
    else:
        m, prefixed = _exact_token(vis, r"yes|no")
        if m:
            return _ok(1 if m.group(0).lower() == "yes" else 0, "labelled" if prefixed else "exact")
    if _REFUSAL.match(vis):
        return _refused()
    lines = _lines(vis)
    if style == "digit":
        value = _json_value(vis, _BINARY_KEYS)
        if isinstance(value, bool):
            return _ok(int(value), "fallback:json")
        if isinstance(value, (int, str)) and str(value).strip().lower() in (
            "0",
            "1",
            "yes",
            "no",
            "true",
            "false",
        ):
            return _ok(1 if str(value).strip().lower() in ("1", "yes", "true") else 0, "fallback:json")
        hits = list(_LABELLED_BINARY.finditer(vis))
        if hits:
            return _ranged_at(vis, hits[-1], 1, 0, 1, "fallback:labelled")
        m, _ = _exact_token(lines[-1], r"[01]")
        if m:
            return _ok(int(m.group(0)), "fallback:last-line")
        if not _is_enumerated(vis):
            m = re.match(r"^[\s\-*>]*([01])\s*(?:[:)\-,]|\.(?!\d)|$)", lines[0])
            if m:
                return _ok(int(m.group(1)), "fallback:leading")
        m, _ = _exact_token(vis, r"yes|no")
        if m:
            return _ok(1 if m.group(0).lower() == "yes" else 0, "fallback:yesno")
        word = _relevance_word(vis)
        if word is not None:
            return _ok(word, "fallback:relevance-word")
        # the only number, stated as a value ("so 1", "1 (relevant)"), not "the 1 thing" and not
        # inside a quotation from the passage (Quote: "... step 1.")
        unquoted = _LONG_QUOTE.sub(" ", vis)
        numbers = set(_BARE_NUMBER.findall(unquoted))
        if numbers and numbers <= {"0", "1"} and len(numbers) == 1:
            sole = re.search(r"(?<![\w.])([01])(?![\w]|\.\d)" + _VALUE_END, unquoted, re.I)
            if sole:
                return _ranged_at(unquoted, sole, 1, 0, 1, "fallback:sole-digit")
            return _unparsed("no-label")
        return _unparsed("ambiguous" if numbers else "no-label")
    # yes/no style
    m = re.match(r"^[\s\-*>\"'(]*(yes|no)(?:\s*[.,!:;)\-]|\s*$)", vis, re.I)
    if m:
        return _ok(1 if m.group(1).lower() == "yes" else 0, "fallback:leading")
    hits = list(_LABELLED_YESNO.finditer(vis))
    if hits:
        return _ok(1 if hits[-1].group(1).lower() == "yes" else 0, "fallback:labelled")
    m, _ = _exact_token(lines[-1], r"yes|no")
    if m:
        return _ok(1 if m.group(0).lower() == "yes" else 0, "fallback:last-line")
    m, _ = _exact_token(vis, r"[01]")
    if m:
        return _ok(int(m.group(0)), "fallback:digit")
    word = _relevance_word(vis)
    if word is not None:
        return _ok(word, "fallback:relevance-word")
    return _unparsed("no-label")


# EXAM's unanswerable expressions (exam_pp) plus the usual ways chat models say the same.
_UNANSWERABLE_EXACT = {
    "unanswerable",
    "no",
    "no answer",
    "not enough information",
    "unknown",
    "it is not possible to tell",
    "it does not say",
    "no relevant information",
    "none",
    "n/a",
    "na",
    "not answerable",
    "cannot be answered",
    "not mentioned",
    "not specified",
    "not stated",
    "not provided",
    "not given",
    "insufficient information",
    "no information",
    "i don't know",
    "i do not know",
}
_UNANSWERABLE = re.compile(
    r"""^(?:
        (?:the\s+|this\s+)?(?:given\s+|provided\s+)?(?:context|passage|text|document|information|source)s?\s+
            (?:does\s+not|doesn't|do\s+not|don't|did\s+not|didn't)\s+
            (?:\w+\s+){0,2}?(?:provide|mention|say|contain|specify|include|state|give|answer|offer|discuss|address|cover|have|tell)
      | (?:the\s+)?(?:question|answer)\s+(?:can\s*not|can't|could\s+not|is\s+not\s+able\s+to)\s+be\s+(?:answered|determined|found)
      | (?:i\s+)?(?:can\s*not|can't|could\s+not|am\s+unable\s+to|am\s+not\s+able\s+to)\s+(?:answer|determine|find|tell)
      | (?:there\s+is\s+|there's\s+)?(?:no|not\s+enough|insufficient)\s+(?:relevant\s+|sufficient\s+|specific\s+)?(?:information|answer|mention|data|details?)\b
      | it\s+is\s+not\s+possible\s+to\s+(?:tell|determine|say|answer)
      | (?:this|that|it)\s+is\s+(?:not\s+(?:mentioned|specified|stated|provided|answerable|addressed|discussed)|unanswerable|unknown)
      | not\s+(?:mentioned|specified|stated|provided|given|answerable|addressed|discussed)\b
      | unanswerable\b
    )""",
    re.I | re.X,
)


@_memo_short
def parse_exam_answerability(text: str | None) -> Parsed:
    """EXAM answerability from an extracted answer (prompt ``exam/answerability``): 0 when the
    answer is an "unanswerable" expression (``how="unanswerable"``; EXAM's list: unanswerable,
    no, no answer, not enough information, unknown, it is not possible to tell, it does not say,
    no relevant information, plus "the context does not mention ..." forms), otherwise 1
    (``how="answer"``). Empty output is unparsed; a refusal is refused. As in EXAM, a plain "no"
    counts as unanswerable."""
    vis = _prepare(text)
    if not vis:
        return _unparsed("empty")
    flat = re.sub(r"\s+", " ", vis.strip().strip("\"'").strip()).lower()
    bare = flat.rstrip(".!?,;: ").strip()
    bare = re.sub(r"^(?:answer|response|output)\s*:\s*", "", bare)
    if bare in _UNANSWERABLE_EXACT or _UNANSWERABLE.match(bare):
        return _ok(0, "unanswerable")
    if _REFUSAL.match(vis):
        return _refused()
    if not re.search(r"[A-Za-z0-9]", bare):
        return _unparsed("no-answer")
    return _ok(1, "answer")
