"""The `judge` command line.

One module per command group: `prompts`, `data` (export, datasets), `run`, `probe`, `cache`,
`mock_server`, `sweep`, `batch` (batch files for vllm run-batch) and `report` (the HTML report).
An analysis folder holds its own commands (`reljudge.analyses.<name>.command`), wired here by one
line each. Each command parses its options, hands over
to the library and prints; heavy modules are imported inside the command bodies so that
``judge --help`` stays instant. The options of ``judge run`` and ``judge probe`` are generated
from `reljudge.run.RunConfig` (`reljudge.cli.options`) when one of them is used
(`reljudge.cli.deferred`). Bad input raises `InputError`, which `main()` prints as one line and
turns into exit code 2.
"""

from __future__ import annotations

import sys

import typer

from reljudge.analyses.answers import command as answers_command
from reljudge.analyses.assess import command as assess_command
from reljudge.analyses.calibrate import command as calibrate_command
from reljudge.analyses.combine import command as combine_command
from reljudge.analyses.evaluate import command as evaluate_command
from reljudge.analyses.fd import command as fd_command
from reljudge.analyses.grids import command as grids_command
from reljudge.analyses.histogram import command as histogram_command
from reljudge.analyses.humans import command as humans_command
from reljudge.analyses.leaderboard import command as leaderboard_command
from reljudge.analyses.pool_bias import command as pool_bias_command
from reljudge.analyses.shallow import command as shallow_command
from reljudge.analyses.sparsify import command as sparsify_command
from reljudge.autojudge import command as autojudge_command
from reljudge.cli import (
    batch,
    cache,
    data,
    demo,
    doctor,
    generate,
    mock_server,
    pairs,
    probe,
    prompts,
    report,
    run,
    sweep,
)
from reljudge.cli.deferred import ANALYSE, DATA, GPUS, JUDGE, TOOLS, DeferredCommand, JudgeGroup
from reljudge.errors import EXIT_BAD_INPUT, ReljudgeError

app = typer.Typer(
    name="judge",
    help="Judge search results with LLMs by the published methods, and measure how far to trust the labels.",
    cls=JudgeGroup,
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


def _version_callback(value: bool) -> None:
    if value:
        from reljudge.version import __version__

        typer.echo(f"reljudge {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version_callback, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """The options of ``judge`` itself."""


# the commands, in the order `judge --help` lists them, under their panels
app.command("demo", rich_help_panel=JUDGE)(demo.demo_cmd)
app.command("run", cls=DeferredCommand, rich_help_panel=JUDGE)(run.run_cmd)
app.command("generate", cls=DeferredCommand, rich_help_panel=JUDGE)(generate.generate_cmd)
app.command("sweep", rich_help_panel=JUDGE)(sweep.sweep_cmd)
app.command("probe", cls=DeferredCommand, rich_help_panel=JUDGE)(probe.probe_cmd)
app.command("autojudge", rich_help_panel=JUDGE)(autojudge_command.autojudge_cmd)
app.add_typer(pairs.app, name="pairs", rich_help_panel=JUDGE)
app.command("evaluate", rich_help_panel=ANALYSE)(evaluate_command.evaluate_cmd)
app.command("report", rich_help_panel=ANALYSE)(report.report_cmd)
app.command("fd", rich_help_panel=ANALYSE)(fd_command.fd_cmd)
app.command("plot-summary", rich_help_panel=ANALYSE)(evaluate_command.plot_summary_cmd)
app.command("combine", rich_help_panel=ANALYSE)(combine_command.combine_cmd)
app.command("calibrate", rich_help_panel=ANALYSE)(calibrate_command.calibrate_cmd)
app.command("select", rich_help_panel=ANALYSE)(humans_command.select_cmd)
app.command("estimate", rich_help_panel=ANALYSE)(humans_command.estimate_cmd)
app.command("histogram", rich_help_panel=ANALYSE)(histogram_command.histogram_cmd)
app.command("pool-bias", rich_help_panel=ANALYSE)(pool_bias_command.pool_bias_cmd)
app.command("sparsify", rich_help_panel=ANALYSE)(sparsify_command.sparsify_cmd)
app.command("leaderboard", rich_help_panel=ANALYSE)(leaderboard_command.leaderboard_cmd)
app.add_typer(shallow_command.app, name="shallow", rich_help_panel=ANALYSE)
app.add_typer(answers_command.app, name="answers", rich_help_panel=ANALYSE)
app.add_typer(assess_command.app, name="assess", rich_help_panel=ANALYSE)
app.command("grids", rich_help_panel=ANALYSE)(grids_command.grids_cmd)
app.add_typer(batch.app, name="batch", rich_help_panel=GPUS)
app.command("export", rich_help_panel=DATA)(data.export_cmd)
app.command("datasets", rich_help_panel=DATA)(data.datasets_cmd)
app.add_typer(prompts.app, name="prompts", rich_help_panel=DATA)
app.command("doctor", rich_help_panel=TOOLS)(doctor.doctor_cmd)
app.command("mock-server", rich_help_panel=TOOLS)(mock_server.mock_server_cmd)
app.add_typer(cache.app, name="cache", rich_help_panel=TOOLS)


def main(args: list[str] | None = None) -> None:
    """The ``judge`` command with ``args`` (default: the process's arguments); exits with its code."""
    try:
        app(args=args, prog_name="judge")
    except ReljudgeError as err:  # bad input, a missing optional extra: one line, exit code 2
        typer.echo(f"error: {err}", err=True)
        sys.exit(EXIT_BAD_INPUT)
    except KeyboardInterrupt:  # Ctrl-C outside a judging job (loading, a report): no traceback
        typer.echo("interrupted", err=True)
        sys.exit(130)


__all__ = ["app", "main"]
