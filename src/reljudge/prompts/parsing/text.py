"""What every answer parser shares: the `Parsed` result, the preparation of an answer (hidden
reasoning removed, Unicode normalised, markdown dropped), refusals, and the rules for reading a
number: an exact answer, a labelled one ("Score: 2"), its range and its scale."""

from __future__ import annotations

import functools
import json
import re
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Literal, TypeVar

ParseStatus = Literal["ok", "unparsed", "refused"]


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


def parse_answer_text(text: str | None) -> Parsed:
    """A generated answer (output type ``answer``): the visible text (hidden reasoning removed,
    `visible_answer`), stripped, as the one item; no label. An empty answer is ``unparsed``. A
    refusal is kept as the answer it is (an evaluation of answers should see it)."""
    answer = visible_answer(text).strip()
    if not answer:
        return _unparsed("empty")
    return Parsed(label=None, status="ok", how="text", items=(answer,))


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
