"""Image files a vision-language judge sends: read once, bounded, and checked by their bytes.

`read_image_file` reads a local file (at most ``max_bytes``: a larger file is refused from its
size before it is read, and a file that grows while it is read is refused at ``max_bytes + 1``),
then `sniff` names its type by its magic bytes -- PNG, JPEG, WebP or GIF, the types OpenAI's
chat API takes -- whatever its name says, and `dimensions` reads its width and height from the
header (PNG ``IHDR``, GIF's logical screen, JPEG's first ``SOF`` marker, WebP's ``VP8 ``/``VP8L``/
``VP8X`` chunk), None when the header does not say. Nothing here decodes pixels.

`describe_image_file` reads a file once for what a run keeps of it until it sends it (`ImageFile`:
path, type, SHA-256, size in bytes and pixels), and lets the bytes go; `ImageFile.read` reads them
again when a request is built.

`check_url` accepts the image locations that are not files: ``http://`` and ``https://`` URLs
(sent to the provider as they are; reljudge never fetches them). Every other scheme (``file://``,
``ftp://``, ``data:``...) is refused: a local file is named by its path.

Every problem is a `ValueError` whose text says what is wrong; the caller names the file and line
(`reljudge.errors.InputError`) or records the reason.
"""

from __future__ import annotations

import hashlib
import os
import re
import struct
from dataclasses import dataclass
from pathlib import Path

#: the most bytes of one image by default (OpenAI takes up to 20 MB an image; 5 MiB keeps a
#: request with a grid of images well under the providers' body limits)
DEFAULT_MAX_IMAGE_BYTES = 5 * 1024 * 1024
#: the media types a judge may send, by their magic bytes
MEDIA_TYPES: tuple[str, ...] = ("image/png", "image/jpeg", "image/webp", "image/gif")
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*):")


def sniff(data: bytes) -> str | None:
    """The media type of ``data`` by its magic bytes, None when it is none of `MEDIA_TYPES`."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return "image/gif"
    return None


def dimensions(data: bytes, media_type: str) -> tuple[int, int] | None:
    """(width, height) from the header of an image of ``media_type``, None when it cannot be read."""
    try:
        if media_type == "image/png" and data[12:16] == b"IHDR":
            width, height = struct.unpack(">II", data[16:24])
        elif media_type == "image/gif":
            width, height = struct.unpack("<HH", data[6:10])
        elif media_type == "image/jpeg":
            found = _jpeg_size(data)
            if found is None:
                return None
            width, height = found
        elif media_type == "image/webp":
            found = _webp_size(data)
            if found is None:
                return None
            width, height = found
        else:
            return None
    except struct.error:
        return None
    return (width, height) if width > 0 and height > 0 else None


def _jpeg_size(data: bytes) -> tuple[int, int] | None:
    i = 2
    while i + 9 < len(data):
        if data[i] != 0xFF:
            return None
        marker = data[i + 1]
        if marker == 0xFF:  # fill byte
            i += 1
            continue
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:  # markers without a length
            i += 2
            continue
        (length,) = struct.unpack(">H", data[i + 2 : i + 4])
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):  # a start of frame
            height, width = struct.unpack(">HH", data[i + 5 : i + 9])
            return width, height
        if length < 2:
            return None
        i += 2 + length
    return None


def _webp_size(data: bytes) -> tuple[int, int] | None:
    chunk = data[12:16]
    if chunk == b"VP8X" and len(data) >= 30:
        width = 1 + int.from_bytes(data[24:27], "little")
        height = 1 + int.from_bytes(data[27:30], "little")
        return width, height
    if chunk == b"VP8L" and len(data) >= 25 and data[20] == 0x2F:
        bits = int.from_bytes(data[21:25], "little")
        return 1 + (bits & 0x3FFF), 1 + ((bits >> 14) & 0x3FFF)
    if chunk == b"VP8 " and len(data) >= 30 and data[23:26] == b"\x9d\x01\x2a":
        width, height = struct.unpack("<HH", data[26:30])
        return width & 0x3FFF, height & 0x3FFF
    return None


def check_bytes(data: bytes, max_bytes: int = DEFAULT_MAX_IMAGE_BYTES) -> str:
    """The media type of the image ``data`` (`sniff`); ValueError when it is too large or of
    another type."""
    if len(data) > max_bytes:
        raise ValueError(f"the image has more than {max_bytes:,} bytes (the most one image may have)")
    media_type = sniff(data)
    if media_type is None:
        head = data[:8].hex(" ") if data else "an empty file"
        raise ValueError(f"not a PNG, JPEG, WebP or GIF image (its first bytes: {head})")
    return media_type


def read_image_file(path: str | Path, max_bytes: int = DEFAULT_MAX_IMAGE_BYTES) -> bytes:
    """The bytes of the image file ``path``, read once and at most ``max_bytes`` of them, checked
    (`check_bytes`); ValueError with the reason (missing, a directory, unreadable, too large,
    not an image)."""
    path = Path(path)
    try:
        with open(path, "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            if size > max_bytes:
                raise ValueError(
                    f"the image file has {size:,} bytes, more than the {max_bytes:,} one image may have"
                )
            data = handle.read(max_bytes + 1)
    except FileNotFoundError:
        raise ValueError(f"image file not found: {path}") from None
    except IsADirectoryError:
        raise ValueError(f"is a directory, not an image file: {path}") from None
    except OSError as err:
        raise ValueError(f"cannot read the image file {path} ({err.strerror or err})") from None
    check_bytes(data, max_bytes)
    return data


@dataclass(frozen=True)
class ImageFile:
    """What the input stage read of an image file (`describe_image_file`): its path, type, SHA-256,
    size in bytes and pixels -- not its bytes. `read` reads them again (at send time), bounded and
    checked as at first; the caller compares their SHA-256 with ``sha256``."""

    path: str
    media_type: str
    sha256: str
    size: int
    width: int | None
    height: int | None
    max_bytes: int = DEFAULT_MAX_IMAGE_BYTES

    def read(self) -> bytes:
        return read_image_file(self.path, self.max_bytes)


def describe_image_file(path: str | Path, max_bytes: int = DEFAULT_MAX_IMAGE_BYTES) -> ImageFile:
    """The `ImageFile` of ``path``: the file read once (`read_image_file`), hashed, its header
    read, and its bytes let go; ValueError with the reason as `read_image_file`."""
    data = read_image_file(path, max_bytes)
    media_type = check_bytes(data, max_bytes)
    size = dimensions(data, media_type)
    return ImageFile(
        str(path),
        media_type,
        hashlib.sha256(data).hexdigest(),
        len(data),
        size[0] if size else None,
        size[1] if size else None,
        max_bytes,
    )


def check_url(location: str) -> str:
    """``location`` when it is an ``http(s)://`` URL; ValueError for any other scheme."""
    scheme = _SCHEME.match(location)
    name = scheme.group(1).lower() if scheme else ""
    if name in ("http", "https") and re.match(r"^https?://[^/\s]+", location, re.IGNORECASE):
        return location
    if name == "file":
        raise ValueError(f"a file:// URL is not sent ({location[:80]!r}): name a local file by its path")
    raise ValueError(
        f"an image URL must be http:// or https://, found {location[:80]!r} (a local file is named by its path)"
    )


def is_url(location: str) -> bool:
    """Whether ``location`` names a URL (any ``scheme:``, but not a Windows drive ``C:``)."""
    scheme = _SCHEME.match(location)
    return bool(scheme) and len(scheme.group(1)) > 1 if scheme else False


__all__ = [
    "DEFAULT_MAX_IMAGE_BYTES",
    "MEDIA_TYPES",
    "ImageFile",
    "check_bytes",
    "check_url",
    "describe_image_file",
    "dimensions",
    "is_url",
    "read_image_file",
    "sniff",
]
