"""Stopping a job cleanly when the process is asked to stop.

Ctrl-C (SIGINT), SIGTERM (Slurm at the end of a time limit, ``docker stop``, ``timeout``) and
SIGHUP (the terminal went away) are all treated the same way by `run_stoppable`: the first one
cancels the job's main task, so that its clean-up runs exactly as for Ctrl-C (the records so far
are kept, ``qrels.txt`` and the manifest are written with ``state: "interrupted"``), and then
`Stopped` is raised with the signal's number. Signals that arrive while the job is cleaning up
are noted, not acted on: a second Ctrl-C does not tear the clean-up apart with a traceback from
inside asyncio. (SIGKILL cannot be caught; a run killed that way resumes from its judgments.)

The exit code of a stopped command is ``128 + signal number``, the shell's convention: 130 for
SIGINT, 143 for SIGTERM, 129 for SIGHUP.
"""

from __future__ import annotations

import asyncio
import signal
import sys
from collections.abc import Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")

#: the signals that stop a job cleanly (those the platform has)
STOP_SIGNALS: tuple[signal.Signals, ...] = tuple(
    getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name)
)


class Stopped(Exception):
    """The job was stopped by a signal (after its clean-up ran). ``exit_code`` = 128 + signal."""

    def __init__(self, signum: int) -> None:
        self.signum = signum
        self.name = signal.Signals(signum).name
        self.exit_code = 128 + signum
        super().__init__(f"stopped by {self.name}")


def run_stoppable(main: Callable[[], Awaitable[T]]) -> T:
    """``asyncio.run(main())``, stopped cleanly by `STOP_SIGNALS` (see the module docstring).

    Raises `Stopped` when a signal stopped the job; where signal handlers cannot be installed
    (not the main thread, Windows), Ctrl-C raises `KeyboardInterrupt` as usual."""

    async def guarded() -> T:
        loop = asyncio.get_running_loop()
        job = asyncio.ensure_future(main())
        received: list[int] = []

        def on_signal(signum: int) -> None:
            received.append(signum)
            if len(received) == 1:
                job.cancel()  # a job that already finished is not affected
            elif len(received) == 2:
                print(
                    f"{signal.Signals(signum).name} again: already stopping, saving what was judged",
                    file=sys.stderr,
                )

        installed = []
        for sig in STOP_SIGNALS:
            try:
                loop.add_signal_handler(sig, on_signal, int(sig))
            except (NotImplementedError, RuntimeError, ValueError):  # pragma: no cover - not POSIX
                continue
            installed.append(sig)
        try:
            return await job
        except asyncio.CancelledError:
            if received and job.cancelled():
                raise Stopped(received[0]) from None
            raise
        finally:
            for sig in installed:
                loop.remove_signal_handler(sig)

    return asyncio.run(guarded())
