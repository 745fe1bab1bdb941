"""Errors that reach the user.

`InputError` is the one exception for bad input (files, options, configs): it names the file,
the line when there is one, and what is wrong. The CLI turns it into a one-line message and
exit code 2. Library callers can catch it like any other exception. `MissingExtraError` says
that an optional dependency is missing and names the extra that installs it.
"""

from __future__ import annotations

import reprlib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pydantic is imported by the callers; `judge --help` need not load it
    from pydantic import ValidationError

EXIT_OK = 0
EXIT_FAILURE = 1  # the job ran but failed (e.g. failure rate above --max-failure-rate)
EXIT_BAD_INPUT = 2
#: the job stopped at its cost cap (``judge run --max-cost``): everything kept, a higher cap resumes
EXIT_BUDGET = 3


#: longest `shown` value in an error message
SHOWN_CHARS = 80

_REPR = reprlib.Repr()
_REPR.maxlevel = 3
_REPR.maxstring = SHOWN_CHARS
_REPR.maxother = SHOWN_CHARS


def shown(value: Any, limit: int = SHOWN_CHARS) -> str:
    """A value from a file or a provider, written for an error message: a repr of at most
    ``limit`` characters. Never put an unvalidated value in a message with ``!r``: it may be
    megabytes long, nested without end, or (an integer of 5000 digits) have no repr at all."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 256:
        text = f"<an integer of {value.bit_length()} bits>"
    else:
        try:
            text = _REPR.repr(value)
        except Exception:  # a value whose repr fails, e.g. a list holding a huge integer
            text = f"<a {type(value).__name__}>"
    return clip(text, limit)


def clip(text: str, limit: int = SHOWN_CHARS) -> str:
    """``text`` cut to at most ``limit`` characters (ending in ``…`` when cut)."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


class ReljudgeError(Exception):
    """Base class of the errors reljudge raises on purpose."""


class MissingExtraError(ReljudgeError):
    """An optional dependency is not installed; the message names the extra to install."""


class InputError(ReljudgeError):
    """Bad input: a malformed file, an unknown option value, a missing passage.

    `str(err)` reads ``path:line: message`` (or ``path: message`` without a line, or just the
    message when no file is involved).
    """

    def __init__(self, message: str, path: str | Path | None = None, line: int | None = None):
        self.message = message
        self.path = str(path) if path is not None else None
        self.line = line
        super().__init__(self.__str__())

    def __str__(self) -> str:
        if self.path is None:
            return self.message
        if self.line is None:
            return f"{self.path}: {self.message}"
        return f"{self.path}:{self.line}: {self.message}"


def input_error_from_validation(
    err: ValidationError,
    *,
    flags: Mapping[str, str] | None = None,
    path: str | Path | None = None,
    line: int | Callable[[tuple[Any, ...]], int | None] | None = None,
    what: str | None = None,
) -> InputError:
    """A pydantic `ValidationError` as an `InputError` naming what the user wrote.

    The first problem is reported (with a count of the others). ``flags`` maps model field
    names to the command-line options that set them (``{"timeout_s": "--timeout"}``), so the
    message names the option, not the field; without it the field path is written dotted
    (``models.0.temp``). ``line`` is the line number, or a function of the problem's field path
    giving one (for a file whose keys have known lines). ``what`` prefixes the message
    (``"invalid judgment record"``).
    """
    first = err.errors()[0]
    loc = tuple(first.get("loc", ()))
    kind = first.get("type", "")
    msg = clip(str(first.get("msg", "invalid value")).removeprefix("Value error, "), 4 * SHOWN_CHARS)
    if flags is not None and loc and isinstance(loc[0], str) and loc[0] in flags:
        where = " ".join([flags[loc[0]], *(clip(str(p)) for p in loc[1:])])
    else:
        where = ".".join(clip(str(p)) for p in loc)
    if kind == "extra_forbidden" and loc:
        parent = ".".join(str(p) for p in loc[:-1])
        text = f"unknown key {shown(str(loc[-1]))}" + (f" in {parent}" if parent else "")
    elif kind == "missing" and loc:
        text = f"missing required {'option' if flags is not None else 'key'} {where}"
    else:
        got = first.get("input")
        got_text = f" (got {shown(got)})" if isinstance(got, (int, float)) and flags is not None else ""
        text = f"{where}: {msg}{got_text}" if where else msg
    more = err.error_count() - 1
    if more:
        text += f" (and {more} more problem(s))"
    if what:
        text = f"{what}: {text}"
    number = line(loc) if callable(line) else line
    return InputError(text, path, number)
