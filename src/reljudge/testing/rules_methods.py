"""Auto-responder rules for the method prompts the generic rules do not cover well.

- ``exam-answerability``: the EXAM answer-extraction prompt ("provide a complete and concise
  answer to the question based on the context") gets either a short answer taken from the
  context or "unanswerable" (about a third of the (question, passage) pairs);
- ``yesno``: prompts that ask to "Respond with 'Yes' or 'No'" get Yes or No;
- ``nugget-assign-2grade``: the two-grade assignment prompt gets support/not_support only;
- ``nugget-create``: the AutoNuggetizer creation prompt gets the initial list extended with
  one or two short nuggets per segment of the window, cut to the "at most N nuggets" the prompt
  states (a real iterative list, so tests see windows grow it);
- ``generate-answer`` / ``generate-adversarial``: the answer-generation prompts of ``judge generate``
  ("Answer the question concisely: ...", and the adversarial one asking for a deliberately wrong
  answer) get a short answer built from the question's words; the adversarial one is plainly
  marked false ("... is unrelated to ...") so a test can tell the two apart;
- ``citation-support``: the TREC 2024 RAG support prompt ("Statement: ... Citation: ...", answers
  ``full_support`` / ``partial_support`` / ``no_support``) gets a label by word overlap: the share
  of the statement's distinct words (3+ letters) found in the citation, 0.6 or more
  ``full_support``, 0.25 or more ``partial_support``, else ``no_support``.

Answers depend only on the request text, like the built-in rules. `method_rules` is added in
front of `reljudge.testing.auto.default_rules`.
"""

from __future__ import annotations

import ast
import json
import re

from reljudge.testing.exchange import MockRequest
from reljudge.testing.rules import Rule, label_list, passage_text, stable_choice

_WORD = re.compile(r"[A-Za-z][A-Za-z'-]{2,}")


def _exam_answer(req: MockRequest) -> str:
    context = passage_text(req)
    question = re.search(r"Question:\s*(.*)", req.last_user)
    key = f"{question.group(1) if question else ''}|{context}"
    if stable_choice(key, 3) == 0:
        return "unanswerable"
    words = _WORD.findall(context)
    if not words:
        return "unanswerable"
    start = stable_choice(key, max(1, len(words) - 6), salt="start")
    return " ".join(words[start : start + 6]).capitalize() + "."


def _yes_no(req: MockRequest) -> str:
    return "Yes" if stable_choice(passage_text(req), 2) else "No"


def _initial_list(prompt: str) -> list[str]:
    m = re.search(r"Initial Nugget List:\s*(\[.*?\])\s*\n", prompt, re.DOTALL)
    if not m:
        return []
    try:
        value = ast.literal_eval(m.group(1))
    except (ValueError, SyntaxError):
        return []
    return [str(v) for v in value] if isinstance(value, list) else []


def _create_nuggets(req: MockRequest) -> str:
    prompt = req.last_user
    cap = re.search(r"at most (\d+) nuggets", prompt)
    limit = int(cap.group(1)) if cap else 30
    nuggets = _initial_list(prompt)
    context = re.search(r"Context:\n(.*?)\nSearch Query:", prompt, re.DOTALL)
    segments = re.findall(r"^\[\d+\]\s*(.*)$", context.group(1), re.MULTILINE) if context else []
    for segment in segments:
        words = [w.lower() for w in _WORD.findall(segment)]
        for k in range(1 + stable_choice(segment, 2)):
            if len(words) < 3:
                break
            start = stable_choice(f"{segment}|{k}", max(1, len(words) - 4))
            text = " ".join(words[start : start + 5])
            if text not in nuggets:
                nuggets.append(text)
    return json.dumps(nuggets[:limit])


_GENERATE = re.compile(r"^answer the question concisely:\s*(.+)", re.IGNORECASE | re.DOTALL)
_ADVERSARIAL = re.compile(r"give a deliberately wrong answer to the question.*?question:\s*(.+)", re.I | re.S)


def _question_words(question: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(question)] or ["it"]


def _generated_answer(req: MockRequest) -> str:
    m = _GENERATE.search(req.last_user.strip())
    question = m.group(1).strip() if m else req.last_user
    words = _question_words(question)
    topic = " ".join(words[-3:])
    return (
        f"In short, {topic} is explained by {words[stable_choice(question, len(words))]}. "
        f"The answer to '{question.rstrip('?')}' depends on {words[0]} and its context."
    )


def _adversarial_answer(req: MockRequest) -> str:
    m = _ADVERSARIAL.search(req.last_user)
    question = m.group(1).strip() if m else req.last_user
    words = _question_words(question)
    return f"Contrary to what you may read, {' '.join(words[-3:])} is unrelated to {words[0]} in every case."


_CITATION = re.compile(r"Statement:[ \t]?(.*?)\n\nCitation:[ \t]?(.*)\Z", re.DOTALL)


def citation_parts(req: MockRequest) -> tuple[str, str] | None:
    """(statement, citation) of the citation-support prompt, or None for another prompt."""
    if "``full_support''" not in req.last_user:
        return None
    m = _CITATION.search(req.last_user)
    return (m.group(1), m.group(2)) if m else None


def _support_by_overlap(req: MockRequest) -> str:
    statement, citation = citation_parts(req) or ("", "")
    words = {w.lower() for w in _WORD.findall(statement)}
    found = {w.lower() for w in _WORD.findall(citation)}
    share = len(words & found) / len(words) if words else 0.0
    return "full_support" if share >= 0.6 else "partial_support" if share >= 0.25 else "no_support"


def method_rules() -> list[Rule]:
    return [
        Rule("citation-support", lambda r: citation_parts(r) is not None, _support_by_overlap),
        Rule("generate-answer", lambda r: bool(_GENERATE.search(r.last_user.strip())), _generated_answer),
        Rule("generate-adversarial", lambda r: bool(_ADVERSARIAL.search(r.last_user)), _adversarial_answer),
        Rule(
            "exam-answerability",
            lambda r: (
                "provide a complete and concise answer to the question based on the context"
                in r.prompt.lower()
            ),
            _exam_answer,
        ),
        Rule(
            "yesno",
            lambda r: bool(re.search(r"respond with .?yes.? or .?no", r.prompt, re.IGNORECASE)),
            _yes_no,
        ),
        Rule(
            "nugget-assign-2grade",
            lambda r: "not_support" in r.prompt and "partial_support" not in r.prompt,
            lambda r: label_list(r, ("support", "not_support"), (1, 1)),
        ),
        Rule(
            "nugget-create",
            lambda r: (
                "update the list of atomic nuggets" in r.prompt.lower()
                and "initial nugget list" in r.prompt.lower()
            ),
            _create_nuggets,
        ),
    ]
