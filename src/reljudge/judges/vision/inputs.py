"""What the vision judges get: the grids, the images table and what was read of its images.

The run's input stage reads the two files for the judge (`GRIDS`, `IMAGES`: `reljudge.io.grids`,
`reljudge.io.image_table`), and with the table each image file it names, once: at most
``max_image_bytes`` (the judge's setting, passed to the reader), PNG/JPEG/WebP/GIF by its magic
bytes, hashed, its size in pixels from its header -- and its bytes let go. The judge opens no file:
its pool (`resolve_images`) takes, for the images its items need, the table's entries as they are.
A bad image -- a missing or unreadable file, another type, too many bytes, a ``file://`` or other
non-http URL, an id the table lacks -- is an `InputError` naming the images table's line
(``FILE:LINE``) with ``bad_images="error"`` (the default); with ``bad_images="skip"`` the items
that need it get a ``skipped`` record with the reason.

Memory: a run holds no image's bytes, only its path, SHA-256, type and sizes; the bytes are read
again when a request is built and sent only if their SHA-256 is still the one the record notes
(`reljudge.llm.images.ImageChanged`): an image file changed during the run gives its items a
``skipped`` record with the reason, never an answer about other bytes under the old hash.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from reljudge.errors import InputError, clip
from reljudge.io.image_table import read_grid_file, read_image_table
from reljudge.judges.base import PoolRequest, Resource
from reljudge.llm.images import Image, ImagePart

if TYPE_CHECKING:
    from reljudge.io.grids import Grids
    from reljudge.io.image_table import ImageTable

#: what a bad image does: an input error (the default), or a skipped record with the reason
BAD_IMAGES = ("error", "skip")


GRIDS = Resource(
    "grids", read=read_grid_file, help="the grids file: prompt<TAB>system<TAB>position<TAB>image"
)
IMAGES = Resource(
    "images",
    read=read_image_table,
    help="the images table: image<TAB>path-or-url",
    options=("max_image_bytes",),
)


@dataclass
class LoadedImages:
    """The images of a run's items, by id (what was read of them: `reljudge.llm.images.Image`
    without their bytes), and the reason of each image that cannot be used."""

    images: dict[str, Image] = field(default_factory=dict)
    problems: dict[str, str] = field(default_factory=dict)

    def parts(self, image_id: str, detail: str) -> tuple[ImagePart, ...]:
        return (ImagePart(self.images[image_id], detail),)


def resolve_images(table: ImageTable, wanted: Iterable[str], *, bad: str) -> LoadedImages:
    """The ``wanted`` images from the table's entries (module docstring), in sorted order."""
    from reljudge.llm.images import image_from_file, image_from_url

    loaded = LoadedImages()
    for image_id in sorted(set(wanted)):
        entry = table.entries.get(image_id)
        if entry is None:
            problem, line = f"image {clip(image_id)!r} of the grids is not in the images table", None
        elif entry.problem is not None:
            problem, line = entry.problem, entry.line
        else:
            if entry.url is not None:
                loaded.images[image_id] = image_from_url(entry.url)
            else:
                assert entry.file is not None
                loaded.images[image_id] = image_from_file(entry.file)
            continue
        if bad == "error":
            raise InputError(f"image {clip(image_id)!r}: {problem}", table.path, line)
        loaded.problems[image_id] = problem
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
