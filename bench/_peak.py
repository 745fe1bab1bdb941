"""Run a Python command and write its own peak resident set (``VmHWM``, in kB) to a file at exit:
``python bench/_peak.py OUT -m MODULE ARGS...`` or ``python bench/_peak.py OUT -c CODE ARGS...``.

Why not ``ru_maxrss`` from ``wait4``: Linux keeps a process's ``maxrss`` across ``exec``, so a
child forked by a large benchmark process reports at least that process's size (every command
forked by ``bench/run.py`` late in its run read 401 MB). ``VmHWM`` belongs to the address space
that ``exec`` makes new, so it counts the command alone.
"""

from __future__ import annotations

import atexit
import runpy
import sys
from pathlib import Path


def _write_peak(out: Path) -> None:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            out.write_text(line.split()[1])
            return


def main() -> None:
    out, how, what, *args = sys.argv[1:]
    atexit.register(_write_peak, Path(out))
    if how == "-m":
        sys.argv = [what, *args]
        runpy.run_module(what, run_name="__main__", alter_sys=True)
    elif how == "-c":
        sys.argv = ["-c", *args]
        exec(compile(what, "<string>", "exec"), {"__name__": "__main__"})
    else:
        raise SystemExit(f"usage: {sys.argv[0]} OUT -m MODULE ARGS... | -c CODE ARGS...")


if __name__ == "__main__":
    main()
