"""Chat messages with images in the place of markers: a judge renders its prompt's text with a
marker (`placeholder`) where an image or a grid goes, and `attach_images` turns the rendered
messages into `Message`s whose content is text and image parts (`reljudge.llm.images`)."""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from reljudge.llm.images import Part, TextPart
from reljudge.llm.types import Message


def placeholder() -> str:
    """A marker to render into a prompt in the place of images, unique to one call."""
    return f"\x00img-{uuid.uuid4().hex}\x00"


def attach_images(messages: Sequence[Mapping[str, Any]], slots: Mapping[str, Sequence[Part]]) -> list[Any]:
    """``messages`` (rendered, with the markers of `placeholder` in their text) as `Message`s
    whose content is a tuple of parts, each marker replaced by its parts; messages without a
    marker keep their text. A marker missing from the messages is a ValueError."""
    out: list[Any] = []
    seen: set[str] = set()
    for message in messages:
        text = str(message["content"])
        if not any(marker in text for marker in slots):
            out.append(Message(str(message["role"]), text))
            continue
        parts: list[Part] = []
        pieces = [text]
        for marker, replacement in slots.items():
            split: list[Any] = []
            for piece in pieces:
                if not isinstance(piece, str) or marker not in piece:
                    split.append(piece)
                    continue
                seen.add(marker)
                chunks = piece.split(marker)
                for i, chunk in enumerate(chunks):
                    if i:
                        split.append(tuple(replacement))
                    split.append(chunk)
            pieces = split
        for piece in pieces:
            for part in piece if isinstance(piece, tuple) else ((TextPart(piece),) if piece else ()):
                if isinstance(part, TextPart) and parts and isinstance(parts[-1], TextPart):
                    parts[-1] = TextPart(parts[-1].text + part.text)  # adjacent texts: one part
                else:
                    parts.append(part)
        out.append(Message(str(message["role"]), tuple(parts)))
    missing = set(slots) - seen
    if missing:
        raise ValueError(f"{len(missing)} image placeholder(s) not in the rendered prompt")
    return out


__all__ = ["attach_images", "placeholder"]
