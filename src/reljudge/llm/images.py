"""Images in chat messages: OpenAI's content parts, hashed by their bytes, never stored as base64.

A user message may carry a tuple of parts instead of a string (`reljudge.llm.types.Message`):
`TextPart` and `ImagePart`. An `Image` is checked bytes held in memory (`image_from_bytes`: at
most ``max_bytes``, PNG/JPEG/WebP/GIF by its magic bytes, see `reljudge.io.image_files`), a local
file of which only its hash, type and sizes are held (`image_from_file`: its bytes are read again
when its request is built, and sent only if their SHA-256 is still the one the hashed form names;
otherwise `ImageChanged` and nothing is sent), or an ``http(s)://`` URL the provider fetches
(`image_from_url`).

A message has two forms:

- the **hashed form** (`Message.to_dict`): an image part is
  ``{"type": "image_url", "image_url": {"sha256": ..., "media_type": ..., "bytes": N, "detail": ...}}``
  (or ``{"url": ...}`` for a URL). The cache key, the rendered-messages hash of the records, the
  echo checks and everything the client keeps see this form: they cover the image's bytes by their
  SHA-256, and no base64 ever reaches a record, a log, a manifest or the response cache.
- the **wire form** (`Message.to_wire`): the request the provider gets, OpenAI's
  ``{"type": "image_url", "image_url": {"url": "data:image/png;base64,...", "detail": ...}}``,
  made when the request is sent (after the response cache missed: a cached answer reads no
  file). A URL image is sent as its URL: the cache key covers the URL's
  text, not what it serves (reljudge never fetches it).

Token rules (`image_tokens`, stated): the **estimate** (``--dry-run``, the cost cap's expected
cost) is OpenAI's tile rule for gpt-4o: ``detail=low`` 85 tokens; otherwise the image is scaled
to fit 2048 x 2048, then its shortest side to 768, and costs 85 + 170 per 512-pixel tile. An image
whose size is unknown (a URL) is estimated at the rule's largest, 8 tiles (1,445 tokens). The
**bound** a provider's reported usage is clamped to and the cost cap reserves (`image_bound`,
`reljudge.llm.usage_bound`) is the same tiling at gpt-4o-mini's rates, 2,833 + 5,667 a tile (the
largest per-image charge OpenAI publishes; up to 48,169 tokens), so an honest report is never
clamped. Other models count image tokens in their own ways: the estimate is an estimate.
"""

from __future__ import annotations

import base64
import hashlib
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from reljudge.io.image_files import DEFAULT_MAX_IMAGE_BYTES, check_bytes, check_url, dimensions

if TYPE_CHECKING:
    from reljudge.io.image_files import ImageFile

#: ``detail`` values OpenAI takes
DETAILS: tuple[str, ...] = ("auto", "low", "high")
#: the tile rule (gpt-4o): base tokens and tokens a 512-pixel tile
EST_BASE, EST_TILE = 85, 170
#: the bound's rates (gpt-4o-mini, the largest OpenAI publishes)
BOUND_BASE, BOUND_TILE = 2833, 5667
#: the most tiles the rule gives (2048 x 768)
MAX_TILES = 8


class ImageChanged(Exception):
    """An image file's bytes, read again when its request is built, are no longer the ones hashed
    when the run read its inputs (or can no longer be read): the request is not sent."""


@dataclass(frozen=True)
class Image:
    """One image: checked bytes held in memory (``data``), a file read when its request is built
    (``source``: its bytes must still have ``sha256``), or an ``http(s)`` URL (``url``)."""

    media_type: str | None
    sha256: str | None
    size: int
    width: int | None = None
    height: int | None = None
    url: str | None = None
    data: bytes = field(default=b"", repr=False, compare=False)
    #: reads the image's bytes again (a file's `reljudge.io.image_files.ImageFile.read`)
    source: Callable[[], bytes] | None = field(default=None, repr=False, compare=False)
    #: where ``source`` reads (its path), for the message of `ImageChanged` only
    origin: str | None = field(default=None, repr=False, compare=False)

    def hashed(self) -> dict[str, Any]:
        """What the hashes and records see of it (module docstring)."""
        if self.url is not None:
            return {"url": self.url}
        out: dict[str, Any] = {"sha256": self.sha256, "media_type": self.media_type, "bytes": self.size}
        if self.width and self.height:
            out.update(width=self.width, height=self.height)
        return out

    def payload(self) -> bytes:
        """The bytes to send: ``data``, or ``source`` read now and checked against ``sha256``
        (`ImageChanged` when they differ or cannot be read)."""
        if self.source is None:
            return self.data
        try:
            data = self.source()
        except ValueError as err:
            raise ImageChanged(f"the image cannot be read again when its request is built: {err}") from None
        now = hashlib.sha256(data).hexdigest()
        if now != self.sha256:
            where = f" {self.origin}" if self.origin else ""
            raise ImageChanged(
                f"the image file{where} changed after the run read it (SHA-256 "
                f"{str(self.sha256)[:12]}... then, {now[:12]}... now): not sent"
            )
        return data

    def wire_url(self) -> str:
        """The URL the provider gets: the URL, or a base64 data URL of the bytes (`payload`)."""
        if self.url is not None:
            return self.url
        return f"data:{self.media_type};base64,{base64.b64encode(self.payload()).decode('ascii')}"


def image_from_bytes(data: bytes, max_bytes: int = DEFAULT_MAX_IMAGE_BYTES) -> Image:
    """An `Image` of ``data`` (checked: ValueError when too large or not an image)."""
    media_type = check_bytes(data, max_bytes)
    size = dimensions(data, media_type)
    return Image(
        media_type,
        hashlib.sha256(data).hexdigest(),
        len(data),
        size[0] if size else None,
        size[1] if size else None,
        data=bytes(data),
    )


def image_from_file(file: ImageFile) -> Image:
    """An `Image` of what the input stage read of a file: its hash, type and sizes, its bytes read
    again when its request is built (`Image.payload`)."""
    return Image(
        file.media_type, file.sha256, file.size, file.width, file.height, source=file.read, origin=file.path
    )


def image_from_url(url: str) -> Image:
    """An `Image` the provider fetches from an ``http(s)`` URL (ValueError for another scheme)."""
    return Image(None, None, 0, url=check_url(url))


def image_from_data_url(url: str, max_bytes: int = DEFAULT_MAX_IMAGE_BYTES) -> Image:
    """The `Image` of a ``data:<type>;base64,...`` URL (checked like a file's bytes)."""
    head, sep, payload = url.partition(",")
    if not sep or not head.startswith("data:") or not head.endswith(";base64"):
        raise ValueError("a data URL of an image must be data:<type>;base64,<bytes>")
    if len(payload) > 4 * (max_bytes // 3 + 2):
        raise ValueError(f"the image has more than {max_bytes:,} bytes (the most one image may have)")
    try:
        data = base64.b64decode(payload, validate=True)
    except ValueError:
        raise ValueError("the data URL's base64 is malformed") from None
    return image_from_bytes(data, max_bytes)


@dataclass(frozen=True)
class TextPart:
    text: str

    def hashed(self) -> dict[str, Any]:
        return {"type": "text", "text": self.text}

    wire = hashed


@dataclass(frozen=True)
class ImagePart:
    image: Image
    detail: str = "auto"

    def __post_init__(self) -> None:
        if self.detail not in DETAILS:
            raise ValueError(f"image detail must be one of {', '.join(DETAILS)}, got {self.detail!r}")

    def hashed(self) -> dict[str, Any]:
        return {"type": "image_url", "image_url": {**self.image.hashed(), "detail": self.detail}}

    def wire(self) -> dict[str, Any]:
        return {"type": "image_url", "image_url": {"url": self.image.wire_url(), "detail": self.detail}}


Part = TextPart | ImagePart


def coerce_part(value: Any) -> Part:
    """A part from a `TextPart`/`ImagePart` or an OpenAI part dict (``text``, or ``image_url``
    with an ``http(s)`` or a base64 data URL, checked); ValueError/TypeError otherwise."""
    if isinstance(value, (TextPart, ImagePart)):
        return value
    if not isinstance(value, Mapping):
        raise TypeError(f"a content part must be a dict, got {type(value).__name__}")
    kind = value.get("type")
    if kind == "text" and isinstance(value.get("text"), str):
        return TextPart(value["text"])
    if kind == "image_url" and isinstance(value.get("image_url"), Mapping):
        inner = value["image_url"]
        url = inner.get("url")
        if not isinstance(url, str):
            raise ValueError("an image_url part needs a 'url' string")
        detail = inner.get("detail", "auto")
        image = image_from_data_url(url) if url.startswith("data:") else image_from_url(url)
        return ImagePart(image, detail if isinstance(detail, str) else "auto")
    raise ValueError(f"a content part must be text or image_url, got {str(kind)[:40]!r}")


# -- tokens ------------------------------------------------------------------------------------


def tiles(width: int | None, height: int | None) -> int:
    """The 512-pixel tiles of OpenAI's rule (module docstring); `MAX_TILES` when unknown."""
    if not width or not height:
        return MAX_TILES
    w, h = float(width), float(height)
    if max(w, h) > 2048:
        scale = 2048 / max(w, h)
        w, h = w * scale, h * scale
    if min(w, h) > 768:
        scale = 768 / min(w, h)
        w, h = w * scale, h * scale
    return max(1, math.ceil(w / 512) * math.ceil(h / 512))


def image_tokens(part: ImagePart) -> int:
    """The estimated prompt tokens of an image part (gpt-4o's tile rule)."""
    if part.detail == "low":
        return EST_BASE
    return EST_BASE + EST_TILE * tiles(part.image.width, part.image.height)


def image_bound(part: ImagePart) -> int:
    """The most prompt tokens an image part is taken to cost (module docstring)."""
    if part.detail == "low":
        return BOUND_BASE
    return BOUND_BASE + BOUND_TILE * tiles(part.image.width, part.image.height)


def content_text(content: Any) -> str:
    """The text of a message's content: a string, or the text parts of a list joined by newlines."""
    if isinstance(content, str):
        return content
    if isinstance(content, (list, tuple)):
        texts = []
        for part in content:
            if isinstance(part, TextPart):
                texts.append(part.text)
            elif isinstance(part, Mapping) and part.get("type") == "text":
                texts.append(str(part.get("text", "")))
        return "\n".join(texts)
    return "" if content is None else str(content)


def content_image_tokens(content: Any, *, bound: bool = False) -> int:
    """The image tokens of a message's content (its `ImagePart`s, or the image parts of its hashed
    form, with the size they state: the rule's largest without one), estimated or (``bound``)
    bounded."""
    total = 0
    if not isinstance(content, (list, tuple)):
        return 0
    for part in content:
        if isinstance(part, ImagePart):
            total += image_bound(part) if bound else image_tokens(part)
        elif isinstance(part, Mapping) and part.get("type") == "image_url":
            inner = part.get("image_url")
            inner = inner if isinstance(inner, Mapping) else {}
            detail = inner.get("detail", "auto")
            width, height = inner.get("width"), inner.get("height")
            stand_in = ImagePart(
                Image(None, None, 0, _int(width), _int(height), url=""),
                detail if detail in DETAILS else "auto",
            )
            total += image_bound(stand_in) if bound else image_tokens(stand_in)
    return total


def content_chars(content: Any) -> int:
    """The characters a rate limiter's ~4-characters-a-token estimate counts for a message's
    content: its text, and four a token of its images' estimate."""
    if isinstance(content, str):
        return len(content)
    return len(content_text(content)) + 4 * content_image_tokens(content)


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


__all__ = [
    "DETAILS",
    "Image",
    "ImageChanged",
    "ImagePart",
    "Part",
    "TextPart",
    "coerce_part",
    "content_chars",
    "content_image_tokens",
    "content_text",
    "image_bound",
    "image_from_bytes",
    "image_from_data_url",
    "image_from_file",
    "image_from_url",
    "image_tokens",
    "tiles",
]
