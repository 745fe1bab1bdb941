"""The journal of ``judge batch ray`` (`reljudge.run.batch.ray_send`): every answer is appended to
a part file the moment it arrives, so a killed worker or a killed run loses nothing answered, and
a run started again asks only what no part file holds.

- ``OUT/parts/<worker>.jsonl``: one file per worker process (a fresh name each time a worker
  starts, so nobody ever appends to the torn tail a killed worker left). Each line is an output
  line with ``custom_id`` first; it is flushed before the next request of that worker starts.
- `AnsweredIndex`: the custom_ids the part files hold, read incrementally (each file from where
  the last read stopped). A line counts only once its newline is written: a torn last line of a
  killed worker does not, so that request is asked again (its first answer was never written).
- `write_outputs`: one output file per request file (``requests-000-of-004.jsonl`` ->
  ``output-000-of-004.jsonl``), each written atomically, with the first journal line of each of
  its requests -- never two lines for one custom_id (a second is counted as a duplicate and left
  out), never a line for a request it does not hold.
"""

from __future__ import annotations

import contextlib
import os
import re
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from reljudge.errors import InputError

PARTS_DIR = "parts"
#: an output line as `reljudge.run.batch.endpoint` writes it starts with its custom_id
_HEAD = re.compile(rb'\{"custom_id":"([0-9a-f]{64})"')
#: the longest journal line read (an answer as large as a synchronous one may be)
_MAX_LINE = 9 * 1024 * 1024


def output_name(request_file: Path) -> str:
    """The output file's name for a request file (``requests-X`` -> ``output-X``)."""
    name = request_file.name
    return "output" + name[len("requests") :] if name.startswith("requests") else f"output-{name}"


def output_names(request_files: list[Path]) -> list[str]:
    """The output files' names, one per request file (`InputError` when two would collide)."""
    names = [output_name(p) for p in request_files]
    if len(set(names)) != len(names):
        raise InputError("two request files have the same name: their output files would collide")
    return names


class PartWriter:
    """A worker's own part file: `append` writes one output line and flushes it."""

    def __init__(self, out_dir: Path) -> None:
        parts = Path(out_dir) / PARTS_DIR
        parts.mkdir(parents=True, exist_ok=True)
        self.path = parts / f"{os.getpid()}-{uuid.uuid4().hex[:12]}.jsonl"
        self._handle: IO[bytes] = self.path.open("ab")

    def append(self, line: bytes) -> None:
        self._handle.write(line)
        self._handle.flush()  # in the kernel: a killed process loses nothing written

    def sync(self) -> None:
        os.fsync(self._handle.fileno())

    def close(self) -> None:
        self._handle.close()


@dataclass
class AnsweredIndex:
    """The custom_ids the part files under ``out_dir`` hold; `refresh` reads what was added."""

    out_dir: Path
    ids: set[str] = field(default_factory=set)
    duplicates: int = 0
    _offsets: dict[Path, int] = field(default_factory=dict)

    def refresh(self) -> set[str]:
        for path in sorted((Path(self.out_dir) / PARTS_DIR).glob("*.jsonl")):
            start = self._offsets.get(path, 0)
            end = start
            for offset, line in _whole_lines(path, start):
                custom_id = line_custom_id(line)
                if custom_id is not None:
                    if custom_id in self.ids:
                        self.duplicates += 1
                    self.ids.add(custom_id)
                end = offset
            self._offsets[path] = end
        return self.ids


def line_custom_id(line: bytes) -> str | None:
    match = _HEAD.match(line)
    return match.group(1).decode("ascii") if match else None


def _whole_lines(path: Path, start: int) -> Iterator[tuple[int, bytes]]:
    """(offset after the line, line) of the newline-ended lines of ``path`` from ``start``; an
    unended last line (being written, or torn by a kill) is not given, and one longer than a
    journal line may be is skipped."""
    with path.open("rb") as handle:
        handle.seek(start)
        offset = start
        while True:
            line = handle.readline(_MAX_LINE)
            if not line.endswith(b"\n"):
                if len(line) < _MAX_LINE:
                    return  # the end, or an unended tail
                while line and not line.endswith(b"\n"):  # too long: read past it
                    line = handle.readline(_MAX_LINE)
                offset = handle.tell()
                continue
            offset += len(line)
            yield offset, line


@dataclass
class OutputsWritten:
    """What `write_outputs` wrote."""

    files: list[dict[str, object]]  # {"path", "lines", "requests"} per output file
    answered: int
    missing: int  # requests of the request files with no journal line
    duplicates: int  # journal lines left out: a second line for a custom_id


def write_outputs(shards: dict[Path, set[str]], out_dir: Path) -> OutputsWritten:
    """One output file per request file (``shards``: its custom_ids), from the journal, each
    written atomically (all of them written first as temporary files, then renamed)."""
    from reljudge.io.atomic import atomic_write

    out_dir = Path(out_dir)
    owner: dict[str, int] = {}
    paths = list(shards)
    for index, path in enumerate(paths):
        owner.update(dict.fromkeys(shards[path], index))
    names = output_names(paths)
    counts = [0] * len(paths)
    written: set[str] = set()
    duplicates = 0
    with contextlib.ExitStack() as stack:  # on an error every temporary file is removed
        handles = [stack.enter_context(atomic_write(out_dir / n, "wb")) for n in names]
        for part in sorted((out_dir / PARTS_DIR).glob("*.jsonl")):
            for _, line in _whole_lines(part, 0):
                answered = line_custom_id(line)
                shard = owner.get(answered) if answered is not None else None
                if shard is None or answered is None:
                    continue  # not a request of these files (an earlier export's)
                if answered in written:
                    duplicates += 1
                    continue
                written.add(answered)
                handles[shard].write(line)
                counts[shard] += 1
    files: list[dict[str, object]] = [
        {"path": out_dir / n, "lines": c, "requests": len(shards[p])}
        for n, c, p in zip(names, counts, paths, strict=True)
    ]
    return OutputsWritten(files, len(written), len(owner) - len(written), duplicates)
