"""``--yes`` and ``--confirm-above USD``: on a terminal, a costly job asks before it starts.

A job asks ``Proceed? [y/N]`` when stdin and stderr are both terminals, ``--yes`` is not given,
and its estimate calls for it (`reljudge.run.estimate.confirmation_reason`: the estimated cost
above ``--confirm-above``, 5 USD by default, or pairwise with all pairs on a large pool). Not on
a terminal (a script, a pipe, Slurm, CI) it never asks and proceeds. Anything but ``y``/``yes``
(an empty line, end of input) is no: nothing is called or written, exit code 1.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from typing import Any

import typer

YES_HELP = "Do not ask for confirmation on a terminal, however large the estimate (see --confirm-above)."
CONFIRM_HELP = (
    "On a terminal (stdin and stderr), a job whose estimated cost is above this many USD (or pairwise with "
    "all pairs and more than 10,000 calls) prints its estimate and asks 'Proceed? [y/N]' first; --yes skips "
    "it. Not on a terminal it proceeds without asking."
)


def on_terminal() -> bool:
    """Whether someone can answer: stdin and stderr are both terminals."""
    try:
        return sys.stdin.isatty() and sys.stderr.isatty()
    except (AttributeError, ValueError):  # closed or replaced streams
        return False


def ask(text: str) -> bool:
    """Print ``text`` and ``Proceed? [y/N]`` on stderr and read the answer from stdin."""
    typer.echo(text, err=True)
    typer.echo("Proceed? [y/N] ", err=True, nl=False)
    answer = sys.stdin.readline(100)
    return answer.strip().lower() in ("y", "yes")


def run_confirmation(yes: bool, above: float) -> Callable[[dict[str, Any]], bool] | None:
    """The ``confirm`` callback of `reljudge.run.run_job_async` for ``judge run``, None when
    it must not ask (``--yes``, or not on a terminal)."""
    if yes or not on_terminal():
        return None

    def confirm(est: Mapping[str, Any]) -> bool:
        from reljudge.run.estimate import confirmation_reason, render_estimate

        reason = confirmation_reason(est, above)
        if reason is None:
            return True
        shown = render_estimate(est).replace("nothing was called and nothing was written", "").rstrip()
        return ask(f"{shown}\nconfirm: {reason} (--yes skips this question)")

    return confirm
