"""The built-in "auto" responder: plausible answers in the format each published prompt asks for.

A small registry of rules, tried in order; the first rule whose ``match(req)`` is true answers
``reply(req)``. Labels come from a hash of the judged text (the passage, or both passages), so
the same item always gets the same label and different items get varied labels. Other modules
add rules with ``AutoResponder.register`` (or `default_rules`).

Built-in rules: the vision judges' image grades and grid comparisons (`reljudge.testing.vision`,
tried first); UMBRELA ``##final score: N`` (0-3); Python-list answers for nugget importance
(vital/okay), nugget assignment (support/partial_support/not_support) and nugget/question
generation; JSON ``{"grade": N}`` when the prompt asks for a JSON answer; EXAM self-rating (0-5);
and the relevance prompts of the prompt-sensitivity collection (``prompts.json``), answered in
the format each one asks for (see `answer_format`):

- pairwise prompts (two passage slots) answer ``1``/``2``, ``A``/``B`` or ``Passage A`` as the
  prompt requests, else the name the prompt gives the passages (``Passage_A``, ``Document 1``);
- graded prompts (a 0-3 scale) answer a digit, ``<output> N </output>`` when the prompt's
  example answers in that tag, or a quote, a rationale and ``Score: N`` when it asks for those;
- binary prompts (0/1 answers) answer a digit, in the tag when the example does;
- other relevance questions ("Is the passage relevant ...?") answer ``Yes``/``No``;
- a prompt that asks only for a quote and a rationale (no label) gets just those.
"""

from __future__ import annotations

import json
import re

from reljudge.testing.exchange import MockReply, MockRequest
from reljudge.testing.rules import Matcher, Replier, Rule, label_list, passage_text, stable_choice


def _has(*needles: str) -> Matcher:
    low = [n.lower() for n in needles]
    return lambda req: all(n in req.prompt.lower() for n in low)


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


def _json_reply(req: MockRequest) -> str:
    low = req.prompt.lower()
    for key in ("grade", "score", "relevance", "label", "answer"):
        if f'"{key}"' in low:
            top = 6 if key == "grade" and "5:" in req.prompt else 4
            return "```json\n" + json.dumps({key: stable_choice(passage_text(req), top)}) + "\n```"
    return json.dumps({"score": stable_choice(passage_text(req), 4)})


_QUOTE = "'\"\u2018\u2019\u201c\u201d`"
_Q = f"[{_QUOTE}]"
#: the passage slots of a two-passage prompt: "Passage 1:", "Passage_A':", "Document2:", "<passage B>"
#: (some published prompts carry literal backslash-n sequences: "\\nPassage B:")
_SLOT = re.compile(
    r"(?:<\s*)?(?:(?<![A-Za-z])|(?<=\\n))(passage|document|doc)[\s_]*([12ab])\b\s*(?:" + _Q + r"\s*)?(?::|>)",
    re.IGNORECASE,
)
_GRADED_SCALE = re.compile(
    r"\[3\]|\b4-point\b|" + _Q + r"?\b0" + _Q + r"?\s*(?:to|-|\u2013|and)\s*" + _Q + r"?3\b"
    r"|\b0\s*,\s*1\s*,\s*2\s*,?\s*(?:or\s+|and\s+)?" + _Q + r"?3\b"
    r"|\b3"
    + _Q
    + r"?\s*,\s*"
    + _Q
    + r"?2"
    + _Q
    + r"?\s*,\s*"
    + _Q
    + r"?1"
    + _Q
    + r"?,?\s*(?:or\s+)?"
    + _Q
    + r"?0\b"
    r"|\b(?:output|answer|return)\s+3\s+if\b",
    re.IGNORECASE,
)
_BINARY_ANSWER = re.compile(
    _Q + r"\s*[01]\s*" + _Q + r"|\b[01]\s+(?:for|if|in\s+case|means|indicates|-\s*if)\b"
    r"|\b(?:0\s+or\s+1|1\s+or\s+0|0\s+and\s+1)\b|\b(?:answer|respond|output|return)\s+(?:with\s+)?[01]\b",
    re.IGNORECASE,
)


def _norm_quotes(text: str) -> str:
    return re.sub("[\u2018\u2019]", "'", re.sub("[\u201c\u201d]", '"', text))


def answer_format(req: MockRequest) -> str | None:
    """The kind of answer a relevance prompt asks for: ``pairwise``, ``graded``, ``binary``,
    ``yesno`` (a relevance question with no stated answer format), or None (not a relevance prompt)."""
    prompt = req.prompt
    slots = {m.group(2).lower() for m in _SLOT.finditer(prompt)}
    if ({"1", "2"} <= slots or {"a", "b"} <= slots) and len(_SLOT.findall(req.last_user)) >= 2:
        return "pairwise"
    if _GRADED_SCALE.search(prompt):
        return "graded"
    if _BINARY_ANSWER.search(prompt):
        return "binary"
    if re.search(r"\b(?:is|does|are)\b[^?]{0,300}\brelevant\b[^?]*\?", prompt, re.IGNORECASE):
        return "yesno"
    return None


def _tagged(req: MockRequest, value: str) -> str:
    """``value`` in ``<output>`` tags when the prompt's example answers that way."""
    return f"<output> {value} </output>" if re.search(r"<output>", req.prompt, re.IGNORECASE) else value


def _two_passages(req: MockRequest) -> tuple[str, str]:
    """The texts after the first and the second passage slot of the last user message."""
    text = req.last_user
    slots = list(_SLOT.finditer(text))
    first = next((m for m in slots if m.group(2).lower() in "1a"), None)
    second = next((m for m in slots if m.group(2).lower() in "2b"), None)
    if first is None or second is None:
        return text, ""
    if first.start() < second.start():
        return text[first.end() : second.start()].strip(), text[second.end() :].strip()
    return text[first.end() :].strip(), text[second.end() : first.start()].strip()


def _pairwise_reply(req: MockRequest) -> str:
    first, second = _two_passages(req)
    # per-passage hashes: swapping the passages swaps the answer
    pick_first = stable_choice(first, 1_000_003) >= stable_choice(second, 1_000_003)
    prompt = _norm_quotes(req.prompt)
    if re.search(r"['\"`]\s*[AB]\s*['\"`]|\(A or B\)|single letter", prompt):
        answer = "A" if pick_first else "B"
    elif m := re.search(r"['\"`](passage)\s+A['\"`]", prompt, re.IGNORECASE):
        answer = f"{m.group(1)} {'A' if pick_first else 'B'}"
    elif re.search(r"\b1 or 2\b", prompt):
        answer = "1" if pick_first else "2"
    else:  # no stated format: name the passage as the prompt does
        slot = _SLOT.search(req.last_user)
        label = re.match(r"<?\s*(\w+?)[\s_]*([12ab])\b", slot.group(0), re.IGNORECASE) if slot else None
        if slot is None or label is None:
            answer = "Passage A" if pick_first else "Passage B"
        else:
            name = slot.group(0).lstrip("<").strip()
            sep = name[len(label.group(1)) : name.lower().index(label.group(2).lower(), len(label.group(1)))]
            mark = label.group(2)
            other = {"1": "2", "2": "1", "a": "b", "b": "a", "A": "B", "B": "A"}[mark]
            first_mark = mark if mark.lower() in "1a" else other
            second_mark = other if mark.lower() in "1a" else mark
            answer = f"{label.group(1)}{sep}{first_mark if pick_first else second_mark}"
    return _tagged(req, answer)


def _graded_reply(req: MockRequest) -> str:
    grade = stable_choice(passage_text(req), 4)
    low = req.prompt.lower()
    if "quote" in low and "rationale" in low:
        words = passage_text(req).split()[:8]
        quote = " ".join(words)
        return f'Quote: "{quote}"\nRationale: the quote is what the passage says about the query.\nScore: {grade}'
    marker = re.search(r'with "([^"\n{}]{1,30}?:)\s*N"', req.prompt)  # 'End your answer with "Score: N"'
    if marker:
        return f"The passage was read against the query.\n{marker.group(1)} {grade}"
    return _tagged(req, str(grade))


def _quote_rationale(req: MockRequest) -> str:
    """A prompt that asks for a quote and a rationale but names no label: exactly that, and a
    verdict in words (no label a parser may read)."""
    quote = " ".join(passage_text(req).split()[:8])
    verdict = "addresses" if stable_choice(passage_text(req), 2) else "does not address"
    return f'Quote: "{quote}"\nRationale: the quote shows that the document {verdict} the information the query needs.'


def _binary_reply(req: MockRequest) -> str:
    return _tagged(req, str(stable_choice(passage_text(req), 2)))


def _asks_json(req: MockRequest) -> bool:
    """The prompt asks for a JSON answer (not just JSON input)."""
    low = req.prompt.lower()
    return bool(
        re.search(r"\b(?:respond|answer|reply|output|return|format)\w*\b[^.\n]{0,40}\bjson\b", low)
        and not re.search(r"\bgiven\b[^.\n]{0,60}\bin json format\b", low)
    ) or bool(re.search(r"\{\s*\"(?:grade|score|relevance|label|answer)\"\s*:", low))


def default_rules() -> list[Rule]:
    from reljudge.testing.rules_methods import method_rules  # EXAM / yes-no / nugget-creation rules
    from reljudge.testing.vision import vision_rules  # prompts that show images

    return [
        *vision_rules(),
        *method_rules(),
        Rule(
            "umbrela", _has("##final score"), lambda r: f"##final score: {stable_choice(passage_text(r), 4)}"
        ),
        Rule(
            "nugget-assign",
            _has("support", "not_support"),
            lambda r: label_list(r, ("support", "partial_support", "not_support"), (1, 1, 2)),
        ),
        Rule("nugget-score", _has("vital", "okay"), lambda r: label_list(r, ("vital", "okay"), (1, 1))),
        Rule("json", _asks_json, _json_reply),
        Rule(
            "list",
            lambda r: bool(
                re.search(r"python(ic)? list|list in the form|list format", r.prompt, re.IGNORECASE)
            ),
            _generated_list,
        ),
        Rule(
            "self-rating",
            _has("choose one", "- 5:", "- 0:"),
            lambda r: str(stable_choice(passage_text(r), 6)),
        ),
        Rule("pairwise", lambda r: answer_format(r) == "pairwise", _pairwise_reply),
        Rule("graded", lambda r: answer_format(r) == "graded", _graded_reply),
        Rule("binary", lambda r: answer_format(r) == "binary", _binary_reply),
        Rule(
            "yesno-question",
            lambda r: answer_format(r) == "yesno",
            lambda r: "Yes" if stable_choice(passage_text(r), 2) else "No",
        ),
        Rule("quote-rationale", _has("quote", "rationale"), _quote_rationale),
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
