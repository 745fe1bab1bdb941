"""Errors that reach the user.

`InputError` is the one exception for bad input (files, options, configs): it names the file,
the line when there is one, and what is wrong. The CLI turns it into a one-line message and
exit code 2. Library callers can catch it like any other exception.
"""

from __future__ import annotations

from pathlib import Path

EXIT_OK = 0
EXIT_FAILURE = 1  # the job ran but failed (e.g. failure rate above --max-failure-rate)
EXIT_BAD_INPUT = 2


class ReljudgeError(Exception):
    """Base class of the errors reljudge raises on purpose."""


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
