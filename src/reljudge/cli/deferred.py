"""Commands whose options are made when the command is used, not when ``judge --help`` lists it.

The options of ``judge run`` and ``judge probe`` come from `reljudge.run.RunConfig`
(`reljudge.cli.options`), and importing it loads pydantic and the run package: a few tenths of a
second that ``judge --help`` and every other command should not pay. Such a command is
registered with ``cls=DeferredCommand``: typer builds it from the command function as it is
declared (its own options; its docstring is what ``judge --help`` lists), and `JudgeGroup`, the
group of ``judge``, replaces it by the full command -- options generated -- when it is invoked,
also for ``judge run --help``.
"""

from __future__ import annotations

import inspect
from typing import Any

import typer
import typer.main
from typer.core import TyperCommand, TyperGroup

#: the panels of ``judge --help``, in their order (a command's ``rich_help_panel``)
JUDGE, ANALYSE, GPUS, DATA, TOOLS = (
    "Judge",
    "Evaluate & analyse",
    "Batches & own GPUs",
    "Data & prompts",
    "Tools",
)
PANELS = (JUDGE, ANALYSE, GPUS, DATA, TOOLS)


class DeferredCommand(TyperCommand):
    """A command of `JudgeGroup` that stands in for the full one until the command is used."""

    def load(self) -> Any:
        """The full command: the command function with its generated options
        (`reljudge.cli.options.command_function`), built by typer as any other."""
        from reljudge.cli.options import command_function

        assert self.callback is not None and self.name is not None
        function = inspect.unwrap(self.callback)  # typer's wrapper of the command function
        single = typer.Typer(add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None)
        single.command(self.name)(command_function(function))
        return typer.main.get_command(single)


class JudgeGroup(TyperGroup):
    """The ``judge`` group: a `DeferredCommand` gives way to the full command when invoked."""

    def resolve_command(self, ctx: Any, args: list[str]) -> tuple[str | None, Any, list[str]]:
        name, command, rest = super().resolve_command(ctx, args)
        if isinstance(command, DeferredCommand) and name is not None:
            command = self.commands[name] = command.load()
        return name, command, rest

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        """The commands under their panels (``rich_help_panel``), panels in `PANELS` order, one
        aligned column for all; a command without a panel under "Commands", last."""
        panels: dict[str, list[tuple[str, Any]]] = {}
        for name in self.list_commands(ctx):
            command = self.get_command(ctx, name)
            if command is not None and not command.hidden:
                panel = getattr(command, "rich_help_panel", None) or "Commands"
                panels.setdefault(panel, []).append((name, command))
        if not panels:
            return
        width = max(len(name) for rows in panels.values() for name, _ in rows)
        limit = formatter.width - 6 - width
        order = {panel: i for i, panel in enumerate(PANELS)}
        for panel, rows in sorted(panels.items(), key=lambda item: order.get(item[0], len(order))):
            with formatter.section(panel):
                formatter.write_dl(
                    [(name.ljust(width), command.get_short_help_str(limit)) for name, command in rows]
                )
