"""One label from a vocabulary (``output: choice``), e.g. ``full_support`` / ``partial_support`` /
``no_support``: the answer is exactly one label (bare, quoted, bracketed: `parse_label_list` with
one item), a JSON object whose single field holds one label (``{"support": "full_support"}``,
the shape a structured-output schema gives), or a label that starts the answer followed by
punctuation or an explanation (``full_support. The statement is ...``). An answer that names two
different labels is unparsed: a label is read only where the answer commits to one.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Sequence

from reljudge.prompts.parsing.lists import _FENCE, _norm_label, parse_label_list
from reljudge.prompts.parsing.text import Parsed, _demarkdown, _normalise, _unparsed, visible_answer

#: the longest answer read as a JSON object (a label in a one-field object is short)
_MAX_OBJECT_CHARS = 2_000


def _label_pattern(label: str) -> str:
    """A label as written in prose: its parts joined by ``_``, ``-`` or spaces, any case."""
    parts = [re.escape(p) for p in re.split(r"[_\s\-]+", label) if p]
    return r"[_\s\-]+".join(parts)


def _mentions(text: str, vocabulary: Sequence[str]) -> set[str]:
    """The labels ``text`` names (as words, in any of their written forms)."""
    return {
        v for v in vocabulary if re.search(rf"(?<![A-Za-z0-9]){_label_pattern(v)}(?![A-Za-z0-9])", text, re.I)
    }


def _one_field(body: str, vocab: dict[str, str]) -> str | None:
    """The label a JSON object with exactly one field holds, else None."""
    fenced = _FENCE.fullmatch(body)
    if fenced:
        body = fenced.group(1).strip()
    if not (body.startswith("{") and body.endswith("}")) or len(body) > _MAX_OBJECT_CHARS:
        return None
    try:
        value = json.loads(body)
    except (ValueError, RecursionError):
        return None
    if not isinstance(value, dict) or len(value) != 1:
        return None
    inner = next(iter(value.values()))
    if not isinstance(inner, str):
        return None
    return vocab.get(_norm_label(inner))


def parse_choice(text: str | None, vocabulary: Sequence[str]) -> Parsed:
    """One label of ``vocabulary`` in ``items`` (see the module docstring). ``how``: ``label``
    (the bare label), ``json``/``literal``/... (a one-item list, as `parse_label_list`),
    ``json-field`` (a one-field object), ``label-first`` (the label, then an explanation)."""
    found = parse_label_list(text, vocabulary, 1)
    if found.status == "ok":
        if found.how == "fallback:comma-separated":
            return Parsed(None, "ok", "label", found.items)  # the bare label asked for
        return found
    if found.status == "refused":
        return found
    vocab = {_norm_label(v): v for v in vocabulary}
    raw = _normalise(unicodedata.normalize("NFKC", visible_answer(text))).strip()
    label = _one_field(raw, vocab)
    if label is not None:
        return Parsed(None, "ok", "json-field", (label,))
    body = _demarkdown(raw).strip()
    starts = [
        v
        for v in vocabulary
        if re.match(rf"[\s\"'(\[]*{_label_pattern(v)}[\"')\]]*(?:$|[\s.,;:!?\-])", body, re.I)
    ]
    if len(starts) != 1:
        return found
    named = _mentions(body, vocabulary)
    if named != {starts[0]}:
        return _unparsed("ambiguous")  # the explanation names another label
    return Parsed(None, "ok", "label-first", (starts[0],))
