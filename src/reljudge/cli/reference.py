"""The ``judge`` command tree as Markdown, for the CLI reference of the documentation site
(``docs/reference/cli.md``, filled in by ``docs/hooks.py`` at build time): every command and
sub-command with its help, exactly as ``judge ... --help`` prints it.

``judge --help`` stays fast because some commands build their options only when used
(`reljudge.cli.deferred.DeferredCommand`); the reference wants every option, so each deferred
command is replaced by its full command here. Nothing in the ``judge`` command imports this module.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import typer.main

from reljudge.cli import app
from reljudge.cli.deferred import DeferredCommand


def _commands(command: Any, path: list[str], parent: Any = None) -> Iterator[tuple[list[str], Any, Any]]:
    """(path, command, its context) of ``command`` and everything under it, in listing order."""
    if isinstance(command, DeferredCommand):
        command = command.load()
    ctx = command.context_class(
        command, info_name=path[-1], parent=parent, terminal_width=100, max_content_width=100
    )
    yield path, command, ctx
    subcommands = getattr(command, "commands", None)
    if subcommands:
        for name in command.list_commands(ctx):
            yield from _commands(subcommands[name], [*path, name], ctx)


def markdown(heading_level: int = 2) -> str:
    """One section per command: its first help line, then its ``--help`` text."""
    root = typer.main.get_command(app)
    parts = []
    for path, command, ctx in _commands(root, ["judge"]):
        if len(path) == 1:
            parts.append(f"```text\n{command.get_help(ctx).rstrip()}\n```\n")
            continue
        hashes = "#" * min(6, heading_level + len(path) - 2)
        parts.append(f"{hashes} `{' '.join(path)}`\n\n```text\n{command.get_help(ctx).rstrip()}\n```\n")
    return "\n".join(parts)
