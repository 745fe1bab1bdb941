"""Pairwise answers: which of two passages (1/2, A/B, "Passage 2") the model prefers."""

from __future__ import annotations

import re

from reljudge.prompts.parsing.text import (
    _BARE_NUMBER,
    _REFUSAL,
    Parsed,
    _exact_token,
    _is_enumerated,
    _lines,
    _memo_short,
    _ok,
    _prepare,
    _refused,
    _unparsed,
)

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
