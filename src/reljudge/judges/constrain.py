"""Constrained output: from a judge's declared output (`reljudge.prompts.OutputSpec`), the
request fields that make a backend produce only valid answers. The prompt text is not touched.

Mechanisms (`MECHANISMS`):

- ``grammar``: llama.cpp's GBNF ``grammar`` field -- the exact answers the prompt asks for
  (``0``/``1``, ``Yes``/``No``, ``##final score: 0``..``3``);
- ``guided-choice``: vLLM's ``guided_choice``, the same answers as a list;
- ``json-schema``: OpenAI structured outputs (``response_format`` with a JSON schema whose
  ``label`` is an enum of the scale; the answer ``{"label": 2}`` is read by the parsers' JSON rule);
- ``ollama-format``: Ollama's ``format`` with the same schema.

`auto_mechanism` asks the backend for its own (`reljudge.llm.backends.capabilities`): Ollama ->
``ollama-format``; OpenAI's own API -> ``json-schema``; another OpenAI-compatible server ->
``grammar`` (llama.cpp; choose ``guided-choice`` for vLLM).
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["MECHANISMS", "auto_mechanism", "constraint_params", "valid_answers"]

MECHANISMS: tuple[str, ...] = ("grammar", "guided-choice", "json-schema", "ollama-format")


def _grades(output: Any) -> list[int] | None:
    if output.type == "binary" and output.style != "answerability":
        return [0, 1]
    if output.type == "graded":
        lo, hi = output.range
        return list(range(lo, hi + 1))
    return None


def valid_answers(output: Any) -> list[str] | None:
    """The exact answers the prompt asks for, or None when its output cannot be constrained
    (answerability, lists, pairwise)."""
    grades = _grades(output)
    if grades is None:
        return None
    if output.type == "binary":
        return ["Yes", "No"] if output.style == "yesno" else ["0", "1"]
    if output.marker:
        return [f"{output.marker.strip()} {g}" for g in grades]
    return [str(g) for g in grades]


def _schema(output: Any) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {"label": {"type": "integer", "enum": _grades(output)}},
        "required": ["label"],
        "additionalProperties": False,
    }


def constraint_params(output: Any, mechanism: str) -> dict[str, Any]:
    """The request fields of ``mechanism`` for a prompt whose declared output is ``output``.
    Raises ValueError when the output cannot be constrained or the mechanism is unknown."""
    if mechanism not in MECHANISMS:
        raise ValueError(f"unknown constraint {mechanism!r}; choose one of {', '.join(MECHANISMS)}")
    answers = valid_answers(output)
    if answers is None:
        raise ValueError(f"a prompt that answers {output.describe()} cannot be constrained to a label")
    if mechanism == "grammar":
        return {"grammar": "root ::= " + " | ".join(json.dumps(a) for a in answers)}
    if mechanism == "guided-choice":
        return {"guided_choice": answers}
    if mechanism == "json-schema":
        return {
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": "judgment", "strict": True, "schema": _schema(output)},
            }
        }
    return {"format": _schema(output)}


def auto_mechanism(backend: str, base_url: str | None) -> str:
    """The native mechanism of a backend (see the module docstring); ValueError when it has none."""
    from reljudge.llm.backends import BACKENDS

    known = BACKENDS.get(backend)
    mechanism = known.constraint_mechanism(base_url) if known is not None else None
    if mechanism is not None:
        return mechanism
    raise ValueError(
        f"no known constrained-output mechanism for the {backend} backend; choose one of {', '.join(MECHANISMS)}"
    )
