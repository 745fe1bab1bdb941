"""One way for tests to run the ``judge`` command line: in this process, through
`reljudge.cli.main` (the real entry point, with its ``error: ...`` lines and exit codes), under
click's test runner. About a second faster per call than a new interpreter. And one way to read
back the records a command wrote (`records`, `cell_records`).

A test needs a real process only where a signal, a lock held by another process, a terminal, a
missing module or the interpreter's own start is what it tests; those use `subprocess` directly.
"""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from typer.testing import CliRunner

from reljudge.io.judgments import read_judgments
from reljudge.records import Judgment


@dataclass(frozen=True)
class Ran:
    """What a command did: the fields of `subprocess.CompletedProcess` that tests read."""

    args: list[str]
    returncode: int
    stdout: str
    stderr: str

    @property
    def output(self) -> str:
        return self.stdout + self.stderr


def judge(
    *args: str | os.PathLike[str],
    cwd: str | os.PathLike[str] | None = None,
    env: Mapping[str, str | None] | None = None,
    input: str | None = None,
) -> Ran:
    """Run ``judge ARGS`` in this process, in ``cwd``, with ``env`` laid over the environment (a
    value of None removes the variable) and ``input`` as standard input."""
    from reljudge.cli import main

    argv = [os.fspath(a) for a in args]
    # what earlier commands of this process left for the garbage collector goes now, outside any
    # event loop: an SDK client collected later, inside this command's loop, schedules its own
    # close there, which may outlive the loop and print a traceback into this command's output
    gc.collect()
    before, saved_argv = Path.cwd(), sys.argv
    code = 0
    with CliRunner().isolation(input=input, env=env) as (out, err, _):
        sys.argv = ["judge", *argv]
        if cwd is not None:
            os.chdir(cwd)
        try:
            main(argv)
        except SystemExit as stop:
            code = stop.code if isinstance(stop.code, int) else 0 if stop.code is None else 1
        finally:
            sys.argv = saved_argv
            os.chdir(before)
        stdout, stderr = out.getvalue().decode(), err.getvalue().decode()
    return Ran(["judge", *argv], code, stdout, stderr)


def records(run_dir: str | os.PathLike[str]) -> list[Judgment]:
    """Every record in a run directory's ``judgments.jsonl``, in file order, a key's earlier
    records kept (so that a test can count what was sent twice)."""
    return read_judgments(Path(run_dir) / "judgments.jsonl")


def cell_records(sweep_out: str | os.PathLike[str]) -> list[Judgment]:
    """Every record of every cell of a sweep's output directory (`records` of each
    ``cells/**/judgments.jsonl``, in path order); none before a cell has started."""
    return [
        r for path in sorted(Path(sweep_out).glob("cells/**/judgments.jsonl")) for r in read_judgments(path)
    ]
