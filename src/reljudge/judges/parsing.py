"""Parse LLM answers into labels, never guessing a label that is not there.

Every parser is a pure function returning `Parsed(label, status, how, items)`:

- ``status`` is ``ok``, ``unparsed`` (no label could be read; empty output, ambiguous or out of
  range) or ``refused`` (the model declined: "I'm sorry, I can't ...");
- ``label`` is the label (int) when ``status == "ok"``, else None;
- ``items`` holds the strings of list parsers (generated questions, nuggets, labels);
- ``how`` names the rule that produced the result: ``marker``, ``exact``, ``labelled``,
  ``json``, ``literal``, or ``fallback:<name>`` for the more lenient rules, and for failures the
  reason (``empty``, ``marker:out-of-range``, ``ambiguous``, ...). Aggregate ``how`` to see how
  much of a run relied on fallbacks.

Common rules. Reasoning inside ``<think>...</think>`` (also ``<thinking>``, ``<reasoning>``) is
removed first and never read for a label; with only reasoning and no visible answer the result
is ``unparsed``. Curly quotes are read as straight quotes, markdown emphasis is ignored, and
Unicode is NFKC-normalised (full-width digits). The contract rule of a prompt (the answer marker,
an answer that is exactly the label) is tried first; fallbacks are tried only when it finds
nothing, in a fixed order, and never a loose "any digit anywhere" rule ahead of the marker. A
value outside the declared range is ``unparsed``, never clamped.
"""

from __future__ import annotations

import ast
import functools
import json
import re
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Literal, TypeVar

ParseStatus = Literal["ok", "unparsed", "refused"]

__all__ = [
    "Parsed",
    "parse_binary",
    "parse_exam_answerability",
    "parse_graded",
    "parse_label_list",
    "parse_pairwise",
    "parse_self_rating",
    "parse_string_list",
    "is_refusal",
    "visible_answer",
]


@dataclass(frozen=True)
class Parsed:
    """The result of parsing one answer."""

    label: int | float | None
    status: ParseStatus
    how: str
    items: tuple[str, ...] | None = None

    @property
    def ok(self) -> bool:
        return self.status == "ok"


# Answers are mostly a handful of short strings ("1", "0", "##final score: 2"). The parsers are
# pure functions of (text, options) returning immutable results, so the result for a short text
# is kept (bounded LRU) and a repeated answer costs a dictionary lookup instead of the rules.
_MEMO_CHARS = 64
_MEMO_SIZE = 4096
_F = TypeVar("_F", bound=Callable[..., "Parsed"])


def _memo_short(parser: _F) -> _F:
    cached = functools.lru_cache(maxsize=_MEMO_SIZE)(parser)

    @functools.wraps(parser)
    def parse(text: str | None, *args: object, **kwargs: object) -> Parsed:
        if type(text) is str and len(text) <= _MEMO_CHARS:
            return cached(text, *args, **kwargs)
        return parser(text, *args, **kwargs)

    return parse  # type: ignore[return-value]


def _ok(label: int, how: str) -> Parsed:
    return Parsed(label=label, status="ok", how=how)


def _ok_items(items: Sequence[str], how: str) -> Parsed:
    return Parsed(label=None, status="ok", how=how, items=tuple(items))


def _unparsed(how: str) -> Parsed:
    return Parsed(label=None, status="unparsed", how=how)


def _refused() -> Parsed:
    return Parsed(label=None, status="refused", how="refusal")


# --- shared text preparation ---------------------------------------------------------------

# one linear scan over the reasoning tags (a bounded attribute part keeps every match attempt short,
# so "<think" repeated 10^5 times costs one pass, not one pass per tag)
_REASONING_TAG = re.compile(r"<(/?)\s*(?:think|thinking|reasoning|reflection)\b[^<>]{0,200}>", re.I)
_QUOTES = str.maketrans(
    {
        "\u2018": "'",
        "\u2019": "'",
        "\u201a": "'",
        "\u201b": "'",
        "\u2032": "'",
        "\u201c": '"',
        "\u201d": '"',
        "\u201e": '"',
        "\u201f": '"',
        "\u2033": '"',
        "\u00ab": '"',
        "\u00bb": '"',
        "\u2013": "-",
        "\u2014": "-",
        "\u2212": "-",
    }
)
_INVISIBLE = re.compile(r"[\u200b\u200c\u200d\u2060\ufeff\u00ad]")


def visible_answer(text: str | None) -> str:
    """The answer without hidden reasoning, surrounding whitespace stripped.

    The reasoning tags (``<think>``, ``<thinking>``, ``<reasoning>``, ``<reflection>``) are one
    family, read left to right in one pass: an opening tag starts a block that the next closing
    tag ends, and the block is removed; a closing tag outside a block means the reasoning began
    before the answer (a chat template that opens it in the prompt), so everything before the
    last such tag is dropped; an opening tag that is never closed hides the rest of the answer.
    The cost is linear in the length of the answer, whatever the tags.
    """
    if not text:
        return ""
    if "<" not in text:
        return text.strip()
    kept: list[str] = []
    position = 0  # start of the text not yet consumed
    block_start: int | None = None
    for tag in _REASONING_TAG.finditer(text):
        closing = bool(tag.group(1))
        if block_start is None:
            if closing:  # a lone closing tag: what came before it was reasoning
                kept = []
                position = tag.end()
            else:
                kept.append(text[position : tag.start()])
                block_start = tag.start()
        elif closing:
            kept.append("\n")
            block_start = None
            position = tag.end()
    if block_start is None:
        kept.append(text[position:])
    return "".join(kept).strip()


def _normalise(text: str) -> str:
    text = unicodedata.normalize("NFKC", text)
    text = _INVISIBLE.sub("", text)
    return text.translate(_QUOTES)


_EMPHASIS = re.compile(r"\*+|`+")
_UNDERSCORES = re.compile(r"(?<![A-Za-z0-9])__|__(?![A-Za-z0-9])")


def _demarkdown(text: str) -> str:
    """Drop emphasis and code marks (``**2**``, ``__2__``, `` `2` ``); keeps ``#`` and list marks."""
    return _UNDERSCORES.sub("", _EMPHASIS.sub("", text))


def _prepare(text: str | None) -> str:
    return _demarkdown(_normalise(visible_answer(text))).strip()


_REFUSAL = re.compile(
    r"""^\W*(?:
        (?:i'?m|i\s+am|we'?re|we\s+are)\s+(?:very\s+|really\s+|so\s+)?sorry\b[^.\n]{0,80}?\b(?:can\s*not|can'?t|unable|won'?t|will\s+not|not\s+able)
      | sorry\b[,.!]?\s+(?:but\s+)?i\s+(?:can\s*not|can'?t|am\s+unable|won'?t)
      | i\s+apologi[sz]e\b[^.\n]{0,80}?\b(?:can\s*not|can'?t|unable|won'?t|not\s+able)
      | (?:i|we)\s+(?:can\s*not|can'?t|am\s+unable\s+to|'m\s+unable\s+to|am\s+not\s+able\s+to|won'?t|will\s+not|must\s+decline\s+to)\s+
            (?:assist|help|comply|provide|fulfil+|do\s+that|complete|evaluate|judge|rate|process|perform|continue|engage)
      | (?:i|we)\s+must\s+(?:decline|refuse)
      | as\s+an\s+ai(?:\s+language\s+model)?\b[^.\n]{0,40}?\b(?:can\s*not|can'?t|am\s+unable|don'?t|do\s+not)
    )""",
    re.I | re.X,
)


def is_refusal(text: str | None) -> bool:
    """True when the visible answer opens with a refusal ("I'm sorry, but I can't ...")."""
    return bool(_REFUSAL.match(_normalise(visible_answer(text))))


_NUMBER = r"[-+]?\d+(?:\.\d+)?"
_ENUMERATED_LINE = re.compile(r"^\s*\(?\d+[.)](?:\s|$)", re.M)
# what may follow a number for it to count as the stated value (not "3 aspects")
_VALUE_END = r"""(?=\s*(?:/\s*\d+|out\s+of\s+\d+)?\s*(?:$|[.,;:!?)\]}"'\n]|-\s|\s(?:because|as|since|given|due|for|which|and|but|so|on|in|with|based|points?|\(|-)\b|\s+\())"""


def _is_enumerated(text: str) -> bool:
    return len(_ENUMERATED_LINE.findall(text)) >= 2


def _lines(text: str) -> list[str]:
    return [ln.strip() for ln in text.splitlines() if ln.strip()]


def _strip_wrapping(s: str) -> str:
    """Strip whitespace, quotes, brackets and trailing punctuation around a short answer."""
    return s.strip().strip("\"'()[]{}<>").strip().rstrip(".,;:!?").strip().strip("\"'()[]{}<>").strip()


_ANSWER_PREFIX = (
    r"(?:(?:my|the|final|overall)\s+)*(?:answer|label|score|grade|rating|relevance(?:\s+(?:score|grade|label|category|judg(?:e)?ment))?"
    r"|category|output|result|response|judg(?:e)?ment|verdict|decision|assessment|prediction|self[-\s]?rating"
    r"|(?:more\s+relevant|better|best|preferred)\s+(?:passage|document))"
    # a parenthesised scale or choice after the label, as in the completion cues of published
    # prompts: "Relevance (0-3):", "Relevance (1 or 0):", "More Relevant Passage (A or B):"
    r"(?:\s*\([^()\n]{1,20}\))?"
)
#: a whole answer in one XML-style element, as the examples of some published prompts answer
#: ("<output> 3 </output>"); its content is read like a labelled answer
_TAGGED = re.compile(
    r"<\s*(output|answer|label|score|grade|rating|relevance|judg(?:e)?ment|choice|result)\s*>"
    r"\s*(.*?)\s*<\s*/\s*\1\s*>",
    re.I | re.S,
)


#: answer elements nested deeper than this (``<output><output>...``) are not read as an answer
_MAX_TAG_DEPTH = 3


def _exact_token(text: str, token: str, flags: int = re.I) -> tuple[re.Match[str] | None, bool]:
    """Match `text` being exactly `token` (regex), optionally after an answer prefix such as
    ``Answer:`` or inside one ``<output>...</output>`` element (at most `_MAX_TAG_DEPTH` nested
    elements; deeper nesting is no answer). Returns (match, prefixed)."""
    inner = text.strip()
    tagged = False
    for _ in range(_MAX_TAG_DEPTH + 1):
        element = _TAGGED.fullmatch(inner)
        if element is None:
            break
        inner, tagged = element.group(2).strip(), True
    else:
        return None, False  # nested too deep
    s = _strip_wrapping(inner)
    m = re.fullmatch(token, s, flags)
    if m:
        return m, tagged
    m = re.fullmatch(
        _ANSWER_PREFIX + r"\s*(?:is|[:=\-])?\s*[\"'(\[]?\s*(" + token + r")\s*[\"')\]]?", s, flags
    )
    if m:
        return re.fullmatch(token, m.group(1), flags), True
    return None, False


def _int_value(raw: str) -> int | None:
    if re.match(r"[-+]?0\d", raw):  # "01", "02082": malformed, not a grade
        return None
    try:
        value = float(raw)
    except ValueError:
        return None
    if value != int(value):
        return None
    return int(value)


def _scale_conflict(text: str, lo: int, hi: int, value_end: int | None = None) -> str | None:
    """Why the answer is on another scale than ``lo..hi``, or None: a scale stated right after the
    value read (ending at ``value_end``: "2/5", "3 out of 10") or anywhere in the answer ("on a
    scale of 1 to 10", "a 5-point scale"). An answer on another scale is no label on this one."""
    if value_end is not None:
        after = _SCALE_AFTER.match(text, value_end)
        if after is not None:
            if after.group("max") is not None and int(after.group("max")) != hi:
                return f"scale:out-of-{after.group('max')}"
            if after.group("lo") is not None and (int(after.group("lo")), int(after.group("hi"))) != (lo, hi):
                return f"scale:{after.group('lo')}-{after.group('hi')}"
    for stated in _SCALE_STATED.finditer(text):
        if stated.group("points") is not None:
            if int(stated.group("points")) != hi - lo + 1:
                return f"scale:{stated.group('points')}-point"
            continue
        a = stated.group("lo") if stated.group("lo") is not None else stated.group("lo2")
        b = stated.group("hi") if stated.group("hi") is not None else stated.group("hi2")
        if (int(a), int(b)) != (lo, hi):
            return f"scale:{a}-{b}"
    return None


def _ranged_at(text: str, match: re.Match[str], group: int | str, lo: int, hi: int, how: str) -> Parsed:
    """`_ranged` of a value read by ``match`` in ``text``, unless a scale other than lo..hi is
    stated right after it."""
    conflict = _scale_conflict(text, lo, hi, match.end(group))
    if conflict is not None:
        return _unparsed(f"{how}:{conflict}")
    return _ranged(match.group(group), lo, hi, how)


def _ranged(raw: str, lo: int, hi: int, how: str) -> Parsed:
    value = _int_value(raw)
    if value is None:
        return _unparsed(f"{how}:not-integer")
    if not lo <= value <= hi:
        return _unparsed(f"{how}:out-of-range")
    return _ok(value, how)


def _json_objects(text: str) -> Iterable[dict[str, object]]:
    """Flat JSON-ish objects in the text, last first (single quotes tolerated)."""
    found = []
    for m in re.finditer(r"\{[^{}]*\}", text):
        chunk = m.group(0)
        for candidate in (chunk, chunk.replace("'", '"')):
            try:
                obj = json.loads(candidate)
            except ValueError:
                continue
            if isinstance(obj, dict):
                found.append(obj)
                break
    return reversed(found)


def _json_value(text: str, keys: Sequence[str]) -> object | None:
    wanted = {k.lower().replace("_", " ").strip() for k in keys}
    for obj in _json_objects(text):
        for key, value in reversed(list(obj.items())):
            if str(key).lower().replace("_", " ").strip() in wanted:
                return value
    return None


# --- graded ----------------------------------------------------------------------------------

_GRADE_KEYS = (
    "final score",
    "finalscore",
    "score",
    "grade",
    "rating",
    "self rating",
    "relevance",
    "relevance score",
    "relevance grade",
    "label",
    "o",
    "overall",
    "overall score",
    "category",
    "answer",
)


def _marker_regex(marker: str) -> re.Pattern[str]:
    key = marker.strip().lstrip("#").strip().rstrip(":=").strip()
    words = [re.escape(w) for w in re.split(r"[\s_]+", key) if w]
    core = r"[\s_]*".join(words) if words else re.escape(marker)
    # the marker is a word of its own: not inside another word or number ("8" in "380")
    after = r"(?![A-Za-z0-9])" if key[-1:].isdigit() else r"(?![A-Za-z])"
    return re.compile(
        r"(?<![A-Za-z0-9])#*\s*[\"']?\s*" + core + after + r"\s*[\"']?"
        r"(?P<sep>(?:\s*(?:[:=>]|-(?!\d)|is|of|was|would\s+be|will\s+be|should\s+be|equals)\s*)+)?"
        r"[\"'(\[]?\s*(?P<num>" + _NUMBER + r"(?![\d.]\d))?",
        re.I,
    )


_LABELLED_GRADE = re.compile(
    r"(?<![A-Za-z])(?:final\s+|overall\s+|relevance\s+)?(?:score|grade|rating|relevance|category|label|judg(?:e)?ment)"
    r"(?![A-Za-z])\s*(?:is|of|:|=|-|would\s+be|should\s+be)?\s*[\"'(\[]?\s*(" + _NUMBER + r")" + _VALUE_END,
    re.I,
)
_OUT_OF = re.compile(r"(?<![\w.])(" + _NUMBER + r")\s*(?:/|out\s+of)\s*(\d+)(?![\w]|\.\d)", re.I)
#: a scale stated right after a value: "2/5", "3 out of 10", "2 on a scale of 0 to 5"
_SCALE_AFTER = re.compile(
    r"[\"')\]]?\s*(?:(?:/|out\s+of)\s*(?P<max>\d+)|(?:on|in)\s+(?:a|the)\s+scale\s+(?:of|from)\s+"
    r"(?P<lo>-?\d+)\s*(?:to|-|and)\s*(?P<hi>-?\d+))",
    re.I,
)
#: a rating scale stated anywhere in the answer: "on a scale of 1 to 10", "a 1-5 scale",
#: "on a 5-point scale"
_SCALE_STATED = re.compile(
    r"(?<![A-Za-z])scale\s+(?:of|from)\s+(?P<lo>-?\d+)\s*(?:to|-|and)\s*(?P<hi>-?\d+)"
    r"|(?<![\w.])(?P<lo2>-?\d+)\s*(?:-|to)\s*(?P<hi2>-?\d+)[\s-]*(?:point\s+)?scale\b"
    r"|(?<![\w.])(?P<points>\d+)[\s-]*point\s+(?:relevance\s+|rating\s+|grading\s+)?scale\b",
    re.I,
)
_BARE_NUMBER = re.compile(r"(?<![\w.])" + _NUMBER + r"(?![\w]|\.\d)")


@_memo_short
def parse_graded(text: str | None, lo: int = 0, hi: int = 3, marker: str | None = "##final score:") -> Parsed:
    """An integer grade in [lo, hi].

    1. ``marker`` (default UMBRELA's ``##final score:``): the LAST occurrence, tolerant of case,
       spaces, ``#``, quotes, markdown and separators (``Final Score:2.``, ``final_score = 2``,
       ``"final score": 2``). An occurrence is the marker followed by a separator or a value (not
       the words in a sentence). If the marker occurs, its last occurrence decides: out of range or
       no number -> unparsed, with no fallback.
    2. ``exact``/``labelled``: the whole answer is a number (``2``, ``**2**``, ``Score: 2``).
    3. Fallbacks, in order: ``json`` ({"score": 2}), ``labelled`` (last "score/grade/rating/
       relevance/category ... N"), ``out-of`` ("2 out of 3", "2/3" with the denominator = hi),
       ``last-line`` (the last line is a number), ``leading`` (the answer starts "N:" / "N -",
       and is not a numbered list), ``sole-number`` (the only number in the answer).

    A scale other than ``lo..hi`` stated in the answer ("on a scale of 1 to 10", "a 5-point
    scale") or right after the value read ("2/5", "3 out of 10") makes it unparsed
    (``how="scale:..."``): an answer on another scale is no label on this one.
    """
    vis = _prepare(text)
    if not vis:
        return _unparsed("empty")
    stated = _scale_conflict(vis, lo, hi)
    if stated is not None:
        return _unparsed(stated)
    if marker:
        # an occurrence is the marker used as one: followed by a separator or a value, not the
        # words "final score" in a sentence; the last occurrence decides, with or without a value
        hits = [h for h in _marker_regex(marker).finditer(vis) if h.group("sep") or h.group("num")]
        if hits:
            last = hits[-1]
            if not last.group("num"):
                return _unparsed("marker:no-value")
            return _ranged_at(vis, last, "num", lo, hi, "marker")
    m, prefixed = _exact_token(vis, _NUMBER)
    if m:
        return _ranged(m.group(0), lo, hi, "labelled" if prefixed else "exact")
    if _REFUSAL.match(vis):
        return _refused()
    value = _json_value(vis, _GRADE_KEYS)
    if value is not None and not isinstance(value, bool) and isinstance(value, (int, float, str)):
        raw = str(value).strip()
        if re.fullmatch(_NUMBER, raw):
            return _ranged(raw, lo, hi, "fallback:json")
    labelled = list(_LABELLED_GRADE.finditer(vis))
    if labelled:
        return _ranged_at(vis, labelled[-1], 1, lo, hi, "fallback:labelled")
    out_of = [m for m in _OUT_OF.finditer(vis) if int(m.group(2)) == hi]
    if out_of:
        return _ranged(out_of[-1].group(1), lo, hi, "fallback:out-of")
    lines = _lines(vis)
    m, _ = _exact_token(lines[-1], _NUMBER)
    if m:
        return _ranged(m.group(0), lo, hi, "fallback:last-line")
    if not _is_enumerated(vis):
        m = re.match(r"^[\s\-*>]*(" + _NUMBER + r")\s*(?:[:)=\-]|\.(?!\d)|$)", lines[0])
        if m:
            return _ranged(m.group(1), lo, hi, "fallback:leading")
    numbers = set(_BARE_NUMBER.findall(vis))
    if len(numbers) == 1:
        # the only number, and stated as a value ("I'd give it a 3."), not "3 aspects"
        sole = re.search(r"(?<![\w.])(" + _NUMBER + r")(?![\w]|\.\d)" + _VALUE_END, vis, re.I)
        if sole:
            return _ranged_at(vis, sole, 1, lo, hi, "fallback:sole-number")
        return _unparsed("no-label")
    if len(numbers) > 1:
        return _unparsed("ambiguous")
    return _unparsed("no-label")


def parse_self_rating(text: str | None, lo: int = 0, hi: int = 5) -> Parsed:
    """EXAM self-rating (the prompt asks to "choose one" of 0..5): a bare number, ``4: ...``,
    ``Rating: 4/5`` or ``{"grade": 4}``; the rules of `parse_graded` without a marker."""
    return parse_graded(text, lo=lo, hi=hi, marker=None)


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


# --- pairwise --------------------------------------------------------------------------------

_PW_NAME = r"(?:passage|document|doc|option|candidate|text|response)"
_PW_SEP = r"[\s_]*#?\s*"  # "Passage 2", "Passage #2", "Document2", "Passage_A"
_PW_TOKEN = r"(?:" + _PW_NAME + _PW_SEP + r"([12ab])(?![\w])|([12])(?![\w.]\w)|(?-i:([AB]))(?![\w]))"
_PW_EXACT = r"(?:" + _PW_NAME + _PW_SEP + r")?(?:[12]|[ab])"
_PW_LABELLED = re.compile(
    r"(?<![A-Za-z])(?:final\s+answer|answer|choice|preferred(?:\s+passage)?|preference|selection|winner|verdict|"
    r"better\s+passage|best\s+passage|more\s+relevant\s+passage|output|decision)(?![A-Za-z])(?:\s*(?:is|was|:|=|-)\s*)+[\"'(\[]?\s*"
    + _PW_TOKEN,
    re.I,
)
_PW_MENTION = re.compile(r"(?<![A-Za-z])" + _PW_NAME + _PW_SEP + r"([12ab])(?![\w])", re.I)
_PW_BETTER = (
    r"(?:(?:much|clearly|slightly|far|significantly|somewhat|the|a|more|overall)\s+)*"
    r"(?:better|more\s+relevant|more\s+useful|more\s+helpful|more\s+informative|more\s+complete|more\s+direct|"
    r"more\s+appropriate|more\s+specific|superior|preferable|preferred|best|clearer|simpler|stronger)"
)
_PW_PHRASES = (
    re.compile(
        r"(?<![A-Za-z])"
        + _PW_NAME
        + _PW_SEP
        + r"([12ab])(?![\w])\s+(?:is|seems|appears|was|looks)\s+"
        + _PW_BETTER,
        re.I,
    ),
    re.compile(
        r"(?<![A-Za-z])(?:prefer|choose|chose|select|selected|pick|picked|recommend|go\s+with|opt\s+for|favou?r)\s+"
        + _PW_NAME
        + _PW_SEP
        + r"([12ab])(?![\w])",
        re.I,
    ),
    re.compile(
        r"(?<![A-Za-z])"
        + _PW_NAME
        + _PW_SEP
        + r"([12ab])(?![\w])\s+(?:answers|addresses|responds\s+to|covers)\s+(?:the\s+(?:question|query)\s+)?(?:better|more)",
        re.I,
    ),
)
_PW_HEDGE = re.compile(
    r"(?<![A-Za-z])(?:both|neither|tie|tied|equal|equally|same|similar|not|less|worse|irrelevant|n't)(?![A-Za-z])",
    re.I,
)


def _pw_value(match: re.Match[str]) -> int:
    token = next(g for g in match.groups() if g)
    return 1 if token.lower() in ("1", "a") else 2


@_memo_short
def parse_pairwise(text: str | None) -> Parsed:
    """1 (the first passage) or 2 (the second passage); "A"/"B" count as 1/2.

    ``exact``/``labelled``: the answer is the choice (``2``, ``**2**``, ``2.``, ``Passage 2``,
    ``Answer: 1``). Fallbacks: ``labelled`` (last "answer/choice/preferred ...: N" in prose),
    ``leading`` (the first line is "Passage 1." / "2 -" ...; not for a numbered list),
    ``preference-phrase`` ("Passage 2 is more relevant", "I prefer passage 1"; all such phrases
    must agree), ``sole-mention`` (only one passage is named, and no hedge/negation words),
    ``sole-digit`` (1 or 2 is the only number, no hedge words). Ties, "both", "neither" and
    conflicting signals are unparsed.
    """
    vis = _prepare(text)
    if not vis:
        return _unparsed("empty")
    m, prefixed = _exact_token(vis, _PW_EXACT)
    if m:
        token = m.group(0).strip()[-1].lower()
        return _ok(1 if token in ("1", "a") else 2, "labelled" if prefixed else "exact")
    if _REFUSAL.match(vis):
        return _refused()
    hits = list(_PW_LABELLED.finditer(vis))
    if hits:
        return _ok(_pw_value(hits[-1]), "fallback:labelled")
    lines = _lines(vis)
    if not _is_enumerated(vis):
        m = re.match(
            r"^[\s\-*>\"'(]*(?:"
            + _PW_NAME
            + _PW_SEP
            + r"([12ab])|([12])|(?-i:([AB])))\s*(?:[:)\-,]|\.(?!\d)|$)",
            lines[0],
            re.I,
        )
        if m:
            return _ok(_pw_value(m), "fallback:leading")
    phrase_values = {_pw_value(h) for rx in _PW_PHRASES for h in rx.finditer(vis)}
    if len(phrase_values) == 1:
        return _ok(phrase_values.pop(), "fallback:preference-phrase")
    if len(phrase_values) > 1:
        return _unparsed("ambiguous")
    hedged = bool(_PW_HEDGE.search(vis))
    mentions = {_pw_value(h) for h in _PW_MENTION.finditer(vis)}
    if len(mentions) == 1 and not hedged:
        return _ok(mentions.pop(), "fallback:sole-mention")
    numbers = set(_BARE_NUMBER.findall(vis))
    if not mentions and len(numbers) == 1 and numbers <= {"1", "2"} and not hedged:
        return _ok(int(numbers.pop()), "fallback:sole-digit")
    return _unparsed("ambiguous" if (mentions or numbers or hedged) else "no-label")


# --- lists -----------------------------------------------------------------------------------

_FENCE = re.compile(r"```[ \t]*[\w+-]*[ \t]*\n?(.*?)```", re.S)
_LIST_KEYS = ("questions", "nuggets", "labels", "items", "list", "answer", "output", "result", "results")
_QUOTE_OPEN = "\"'\u201c\u2018\u201e"
_QUOTE_CLOSE = "\"'\u201d\u2019\u201c"
_LIST_LINE = re.compile(r"^\s*(?:\(?\d+[.):]|[-*\u2022+]|[a-z][.)])\s+(.+?)\s*$", re.I)


def _bracket_spans(text: str, open_ch: str, close_ch: str) -> list[str]:
    """Outermost balanced bracket spans, in order of appearance (quote-unaware: item texts
    rarely contain brackets, and a failed span just falls through to the next rule)."""
    spans = []
    depth = 0
    start = -1
    for i, ch in enumerate(text):
        if ch == open_ch:
            if depth == 0:
                start = i
            depth += 1
        elif ch == close_ch and depth > 0:
            depth -= 1
            if depth == 0:
                spans.append(text[start : i + 1])
    return spans


#: brackets nested deeper than this are no list of items (and would exhaust the JSON and literal
#: parsers' recursion)
_MAX_NESTING = 32
_NESTING_CHARS = re.compile(r"[\[\]{}()]")


def _too_deep(chunk: str) -> bool:
    depth = 0
    for bracket in _NESTING_CHARS.findall(chunk):
        if bracket in "[{(":
            depth += 1
            if depth > _MAX_NESTING:
                return True
        else:
            depth = max(0, depth - 1)
    return False


def _load(chunk: str) -> object | None:
    if _too_deep(chunk):
        return None
    variants = [chunk]
    straight = chunk.translate(_QUOTES)
    if straight != chunk:
        variants.append(straight)
    for v in variants:
        for loader in (json.loads, ast.literal_eval):
            try:
                return loader(v)
            except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                continue
    # trailing comma before the closing bracket, for JSON
    try:
        return json.loads(re.sub(r",\s*([\]}])", r"\1", straight))
    except (ValueError, RecursionError):
        return None


def _as_items(value: object) -> list[str] | None:
    if isinstance(value, dict):
        for key, inner in value.items():
            if str(key).lower() in _LIST_KEYS and isinstance(inner, list):
                return _as_items(inner)
        return None
    if not isinstance(value, (list, tuple)):
        return None
    if not all(isinstance(v, str) for v in value):
        return None
    return [v.strip() for v in value if v.strip()]


def _tolerant_items(span: str, allow_unquoted: bool) -> list[str] | None:
    inner = span[1:-1].strip().rstrip(",").strip()
    if not inner:
        return []
    if inner[0] in _QUOTE_OPEN and inner[-1] in _QUOTE_CLOSE:
        parts = re.split(r"[\"'\u201d\u2019]\s*,\s*[\"'\u201c\u2018\u201e]", inner[1:-1])
        items = [p.strip() for p in parts]
        if all(items) and not any(re.search(r"[\"\u201c\u201d]\s*,|,\s*[\"\u201c\u201d]", p) for p in items):
            return items
        return None
    if allow_unquoted and not re.search(r"[\"\u201c\u201d\[\]{}]", inner):
        items = [p.strip().strip("'\u2018\u2019").strip() for p in inner.split(",")]
        return items if all(items) else None
    return None


def _extract_list(vis: str, allow_unquoted: bool) -> tuple[list[str] | None, str]:
    regions = [m.group(1) for m in _FENCE.finditer(vis)][::-1] + [vis]
    for region in regions:
        stripped = region.strip()
        whole = _load(stripped) if stripped[:1] in "[{(" else None
        items = _as_items(whole) if whole is not None else None
        if items is not None:
            return items, "json-object" if isinstance(whole, dict) else (
                "json" if _is_json(stripped) else "literal"
            )
        for span in reversed(_bracket_spans(region, "{", "}")):
            items = _as_items(_load(span))
            if items is not None:
                return items, "json-object"
        for span in reversed(_bracket_spans(region, "[", "]")):
            loaded = _load(span)
            items = _as_items(loaded)
            if items is not None:
                return items, "json" if _is_json(span) else "literal"
        for span in reversed(_bracket_spans(region, "[", "]")):
            items = _tolerant_items(span, allow_unquoted)
            if items is not None:
                return items, "fallback:tolerant-list"
    return None, "no-list"


def _is_json(chunk: str) -> bool:
    try:
        json.loads(chunk)
    except ValueError:
        return False
    return True


def _line_items(vis: str) -> list[str]:
    items = []
    for line in vis.splitlines():
        m = _LIST_LINE.match(line)
        if m:
            item = (
                _demarkdown(m.group(1)).strip().strip("\"'").strip().rstrip(",").strip().strip("\"'").strip()
            )
            if item:
                items.append(item)
    return items


def parse_string_list(text: str | None) -> Parsed:
    """A list of strings (generated questions, nuggets) in ``items``.

    Rules: ``json`` / ``literal`` (a JSON array or Python list literal, inside a fenced code
    block or surrounded by prose; the last list wins; curly quotes and trailing commas are
    tolerated), ``json-object`` ({"questions": [...]} / {"nuggets": [...]}), then fallbacks
    ``tolerant-list`` (a bracketed list of quoted items that neither parser accepts, e.g. mixed
    quotes) and ``lines`` (numbered or bulleted lines). An empty list is ok with no items.
    Lists of non-strings are unparsed.
    """
    raw = visible_answer(text)
    if not raw:
        return _unparsed("empty")
    vis = unicodedata.normalize("NFKC", _INVISIBLE.sub("", raw))
    items, how = _extract_list(vis, allow_unquoted=False)
    if items is not None:
        return _ok_items([_clean_item(i) for i in items], how)
    if _REFUSAL.match(_normalise(vis)):
        return _refused()
    lines = _line_items(vis)
    if lines:
        return _ok_items([_clean_item(i) for i in lines], "fallback:lines")
    return _unparsed(how)


def _clean_item(item: str) -> str:
    return re.sub(r"\s+", " ", item).strip()


def _norm_label(label: str) -> str:
    s = _normalise(label).lower().strip()
    s = _demarkdown(s).strip().strip("\"'`()[]").strip().rstrip(".,;:!").strip()
    return re.sub(r"[\s\-]+", "_", s).strip("_")


def parse_label_list(text: str | None, vocabulary: Sequence[str], expected_len: int | None = None) -> Parsed:
    """A list of labels from ``vocabulary`` (e.g. ``("vital", "okay")`` or ``("support",
    "partial_support", "not_support")``), one per input item, in ``items``.

    Labels are normalised (case, whitespace, quotes, markdown; spaces and hyphens become
    underscores, so "Partial Support" reads as partial_support), then validated: every label must
    be in the vocabulary (``how="vocabulary:<label>"`` otherwise) and, when ``expected_len`` is
    given, the length must match (``how="length:<got>!=<expected>"``). Either failure is
    unparsed: the caller retries or falls back to one item per call. Accepted forms: a JSON/Python
    list (also unquoted ``[vital, okay]``), {"labels": [...]}, numbered or bulleted lines, or a
    bare comma-separated line of labels.
    """
    vocab = {_norm_label(v): v for v in vocabulary}
    raw = visible_answer(text)
    if not raw:
        return _unparsed("empty")
    vis = unicodedata.normalize("NFKC", _INVISIBLE.sub("", raw))
    items, how = _extract_list(vis, allow_unquoted=True)
    if items is None:
        if _REFUSAL.match(_normalise(vis)):
            return _refused()
        flat = _normalise(vis)
        lines = _line_items(flat)
        if lines:
            items, how = [re.split(r"[:\-]\s+", ln)[-1] for ln in lines], "fallback:lines"
        else:
            body = _demarkdown(flat).strip()
            body = re.sub(r"^(?:labels?|answer|output)\s*:\s*", "", body, flags=re.I)
            tokens = [t for t in re.split(r"[,\n;]+", body) if t.strip()]
            if tokens and all(_norm_label(t) in vocab for t in tokens):
                items, how = tokens, "fallback:comma-separated"
            else:
                return _unparsed("no-list")
    labels = []
    for item in items:
        norm = _norm_label(item)
        if norm not in vocab:
            return _unparsed(f"vocabulary:{norm[:40]}")
        labels.append(vocab[norm])
    if expected_len is not None and len(labels) != expected_len:
        return _unparsed(f"length:{len(labels)}!={expected_len}")
    return _ok_items(labels, how)
