"""What the vision judges read: the grids, the images table and the images it names.

The run reads the two files for the judge (`GRIDS`, `IMAGES`: `reljudge.io.grids`); the judge's
pool (`load_images`) then reads each image its items need once (`reljudge.io.image_files`: at most
``max_image_bytes``, PNG/JPEG/WebP/GIF by its magic bytes) or takes its ``http(s)`` URL, before any
call is made. A bad image -- a missing or unreadable file, another type, too many bytes, a
``file://`` or other non-http URL, an id the table lacks -- is an `InputError` naming the images
table's line (``FILE:LINE``) with ``bad_images="error"`` (the default); with
``bad_images="skip"`` the items that need it get a ``skipped`` record with the reason.

Memory: the bytes of the images a run judges are held for the run (each at most
``max_image_bytes``), so each is read once and the bytes hashed are the bytes sent.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from reljudge.errors import InputError, clip
from reljudge.judges.base import PoolRequest, Resource
from reljudge.llm.images import Image, ImagePart

if TYPE_CHECKING:
    from reljudge.io.grids import Grids

#: what a bad image does: an input error (the default), or a skipped record with the reason
BAD_IMAGES = ("error", "skip")


@dataclass(frozen=True)
class ImageTable:
    """The images table: its path and ``image -> path or URL`` (`reljudge.io.grids.read_images`)."""

    path: str
    locations: dict[str, str]


def read_image_table(path: Path) -> ImageTable:
    from reljudge.io.grids import read_images  # (numpy, imported by the grids formats, when used)

    return ImageTable(str(path), read_images(path))


def read_grid_file(path: Path) -> Grids:
    from reljudge.io.grids import read_grids

    return read_grids(path)


GRIDS = Resource(
    "grids", read=read_grid_file, help="the grids file: prompt<TAB>system<TAB>position<TAB>image"
)
IMAGES = Resource("images", read=read_image_table, help="the images table: image<TAB>path-or-url")


@dataclass
class LoadedImages:
    """The images of a run's items, by id, and the reason of each image that could not be used."""

    images: dict[str, Image] = field(default_factory=dict)
    problems: dict[str, str] = field(default_factory=dict)

    def parts(self, image_id: str, detail: str) -> tuple[ImagePart, ...]:
        return (ImagePart(self.images[image_id], detail),)


def table_line(path: str, image_id: str) -> int | None:
    """The line of ``image_id`` in the images table (for the message of a bad image)."""
    from reljudge.io.lines import read_lines

    for number, line in read_lines(path):
        if line.split("\t", 1)[0].strip() == image_id:
            return number
    return None


def load_images(table: ImageTable, wanted: Iterable[str], *, max_bytes: int, bad: str) -> LoadedImages:
    """The ``wanted`` images, each read once (module docstring), in sorted order."""
    from reljudge.io.image_files import is_url, read_image_file
    from reljudge.llm.images import image_from_bytes, image_from_url

    loaded = LoadedImages()
    for image_id in sorted(set(wanted)):
        location = table.locations.get(image_id)
        try:
            if location is None:
                raise ValueError(f"image {clip(image_id)!r} of the grids is not in the images table")
            if is_url(location):
                loaded.images[image_id] = image_from_url(location)
            else:
                loaded.images[image_id] = image_from_bytes(read_image_file(location, max_bytes), max_bytes)
        except ValueError as err:
            if bad == "error":
                line = table_line(table.path, image_id) if location is not None else None
                raise InputError(f"image {clip(image_id)!r}: {err}", table.path, line) from None
            loaded.problems[image_id] = str(err)
    return loaded


def grid_inputs(request: PoolRequest, method: str) -> tuple[Grids, ImageTable, list[str]]:
    """The grids, the images table and the prompts kept (sorted; ``--topics-limit N`` keeps the
    first N); `InputError` when a file is not given or ``--limit`` is."""
    grids, table = request.resources.get("grids"), request.resources.get("images")
    if grids is None or table is None:
        raise InputError(f"--method {method} judges image grids: give --grids FILE and --images FILE")
    if request.limit is not None:
        raise InputError("--limit counts passages; with --grids give --topics-limit N (prompts)")
    prompts = grids.prompts
    if request.topics_limit is not None:
        prompts = prompts[: request.topics_limit]
    return grids, table, prompts


def check_options(detail: str, max_image_bytes: int, bad_images: str) -> None:
    from reljudge.judges.option_checks import check_choice
    from reljudge.llm.images import DETAILS

    check_choice("detail", detail, DETAILS)
    check_choice("bad_images", bad_images, BAD_IMAGES)
    if not isinstance(max_image_bytes, int) or isinstance(max_image_bytes, bool) or max_image_bytes < 1:
        raise TypeError(f"max_image_bytes must be a positive integer, got {max_image_bytes!r}")


def image_extra(image: Image) -> dict[str, object]:
    """What a record notes of an image: its SHA-256 and type, or its URL (never its bytes)."""
    if image.url is not None:
        return {"url": image.url}
    out: dict[str, object] = {"sha256": image.sha256, "media_type": image.media_type, "bytes": image.size}
    if image.width and image.height:
        out["size"] = [image.width, image.height]
    return out
