"""The images table as a run's input stage reads it for a vision judge: each image's line, its
``http(s)`` URL or what was read of its file -- path, type, SHA-256, size in bytes and pixels
(`reljudge.io.image_files.ImageFile`), never its bytes -- or the reason it cannot be used.

`read_image_table` reads the table (`reljudge.io.grids.read_image_rows`) and every image file it
names once, at most ``max_image_bytes`` each, hashing it and reading its header; the bytes are let
go at once, so a run holds a few hundred bytes an image however many it judges. They are read
again when a request is built (`ImageFile.read`), and sent only if their SHA-256 is still the one
read here (`reljudge.llm.images`). A bad image (missing, unreadable, another type, too many bytes,
a ``file://`` or other non-http URL) is not an error here: its entry keeps the reason, and the
judge decides, for the images its items need, whether it is an input error naming the table's
line or a skipped record. The judge itself opens no file.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from reljudge.io.image_files import DEFAULT_MAX_IMAGE_BYTES, ImageFile

if TYPE_CHECKING:
    from reljudge.io.grids import Grids


@dataclass(frozen=True)
class ImageEntry:
    """One row of the table: its line and location, and either its file (``file``), its URL
    (``url``) or the reason it cannot be used (``problem``)."""

    line: int
    location: str
    file: ImageFile | None = None
    url: str | None = None
    problem: str | None = None


@dataclass(frozen=True)
class ImageTable:
    """The images table: its path and ``image -> ImageEntry``."""

    path: str
    entries: dict[str, ImageEntry]


def read_image_table(path: Path, max_image_bytes: int = DEFAULT_MAX_IMAGE_BYTES) -> ImageTable:
    """The `ImageTable` of ``path`` (module docstring), its images in sorted order."""
    from reljudge.io.grids import read_image_rows  # (numpy, imported by the grids formats, when used)
    from reljudge.io.image_files import check_url, describe_image_file, is_url

    entries: dict[str, ImageEntry] = {}
    for image, (line, location) in sorted(read_image_rows(path).items()):
        try:
            if is_url(location):
                entries[image] = ImageEntry(line, location, url=check_url(location))
            else:
                entries[image] = ImageEntry(
                    line, location, file=describe_image_file(location, max_image_bytes)
                )
        except ValueError as err:
            entries[image] = ImageEntry(line, location, problem=str(err))
    return ImageTable(str(path), entries)


def read_grid_file(path: Path) -> Grids:
    """The grids file (`reljudge.io.grids.read_grids`), numpy imported only when it is read."""
    from reljudge.io.grids import read_grids

    return read_grids(path)


__all__ = ["ImageEntry", "ImageTable", "read_grid_file", "read_image_table"]
