"""List answers: generated questions or nuggets (strings), and one label per item from a vocabulary."""

from __future__ import annotations

import ast
import json
import re
import unicodedata
from collections.abc import Sequence

from reljudge.prompts.parsing.text import (
    _INVISIBLE,
    _QUOTES,
    _REFUSAL,
    Parsed,
    _demarkdown,
    _normalise,
    _ok_items,
    _refused,
    _unparsed,
    visible_answer,
)

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
