"""What the commands print, the same way in every command (the commands live in their feature
packages; `reljudge.cli` only wires them into the app).

- `echo_json`: a value as indented JSON (NaN and ±inf as null, numpy values as numbers, UTF-8
  kept), for ``--json``;
- `show_written`: an analysis's console tables (or, with ``--json``, the JSON file it just
  wrote), then the list of files written, on standard error;
- `int_list`: an option of comma-separated integers >= 1, or `InputError`;
- `warnings_to_stderr`: log warnings printed as ``warning: MESSAGE`` on standard error;
- `DATASET_HELP`: the help of ``--dataset`` wherever human qrels (and runs) are read.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import Any

import typer

from reljudge.errors import InputError

#: the help of ``--dataset`` wherever human qrels (and runs) are read
DATASET_HELP = (
    "Take the human qrels (and the grade scale) from a known dataset (dl19-sample, trec-dl19, ...; see "
    "'judge datasets'), a dataset directory, or irds:<id> (an ir_datasets collection, read offline from "
    "its cache, e.g. irds:msmarco-passage/trec-dl-2019/judged) instead of --qrels"
)


def echo_json(value: Any) -> None:
    import json

    from reljudge.io.tables import json_ready

    typer.echo(json.dumps(json_ready(value), indent=2, ensure_ascii=False))


def show_written(written: list[Path], text: str, json_output: bool) -> None:
    """The tables, or with ``--json`` the JSON file just written; then the list of files."""
    if json_output:
        typer.echo(next(p for p in written if p.suffix == ".json").read_text(encoding="utf-8").rstrip("\n"))
    else:
        typer.echo(text)
    typer.echo(f"wrote {', '.join(str(w) for w in written)}", err=True)


def int_list(text: str, option: str) -> list[int]:
    """``text`` as comma-separated integers >= 1 (``option`` names it in the error)."""
    try:
        values = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise InputError(f"{option} takes comma-separated integers, got {text!r}") from None
    if not values or any(v < 1 for v in values):
        raise InputError(f"{option} takes integers >= 1, got {text!r}")
    return values


class _StderrWarnings(logging.StreamHandler):
    """``warning: MESSAGE`` on whatever `sys.stderr` is when the warning is logged (a command run
    in-process, e.g. by a test runner, gets its warnings on its own standard error)."""

    def __init__(self) -> None:
        super().__init__()
        self.setLevel(logging.WARNING)
        self.setFormatter(logging.Formatter("warning: %(message)s"))

    def emit(self, record: logging.LogRecord) -> None:
        self.stream = sys.stderr
        super().emit(record)


def warnings_to_stderr() -> None:
    """Print the warnings of every logger as ``warning: MESSAGE`` on standard error (once per
    process: a second call adds nothing)."""
    root = logging.getLogger()
    if not any(isinstance(h, _StderrWarnings) for h in root.handlers):
        root.addHandler(_StderrWarnings())
