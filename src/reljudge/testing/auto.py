"""The built-in "auto" responder: plausible answers in the format each published prompt asks for.

A small registry of rules, tried in order; the first rule whose ``match(req)`` is true answers
``reply(req)``. Labels come from a hash of the judged text (the passage, or both passages), so
the same item always gets the same label and different items get varied labels. Other modules
add rules with ``AutoResponder.register`` (or `default_rules`).

Built-in rules: UMBRELA ``##final score: N`` (0-3); pairwise "answer 1 or 2"; binary
"1 for yes and 0 for no"; graded "categories 0, 1, 2 or 3"; JSON ``{"grade": N}`` / generic JSON;
Python-list answers for nugget importance (vital/okay), nugget assignment
(support/partial_support/not_support) and nugget/question generation.
"""

from __future__ import annotations

import ast
import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass

from reljudge.testing.server import MockReply, MockRequest

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


def _has(*needles: str) -> Matcher:
    low = [n.lower() for n in needles]
    return lambda req: all(n in req.prompt.lower() for n in low)


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


def _label_list(req: MockRequest, labels: tuple[str, ...], weights: tuple[int, ...]) -> str:
    items = _last_list(req.last_user) or []
    n = _count_hint(req.prompt) or len(items) or 1
    pool = [lab for lab, w in zip(labels, weights, strict=True) for _ in range(w)]
    base = passage_text(req)
    out = [pool[stable_choice(f"{base}|{items[i] if i < len(items) else i}", len(pool))] for i in range(n)]
    return json.dumps(out)


def _generated_list(req: MockRequest) -> str:
    words = [w for w in re.findall(r"[A-Za-z][A-Za-z'-]{3,}", req.last_user) if w.lower() not in _STOP][:40]
    n = 3 + stable_choice(req.last_user, 6)
    topic = " ".join(words[:3]) or "the topic"
    questions = "question" in req.prompt.lower() and "nugget" not in req.prompt.lower()
    items = []
    for i in range(n):
        w = words[stable_choice(f"{req.last_user}|{i}", len(words))] if words else "detail"
        items.append(f"What is the role of {w} in {topic}?" if questions else f"{topic} involves {w}")
    return json.dumps(items)


_STOP = frozenset(
    "this that with from have will your what when which their there about into only each more than".split()
)


def _pairwise(req: MockRequest) -> str:
    text = req.last_user
    a = re.search(r"Passage 1\s*:(.*?)(?:Passage 2\s*:|$)", text, re.DOTALL | re.IGNORECASE)
    b = re.search(r"Passage 2\s*:(.*)", text, re.DOTALL | re.IGNORECASE)
    first = a.group(1).strip() if a else text
    second = b.group(1).strip() if b else ""
    # Compare per-passage hashes so swapping the passages swaps the answer.
    return "1" if stable_choice(first, 1_000_003) >= stable_choice(second, 1_000_003) else "2"


def _json_reply(req: MockRequest) -> str:
    low = req.prompt.lower()
    for key in ("grade", "score", "relevance", "label", "answer"):
        if f'"{key}"' in low:
            top = 6 if key == "grade" and "5:" in req.prompt else 4
            return "```json\n" + json.dumps({key: stable_choice(passage_text(req), top)}) + "\n```"
    return json.dumps({"score": stable_choice(passage_text(req), 4)})


def default_rules() -> list[Rule]:
    from reljudge.testing.rules_methods import method_rules  # EXAM / yes-no / nugget-creation rules

    return [
        *method_rules(),
        Rule(
            "umbrela", _has("##final score"), lambda r: f"##final score: {stable_choice(passage_text(r), 4)}"
        ),
        Rule(
            "pairwise",
            lambda r: "passage 1" in r.prompt.lower() and "passage 2" in r.prompt.lower(),
            _pairwise,
        ),
        Rule(
            "binary",
            lambda r: bool(
                re.search(r"1 for yes and 0 for no|\b0 or 1\b|\b1 or 0\b", r.prompt, re.IGNORECASE)
            ),
            lambda r: str(stable_choice(passage_text(r), 2)),
        ),
        Rule(
            "nugget-assign",
            _has("support", "not_support"),
            lambda r: _label_list(r, ("support", "partial_support", "not_support"), (1, 1, 2)),
        ),
        Rule("nugget-score", _has("vital", "okay"), lambda r: _label_list(r, ("vital", "okay"), (1, 1))),
        Rule("json", _has("json"), _json_reply),
        Rule(
            "list",
            lambda r: bool(
                re.search(r"python(ic)? list|list in the form|list format", r.prompt, re.IGNORECASE)
            ),
            _generated_list,
        ),
        Rule(
            "graded",
            lambda r: bool(re.search(r"0, 1, 2,? (?:or|and) 3", r.prompt)),
            lambda r: str(stable_choice(passage_text(r), 4)),
        ),
        Rule(
            "self-rating",
            _has("choose one", "- 5:", "- 0:"),
            lambda r: str(stable_choice(passage_text(r), 6)),
        ),
    ]


class AutoResponder:
    """Rule-based responder; falls back to ``fallback`` text when no rule matches."""

    def __init__(
        self, rules: list[Rule] | None = None, fallback: str = "I am not sure how to answer that."
    ) -> None:
        self.rules = list(default_rules() if rules is None else rules)
        self.fallback = fallback
        self.hits: dict[str, int] = {}

    def register(self, name: str, match: Matcher, reply: Replier, *, first: bool = True) -> None:
        """Add a rule (tried before the built-in ones unless ``first=False``)."""
        rule = Rule(name, match, reply)
        self.rules = [rule, *self.rules] if first else [*self.rules, rule]

    def rule_for(self, req: MockRequest) -> Rule | None:
        return next((rule for rule in self.rules if rule.match(req)), None)

    def __call__(self, req: MockRequest) -> MockReply:
        rule = self.rule_for(req)
        name = rule.name if rule else "fallback"
        self.hits[name] = self.hits.get(name, 0) + 1
        return MockReply(text=rule.reply(req) if rule else self.fallback)
