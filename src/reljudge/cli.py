"""The `judge` command line.

Each command parses its options and hands over to the library; heavy modules are imported
inside the command bodies so that `judge --help` stays instant. Bad input raises `InputError`,
which `main()` prints as one line and turns into exit code 2.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer

from reljudge.errors import EXIT_BAD_INPUT, InputError

app = typer.Typer(
    name="judge",
    help="Judge search results with LLMs by the published methods, and measure how far to trust the labels.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)
cache_app = typer.Typer(help="Inspect or clear the persistent LLM response cache.", no_args_is_help=True)
app.add_typer(cache_app, name="cache")


def _version_callback(value: bool) -> None:
    if value:
        from reljudge import __version__

        typer.echo(f"reljudge {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_version_callback, is_eager=True, help="Print the version and exit."),
) -> None:
    """Judge search results with LLMs by the published methods, and measure how far to trust the labels."""


# --- commands are added below, one block each -------------------------------------------


def main() -> None:
    try:
        app()
    except InputError as err:
        typer.echo(f"error: {err}", err=True)
        sys.exit(EXIT_BAD_INPUT)


if __name__ == "__main__":
    main()
