"""Checking a judge's constructor options: a prompt option (a template or the id of a bundled
prompt) and the output it declares, an option with a fixed set of values, and ``max_tokens``."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from reljudge.errors import InputError

if TYPE_CHECKING:
    from reljudge.prompts import PromptTemplate


def resolve_prompt(prompt: Any, *, option: str = "prompt") -> PromptTemplate:
    """A `PromptTemplate` from an option value: a template, or the id of a bundled prompt."""
    from reljudge.prompts import PromptTemplate, get_prompt

    if isinstance(prompt, PromptTemplate):
        return prompt
    if isinstance(prompt, str):
        try:
            return get_prompt(prompt)
        except InputError:
            raise
        except (KeyError, LookupError, ValueError, FileNotFoundError) as err:
            raise InputError(f"{option}: unknown prompt {prompt!r} ({err})") from None
    raise TypeError(f"option {option!r} must be a prompt id or a PromptTemplate, got {type(prompt).__name__}")


def check_choice(option: str, value: Any, choices: Iterable[Any]) -> None:
    allowed = list(choices)
    if value not in allowed:
        raise InputError(f"option {option}={value!r}: expected one of {', '.join(map(repr, allowed))}")


def check_max_tokens(max_tokens: Any) -> None:
    """A `TypeError` unless ``max_tokens`` is None (the judge's own answer budget) or a positive integer."""
    if max_tokens is not None and (not isinstance(max_tokens, int) or max_tokens < 1):
        raise TypeError(f"max_tokens must be a positive integer, got {max_tokens!r}")


def check_output(prompt: PromptTemplate, types: Iterable[str], judge: str, option: str = "prompt") -> None:
    """An `InputError` unless the prompt's declared output type is one the judge can read."""
    allowed = tuple(types)
    if prompt.output.type not in allowed:
        raise InputError(
            f"{option} {prompt.id!r} answers {prompt.output.describe()}, but the {judge} judge needs "
            f"{' or '.join(allowed)} output"
        )
