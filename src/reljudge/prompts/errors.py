"""The error of a prompt template that cannot be loaded, validated or rendered, and how its messages
list names from a file."""

from __future__ import annotations

from typing import Any

from reljudge.errors import InputError, clip


class PromptError(InputError):
    """A prompt template that cannot be loaded, validated or rendered."""


def listed(names: Any, most: int = 10, *, sort: bool = True) -> str:
    """Names from a file (keys of any type) listed for an error message: sorted (unless
    ``sort=False``), each clipped, at most ``most`` of them."""
    texts = [clip(str(n)) for n in names]
    if sort:
        texts.sort()
    more = f" and {len(texts) - most} more" if len(texts) > most else ""
    return ", ".join(texts[:most]) + more
