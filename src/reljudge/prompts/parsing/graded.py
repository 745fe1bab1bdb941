"""Graded answers: an integer grade in a range, by an answer marker (UMBRELA's ``##final score:``) or
the fallbacks; EXAM's 0-5 self-rating."""

from __future__ import annotations

import re

from reljudge.prompts.parsing.text import (
    _BARE_NUMBER,
    _NUMBER,
    _OUT_OF,
    _REFUSAL,
    _VALUE_END,
    Parsed,
    _exact_token,
    _is_enumerated,
    _json_value,
    _lines,
    _memo_short,
    _prepare,
    _ranged,
    _ranged_at,
    _refused,
    _scale_conflict,
    _unparsed,
)

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
