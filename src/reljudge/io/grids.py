"""Image grids and their side information as files (the inputs of ``judge grids`` and of the
vision-language judges).

Every text file here is tab-separated UTF-8 (gzip when the name ends in ``.gz``), read with the
shared line reader (`reljudge.io.lines`): blank lines and lines starting with ``#`` are skipped,
and an optional header line (its first cell the name of the first column, e.g. ``prompt``) is
skipped when it is the first line read. Every problem is an `InputError` naming ``FILE:LINE``.

- **grids** (`read_grids`): ``prompt<TAB>system<TAB>position<TAB>image``, one line per cell;
  positions run 1..k row-major (1 = top-left; a ranked list is a 1 × k grid). A grid is one
  (prompt, system); every grid of a file has the same k. A position that is not an integer
  >= 1, a position given twice, a gap (positions missing below a grid's largest) and a grid of
  another size than the others are errors. The same image id at two positions is allowed (a
  system may return one image twice). `Grids.grids` maps (prompt, system) to the image ids in
  position order; prompts and systems are listed sorted, so nothing depends on line order.
- **images** (`read_images`): ``image<TAB>path-or-url``; a URL (``scheme://...`` or ``data:``)
  is kept as it is, a relative path is resolved against the table's directory.
- **embeddings** (`read_embeddings`): ``NAME.npy`` (an n × d float matrix) with ``NAME.ids``
  (one id per line, row order, same n), memory-mapped; a wrong shape, a count mismatch, a
  non-float dtype, NaN or infinity (checked in blocks, never loading the whole matrix) and
  repeated ids are errors.
- **targets**: per prompt, target image ids (`read_targets`: ``prompt<TAB>image``, several
  lines per prompt allowed) or target vectors (`read_target_embeddings`: an embeddings pair
  whose ids are prompt ids, one row per target, a prompt repeated for several targets).
- **salience** (`read_salience`): ``image<TAB>value``, a finite value >= 0.
- **human grid preferences** (`read_preferences`): ``prompt<TAB>system_x<TAB>system_y<TAB>pref``
  with an optional fifth column ``set`` (the prompt set, default ``all``); ``pref`` is an
  integer in -2..2: -2 X much better, -1 X somewhat better, 0 the same, +1 Y somewhat better,
  +2 Y much better (the consensus of the annotators, as given). A pair given twice for a
  prompt (in either order) is an error.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from reljudge.errors import InputError, clip

#: the prompt set of a preference line without a fifth column
DEFAULT_SET = "all"
#: the preference scale: X much better .. Y much better
PREF_MIN, PREF_MAX = -2, 2
#: values of an embeddings matrix checked for NaN at a time (a block of rows, at most 128 MB of float64)
_CHECK_VALUES = 1 << 24
_URL = re.compile(r"^(?:[A-Za-z][A-Za-z0-9+.-]*://|data:)")


@dataclass(frozen=True)
class Grids:
    """The grids of a file: ``grids[(prompt, system)]`` = image ids in position order."""

    k: int
    grids: dict[tuple[str, str], tuple[str, ...]]
    #: the line of each grid's first cell (for messages about a grid)
    lines: dict[tuple[str, str], int]
    path: str | None = None

    @property
    def prompts(self) -> list[str]:
        return sorted({p for p, _ in self.grids})

    @property
    def systems(self) -> list[str]:
        return sorted({s for _, s in self.grids})

    def images(self) -> list[str]:
        """Every image id of every grid, sorted, each once."""
        return sorted({image for grid in self.grids.values() for image in grid})


@dataclass(frozen=True)
class Preference:
    """One human preference between two systems' grids for a prompt (see the module docstring)."""

    prompt: str
    system_x: str
    system_y: str
    pref: int
    prompt_set: str = DEFAULT_SET
    line: int | None = None


def _rows(path: str | Path, header: str, columns: tuple[int, ...]) -> Iterator[tuple[int, list[str]]]:
    """``(line number, cells)`` of each data line; ``columns`` are the accepted cell counts."""
    from reljudge.io.lines import read_lines

    first = True
    for number, line in read_lines(path):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        cells = [c.strip() for c in line.split("\t")]
        if first and cells[0].lower() == header:
            first = False
            continue
        first = False
        if len(cells) not in columns:
            want = " or ".join(str(c) for c in columns)
            raise InputError(f"expected {want} tab-separated columns, found {len(cells)}", path, number)
        empty = [i + 1 for i, c in enumerate(cells) if not c]
        if empty:
            raise InputError(f"column {empty[0]} is empty", path, number)
        yield number, cells


def _integer(text: str, what: str, path: str | Path, line: int) -> int:
    if not re.fullmatch(r"[+-]?[0-9]{1,9}", text):
        raise InputError(f"{what} must be an integer, found {clip(text)!r}", path, line)
    return int(text)


def read_grids(path: str | Path) -> Grids:
    """The grids of a file ``prompt<TAB>system<TAB>position<TAB>image`` (module docstring)."""
    cells: dict[tuple[str, str], dict[int, str]] = {}
    first_line: dict[tuple[str, str], int] = {}
    last_line: dict[tuple[str, str], int] = {}
    for number, (prompt, system, position_text, image) in _rows(path, "prompt", (4,)):
        position = _integer(position_text, "position", path, number)
        if position < 1:
            raise InputError(f"position must be >= 1 (1 = top-left), found {position}", path, number)
        key = (prompt, system)
        grid = cells.setdefault(key, {})
        first_line.setdefault(key, number)
        last_line[key] = number
        if position in grid:
            raise InputError(
                f"position {position} of the grid of system {clip(system)!r} for prompt "
                f"{clip(prompt)!r} is given twice",
                path,
                number,
            )
        grid[position] = image
    if not cells:
        raise InputError("no grids in file (expected prompt<TAB>system<TAB>position<TAB>image)", path)
    grids: dict[tuple[str, str], tuple[str, ...]] = {}
    k: int | None = None
    k_key: tuple[str, str] | None = None
    for key in sorted(cells, key=lambda key: first_line[key]):
        grid = cells[key]
        size = max(grid)
        if len(grid) != size:  # a gap: the first missing position is at most len(grid) + 1
            gap = next(p for p in range(1, len(grid) + 2) if p not in grid)
            raise InputError(
                f"the grid of system {clip(key[1])!r} for prompt {clip(key[0])!r} has no image at "
                f"position {gap} (positions run 1..{size}, found {len(grid)})",
                path,
                last_line[key],
            )
        if k is None:
            k, k_key = size, key
        elif size != k:
            assert k_key is not None
            raise InputError(
                f"the grid of system {clip(key[1])!r} for prompt {clip(key[0])!r} has {size} images, "
                f"the grid of system {clip(k_key[1])!r} for prompt {clip(k_key[0])!r} (line "
                f"{first_line[k_key]}) has {k}: every grid of a file has the same size",
                path,
                first_line[key],
            )
        grids[key] = tuple(grid[p] for p in range(1, size + 1))
    assert k is not None
    ordered = {key: grids[key] for key in sorted(grids)}
    return Grids(k=k, grids=ordered, lines={key: first_line[key] for key in ordered}, path=str(path))


def read_images(path: str | Path) -> dict[str, str]:
    """``image -> path or URL`` from ``image<TAB>path-or-url``; relative paths are resolved
    against the table's directory, URLs kept as they are."""
    return {image: where for image, (_line, where) in read_image_rows(path).items()}


def read_image_rows(path: str | Path) -> dict[str, tuple[int, str]]:
    """``image -> (its line, path or URL)``, as `read_images` (for messages naming the line)."""
    base = Path(path).resolve().parent
    out: dict[str, tuple[int, str]] = {}
    for number, (image, where) in _rows(path, "image", (2,)):
        if image in out:
            raise InputError(
                f"image {clip(image)!r} listed twice (first on line {out[image][0]})", path, number
            )
        location = where if _URL.match(where) else str((base / Path(where).expanduser()).resolve())
        out[image] = (number, location)
    if not out:
        raise InputError("no images in file (expected image<TAB>path-or-url)", path)
    return out


def _ids(ids_path: Path, npy: Path, unique: bool) -> list[str]:
    from reljudge.io.lines import read_lines

    if not ids_path.exists():
        raise InputError(f"ids file not found (one id per line, in the row order of {npy.name})", ids_path)
    lines = list(read_lines(ids_path))
    while lines and not lines[-1][1].strip():
        lines.pop()
    ids: list[str] = []
    seen: dict[str, int] = {}
    for number, text in lines:
        value = text.strip()
        if not value:
            raise InputError("empty id (one id per line, one line per row)", ids_path, number)
        if unique and value in seen:
            raise InputError(
                f"id {clip(value)!r} given twice (first on line {seen[value]})", ids_path, number
            )
        seen.setdefault(value, number)
        ids.append(value)
    return ids


def read_embeddings(
    npy: str | Path, ids: str | Path | None = None, *, unique: bool = True
) -> tuple[list[str], np.ndarray]:
    """``(ids, matrix)`` of ``NAME.npy`` and its ids (``NAME.ids`` unless ``ids`` is given):
    the matrix memory-mapped (read-only), one id per row. ``unique=False`` allows an id on
    several rows (target vectors: several targets per prompt)."""
    npy = Path(npy)
    ids_path = Path(ids) if ids is not None else npy.with_suffix(".ids")
    if not npy.exists():
        raise InputError("embeddings file not found", npy)
    if npy.is_dir():
        raise InputError("is a directory, expected a .npy file", npy)
    try:
        matrix = np.load(npy, mmap_mode="r", allow_pickle=False)
    except (OSError, ValueError, EOFError) as err:
        raise InputError(f"cannot read embeddings ({clip(str(err))})", npy) from None
    if not isinstance(matrix, np.ndarray):
        raise InputError("not a .npy array", npy)
    if matrix.ndim != 2:
        raise InputError(f"expected an n × d matrix, found shape {matrix.shape}", npy)
    if matrix.dtype.kind != "f":
        raise InputError(f"expected float vectors, found dtype {matrix.dtype}", npy)
    if matrix.shape[0] == 0 or matrix.shape[1] == 0:
        raise InputError(f"no vectors (shape {matrix.shape})", npy)
    names = _ids(ids_path, npy, unique)
    if len(names) != matrix.shape[0]:
        raise InputError(f"{len(names)} ids for the {matrix.shape[0]} rows of {npy.name}", ids_path)
    rows = max(1, _CHECK_VALUES // matrix.shape[1])
    for start in range(0, matrix.shape[0], rows):
        block = np.asarray(matrix[start : start + rows])
        bad = ~np.isfinite(block).all(axis=1)
        if bad.any():
            row = start + int(np.argmax(bad))
            raise InputError(f"row {row + 1} (id {clip(names[row])!r}) holds NaN or infinity", npy)
    return names, matrix


def read_targets(path: str | Path) -> dict[str, tuple[str, ...]]:
    """``prompt -> target image ids`` from ``prompt<TAB>image`` (several lines per prompt), each
    prompt's ids in file order, a repeated (prompt, image) an error."""
    out: dict[str, list[str]] = {}
    seen: dict[tuple[str, str], int] = {}
    for number, (prompt, image) in _rows(path, "prompt", (2,)):
        if (prompt, image) in seen:
            raise InputError(
                f"target {clip(image)!r} of prompt {clip(prompt)!r} given twice (first on line "
                f"{seen[(prompt, image)]})",
                path,
                number,
            )
        seen[(prompt, image)] = number
        out.setdefault(prompt, []).append(image)
    if not out:
        raise InputError("no targets in file (expected prompt<TAB>image)", path)
    return {prompt: tuple(images) for prompt, images in sorted(out.items())}


def read_target_embeddings(npy: str | Path, ids: str | Path | None = None) -> dict[str, np.ndarray]:
    """``prompt -> (t × d) target vectors`` from an embeddings pair whose ids are prompt ids."""
    names, matrix = read_embeddings(npy, ids, unique=False)
    rows: dict[str, list[int]] = {}
    for i, name in enumerate(names):
        rows.setdefault(name, []).append(i)
    return {prompt: np.asarray(matrix[idx], dtype=float) for prompt, idx in sorted(rows.items())}


def read_salience(path: str | Path) -> dict[str, float]:
    """``image -> salience`` from ``image<TAB>value`` (a finite number >= 0)."""
    out: dict[str, float] = {}
    seen: dict[str, int] = {}
    for number, (image, text) in _rows(path, "image", (2,)):
        try:
            value = float(text)
        except ValueError:
            raise InputError(f"salience must be a number, found {clip(text)!r}", path, number) from None
        if not math.isfinite(value) or value < 0:
            raise InputError(f"salience must be a finite number >= 0, found {clip(text)}", path, number)
        if image in seen:
            raise InputError(f"image {clip(image)!r} given twice (first on line {seen[image]})", path, number)
        seen[image] = number
        out[image] = value
    if not out:
        raise InputError("no salience values in file (expected image<TAB>value)", path)
    return out


def read_preferences(path: str | Path) -> list[Preference]:
    """Human grid preferences ``prompt<TAB>system_x<TAB>system_y<TAB>pref[<TAB>set]`` (module
    docstring), sorted by (set, prompt, system_x, system_y)."""
    out: list[Preference] = []
    seen: dict[tuple[str, str, str, str], int] = {}
    for number, cells in _rows(path, "prompt", (4, 5)):
        prompt, x, y, text = cells[:4]
        prompt_set = cells[4] if len(cells) == 5 else DEFAULT_SET
        pref = _integer(text, "pref", path, number)
        if not PREF_MIN <= pref <= PREF_MAX:
            raise InputError(
                f"pref must be in {PREF_MIN}..{PREF_MAX} (-2 X much better .. +2 Y much better), "
                f"found {pref}",
                path,
                number,
            )
        if x == y:
            raise InputError(f"system {clip(x)!r} is compared with itself", path, number)
        key = (prompt_set, prompt, min(x, y), max(x, y))
        if key in seen:
            raise InputError(
                f"systems {clip(x)!r} and {clip(y)!r} for prompt {clip(prompt)!r} given twice "
                f"(first on line {seen[key]})",
                path,
                number,
            )
        seen[key] = number
        out.append(Preference(prompt, x, y, pref, prompt_set, number))
    if not out:
        raise InputError("no preferences in file (expected prompt<TAB>system_x<TAB>system_y<TAB>pref)", path)
    return sorted(out, key=lambda p: (p.prompt_set, p.prompt, p.system_x, p.system_y))


__all__ = [
    "DEFAULT_SET",
    "Grids",
    "Preference",
    "read_embeddings",
    "read_grids",
    "read_image_rows",
    "read_images",
    "read_preferences",
    "read_salience",
    "read_target_embeddings",
    "read_targets",
]
