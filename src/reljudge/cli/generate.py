"""``judge generate``: answers to a dataset's topics through the LLM client, resumably.

Its options are `RunConfig`'s for ``generate`` (those of ``judge run`` but the ones about judging
passages, `reljudge.run.options.NOT_GENERATE`); ``--name``, ``--answers`` and ``--json`` are its own.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import typer

from reljudge.cli.options import run_config, with_run_options
from reljudge.console import warnings_to_stderr


@with_run_options("generate", after={"name": "prompt", "answers": "output"})
def generate_cmd(
    name: str = typer.Option(
        None, "--name", help="System name in the answers TSV (default: the run directory's name)."
    ),
    answers: Path = typer.Option(None, "--answers", help="Also write the answers TSV to this file."),
    json_output: bool = typer.Option(False, "--json", help="Print the summary as JSON on stdout."),
    **run_options: Any,
) -> None:
    """Generate one answer per topic with a prompt (neutral by default), resumably.

    Writes RUN/judgments.jsonl (one 'answer' record per topic, with provenance), RUN/answers.tsv
    (system<TAB>qid<TAB>answer, the answers so far) and RUN/manifest.json. The same command
    resumes an interrupted run without asking a topic twice; --dry-run prints the calls and the
    cost estimate. Exit codes as 'judge run': 0 ok, 1 failure share above --max-failure-rate or
    the provider cannot serve the job, 2 bad input, 130/143/129 stopped by a signal.
    """
    import json

    from reljudge.cli.run import run_or_batch
    from reljudge.interrupts import Stopped, run_stoppable
    from reljudge.run.generated_answers import write_run_answers

    config = run_config("generate", run_options, method="generate", command=["judge", *sys.argv[1:]])
    warnings_to_stderr()
    code: int | None = None
    try:
        summary = run_stoppable(lambda: run_or_batch(config))
    except Stopped as stop:  # the job saved what it had: write the answers so far, then stop
        typer.echo(f"stopped by {stop.name}", err=True)
        code = stop.exit_code
    except KeyboardInterrupt:
        typer.echo("interrupted", err=True)
        code = 130
    if code is not None:
        _answers_so_far(config, name, answers)
        raise typer.Exit(code)
    written = None
    if summary.state != "dry-run" and summary.output_dir is not None:
        written = write_run_answers(summary.output_dir, config.method, name, answers)
    if json_output:
        typer.echo(json.dumps({**summary.model_dump(mode="json"), "answers": written}, indent=2))
    else:
        typer.echo(summary.render())
        if written is not None:
            typer.echo(f"answers: {written['answers']} -> {written['path']} (system {written['system']})")
    if summary.abort is not None:
        message, hint = summary.abort.get("message"), summary.abort.get("hint")
        typer.echo(f"error: {message}" + (f" ({hint})" if hint else ""), err=True)
    raise typer.Exit(summary.exit_code)


def _answers_so_far(config: Any, name: str | None, answers: Path | None) -> None:
    from reljudge.errors import InputError
    from reljudge.run.generated_answers import write_run_answers

    if config.output is None:  # the default directory is known only to the job: resume to write them
        return
    try:
        written = write_run_answers(config.output, config.method, name, answers)
    except InputError:
        return
    typer.echo(f"answers so far: {written['answers']} -> {written['path']}", err=True)
