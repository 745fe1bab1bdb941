"""Expected relevance from token log-probabilities: the model's distribution over the grades of a
one-token label scale, read at the position of the label in the model's own answer.

The label position is never guessed from the text ("the last digit"): it is the token whose
replacement changes what the judge's own reading (`reljudge.judges.reading.read_text`, with the
echo and copied-text rules and the prompt's parser) gets from the answer. Each alternative token
the provider lists at that position is put in the answer's place and read the same way, so the
alternatives that read as a grade of the scale ("2", " 2", "Yes", " yes") count for that grade and
the others (a word, a grade off the scale, an unreadable answer) count as mass outside the scale.
A prompt's or a passage's text is never read: the tokens come from the answer, and a stretch of
the answer copied from the prompt is blanked by the reading before any grade is read from it.

The distribution over the valid grades is renormalised (``p``); ``outside`` is the probability
the provider gave to everything else (alternatives off the scale and the tail beyond its top-k
list), and ``expected`` is the mean grade under ``p``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__ = ["MAX_ALTERNATIVES", "MAX_PROBES", "label_distribution", "one_token_scale"]

#: the most alternative tokens read at the label position (providers list at most 20)
MAX_ALTERNATIVES = 32
#: the most token positions tried when looking for the label position
MAX_PROBES = 64
#: what a token is replaced by to see whether the label rests on it
_NEUTRAL = "\u00a7"

Reader = Callable[[str], "int | float | None"]


def one_token_scale(output: Any) -> tuple[int, ...] | None:
    """The grades of a prompt output contract whose every grade is one token (binary 0/1, a
    graded range within 0-9, pairwise 1/2), else None. Judges call this for their own prompts
    (`reljudge.judges.base.Judge.label_scale`)."""
    kind = getattr(output, "type", None)
    if kind == "binary" and getattr(output, "style", None) != "answerability":
        return (0, 1)
    if kind == "pairwise":
        return (1, 2)
    if kind == "graded":
        lo, hi = output.range
        if 0 <= lo < hi <= 9:
            return tuple(range(lo, hi + 1))
    return None


def _spans(text: str, tokens: Sequence[str]) -> list[tuple[int, int]] | None:
    """Where each token lies in ``text``: tokens that spell the answer, possibly with whitespace
    between them (a provider that drops it); None when they do not."""
    spans: list[tuple[int, int]] = []
    at = 0
    for token in tokens:
        if not token:
            spans.append((at, at))
            continue
        where = text.find(token, at)
        if where < 0 or (where > at and not text[at:where].isspace()):
            return None
        spans.append((where, where + len(token)))
        at = where + len(token)
    if text[at:].strip():
        return None
    return spans


def _label_position(
    text: str, spans: Sequence[tuple[int, int]], label: int | float, read: Reader
) -> int | None:
    """The token the reading takes ``label`` from: the last one whose replacement changes it."""
    probes = 0
    for i in range(len(spans) - 1, -1, -1):
        start, end = spans[i]
        if end <= start or not text[start:end].strip():
            continue
        probes += 1
        if probes > MAX_PROBES:
            return None
        if read(text[:start] + _NEUTRAL + text[end:]) != label:
            return i
    return None


def label_distribution(
    text: str | None,
    logprobs: Sequence[Mapping[str, Any]] | None,
    label: int | float | None,
    scale: Sequence[int],
    read: Reader,
) -> dict[str, Any]:
    """The distribution over ``scale`` at the label position of ``text`` (see the module doc):
    ``{"scale", "position", "token", "p": {grade: prob}, "outside", "expected"}``, or
    ``{"unavailable": reason}``. ``read(answer)`` is the label the judge reads from an answer
    (None when it reads none); ``label`` is what it read from ``text``. Never raises for odd
    provider data."""
    if not logprobs:
        return {"unavailable": "no log-probabilities in the answer"}
    if label is None or not isinstance(text, str):
        return {"unavailable": "no label"}
    if label not in scale:
        return {"unavailable": f"label {label!r} is not on the scale"}
    tokens = [item.get("token") for item in logprobs]
    if not all(isinstance(t, str) for t in tokens):
        return {"unavailable": "a token is not text"}
    spans = _spans(text, tokens)  # type: ignore[arg-type]
    if spans is None:
        return {"unavailable": "the tokens do not spell the answer"}
    position = _label_position(text, spans, label, read)
    if position is None:
        return {"unavailable": "no token of the answer carries the label"}
    start, end = spans[position]
    item = logprobs[position]
    chosen = text[start:end]
    alternatives = _alternatives(item, chosen)
    mass: dict[int, float] = {}
    for token, prob in alternatives:
        got = label if token == chosen else read(text[:start] + token + text[end:])
        if got in scale and isinstance(got, (int, float)) and float(got).is_integer():
            mass[int(got)] = mass.get(int(got), 0.0) + prob
    valid = math.fsum(mass.values())
    if valid <= 0:
        return {"unavailable": "no probability on the scale at the label position"}
    p = {str(g): mass.get(g, 0.0) / valid for g in scale}
    return {
        "scale": list(scale),
        "position": position,
        "token": chosen,
        "p": p,
        "outside": max(0.0, 1.0 - valid),
        "expected": math.fsum(g * mass.get(g, 0.0) for g in scale) / valid,
    }


def _alternatives(item: Mapping[str, Any], chosen: str) -> list[tuple[str, float]]:
    """(token, probability) of the chosen token and its listed alternatives, each token once."""
    seen: dict[str, float] = {}
    tops = item.get("top_logprobs") or []
    entries = [{"token": chosen, "logprob": item.get("logprob")}, *tops[:MAX_ALTERNATIVES]]
    for entry in entries:
        token, logprob = entry.get("token"), entry.get("logprob")
        if not isinstance(token, str) or token in seen:
            if token == chosen and token in seen and seen[token] == 0.0:
                seen[token] = _prob(logprob)
            continue
        seen[token] = _prob(logprob)
    return list(seen.items())


def _prob(logprob: Any) -> float:
    """A probability from a provider's log-probability, clamped to [0, 1]."""
    if isinstance(logprob, bool) or not isinstance(logprob, (int, float)) or math.isnan(logprob):
        return 0.0
    return min(1.0, math.exp(min(0.0, float(logprob))))
