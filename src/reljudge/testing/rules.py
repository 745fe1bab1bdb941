"""What auto-responder rules are made of: a `Rule` (a name, a matcher, a replier) and the
helpers that make answers depend only on the request text (`stable_choice`, `passage_text`,
`label_list`). Used by `reljudge.testing.auto` and `reljudge.testing.rules_methods`.
"""

from __future__ import annotations

import ast
import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass

from reljudge.testing.exchange import MockRequest

Matcher = Callable[[MockRequest], bool]
Replier = Callable[[MockRequest], str]


@dataclass(frozen=True)
class Rule:
    name: str
    match: Matcher
    reply: Replier


def stable_choice(text: str, n: int, salt: str = "") -> int:
    """A deterministic integer in ``range(n)`` from ``text``."""
    digest = hashlib.sha256(f"{salt}|{text}".encode()).digest()
    return int.from_bytes(digest[:8], "big") % n


_PASSAGE = re.compile(r"(?:^|\n)\s*(?:Passage|Context|Document|Text)\s*:\s*(.*)", re.IGNORECASE | re.DOTALL)


def passage_text(req: MockRequest) -> str:
    """The judged text: what follows the last "Passage:"/"Context:" label, else the last user message."""
    user = req.last_user
    matches = list(_PASSAGE.finditer(user))
    return matches[-1].group(1).strip() if matches else user


def _last_list(text: str) -> list | None:
    """The last Python/JSON list literal in the text, if any."""
    for match in reversed(list(re.finditer(r"\[[^\[\]]*\]", text, re.DOTALL))):
        try:
            value = ast.literal_eval(match.group(0))
        except (ValueError, SyntaxError):
            continue
        if isinstance(value, list):
            return value
    return None


def _count_hint(prompt: str) -> int | None:
    m = re.search(r"each of the (\d+) nuggets", prompt)
    return int(m.group(1)) if m else None


def label_list(req: MockRequest, labels: tuple[str, ...], weights: tuple[int, ...]) -> str:
    items = _last_list(req.last_user) or []
    n = _count_hint(req.prompt) or len(items) or 1
    pool = [lab for lab, w in zip(labels, weights, strict=True) for _ in range(w)]
    base = passage_text(req)
    out = [pool[stable_choice(f"{base}|{items[i] if i < len(items) else i}", len(pool))] for i in range(n)]
    return json.dumps(out)
