"""Run-type files for ``judge pool-bias``: one line per run, ``run<TAB>group<TAB>type``.

A ``#`` starts a comment (a whole line, or the rest of a line after the three columns); blank
lines are skipped. Columns are separated by tabs (or any run of whitespace). A line with
another number of columns, an empty field or a run listed twice is an `InputError` naming
``file:line``.
"""

from __future__ import annotations

from pathlib import Path

from reljudge.errors import InputError
from reljudge.io.lines import read_lines


def read_run_info(path: str | Path) -> dict[str, tuple[str, str]]:
    """``{run: (group, type)}`` from a run-type file (see the module docstring)."""
    path = Path(path)
    info: dict[str, tuple[str, str]] = {}
    for number, line in read_lines(path):
        text = line.split("#", 1)[0].strip()
        if not text:
            continue
        parts = text.split()
        if len(parts) != 3:
            raise InputError(f"expected 3 columns 'run<TAB>group<TAB>type', found {len(parts)}", path, number)
        run, group, kind = parts
        if run in info:
            raise InputError(f"run {run!r} is listed twice", path, number)
        info[run] = (group, kind)
    if not info:
        raise InputError("no runs in the run-type file", path)
    return info
