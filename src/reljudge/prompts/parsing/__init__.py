"""Parse LLM answers into labels by a prompt's output contract, never guessing a label that is not
there.

Every parser is a pure function returning `Parsed(label, status, how, items)`:

- ``status`` is ``ok``, ``unparsed`` (no label could be read; empty output, ambiguous or out of
  range) or ``refused`` (the model declined: "I'm sorry, I can't ...");
- ``label`` is the label (int) when ``status == "ok"``, else None;
- ``items`` holds the strings of list parsers (generated questions, nuggets, labels);
- ``how`` names the rule that produced the result: ``marker``, ``exact``, ``labelled``,
  ``json``, ``literal``, or ``fallback:<name>`` for the more lenient rules, and for failures the
  reason (``empty``, ``marker:out-of-range``, ``ambiguous``, ...). Aggregate ``how`` to see how
  much of a run relied on fallbacks.

Common rules. Reasoning inside ``<think>...</think>`` (also ``<thinking>``, ``<reasoning>``) is
removed first and never read for a label; with only reasoning and no visible answer the result
is ``unparsed``. Curly quotes are read as straight quotes, markdown emphasis is ignored, and
Unicode is NFKC-normalised (full-width digits). The contract rule of a prompt (the answer marker,
an answer that is exactly the label) is tried first; fallbacks are tried only when it finds
nothing, in a fixed order, and never a loose "any digit anywhere" rule ahead of the marker. A
value outside the declared range is ``unparsed``, never clamped.
"""

from reljudge.prompts.parsing.binary import parse_binary, parse_exam_answerability
from reljudge.prompts.parsing.choice import parse_choice
from reljudge.prompts.parsing.graded import parse_graded, parse_self_rating
from reljudge.prompts.parsing.lists import parse_label_list, parse_string_list
from reljudge.prompts.parsing.pairwise import parse_pairwise
from reljudge.prompts.parsing.text import Parsed, ParseStatus, is_refusal, parse_answer_text, visible_answer

__all__ = [
    "ParseStatus",
    "Parsed",
    "is_refusal",
    "parse_answer_text",
    "parse_binary",
    "parse_choice",
    "parse_exam_answerability",
    "parse_graded",
    "parse_label_list",
    "parse_pairwise",
    "parse_self_rating",
    "parse_string_list",
    "visible_answer",
]
