"""``judge run``: judge a pool with one method and model, resumably.

Its options are `RunConfig`'s (`reljudge.cli.options`); ``--json`` is its own.
"""

from __future__ import annotations

import sys
from typing import Any

import typer

from reljudge.cli.confirm import CONFIRM_HELP, YES_HELP
from reljudge.cli.options import run_config, with_run_options
from reljudge.console import warnings_to_stderr


@with_run_options(
    "run", after={"json_output": "float_policy", "yes": "max_cost", "confirm_above": "max_cost"}
)
def run_cmd(
    json_output: bool = typer.Option(False, "--json", help="Print the summary as JSON on stdout."),
    yes: bool = typer.Option(False, "--yes", "-y", help=YES_HELP),
    confirm_above: float = typer.Option(5.0, "--confirm-above", min=0.0, help=CONFIRM_HELP),
    **run_options: Any,
) -> None:
    """Judge a pool of (topic, passage) items with one method and model, resumably.

    Writes RUN/judgments.jsonl (one record per item, appended as they come), RUN/qrels.txt and
    RUN/manifest.json. Exit codes: 0 ok, 1 failure share above --max-failure-rate or the provider
    cannot serve the job (aborted: the records so far are kept), or no to the confirmation
    (see --confirm-above), 2 bad input, 3 stopped at the --max-cost cap (everything saved; a
    higher cap resumes), 75 --batch-max-wait passed with batches still running (the same command
    re-attaches to them), 130 interrupted
    (Ctrl+C), and likewise 128 + the signal number for the other stop signals: 143 SIGTERM (Slurm,
    docker stop, timeout), 129 SIGHUP. A stopped job keeps its records, writes qrels.txt and its
    manifest (state "interrupted"), and the same command resumes it.
    """
    import json

    from reljudge.cli.confirm import run_confirmation
    from reljudge.interrupts import Stopped, run_stoppable
    from reljudge.run.estimate import NotConfirmed

    config = run_config("run", run_options, command=["judge", *sys.argv[1:]])
    warnings_to_stderr()
    confirm = run_confirmation(yes, confirm_above)
    try:
        summary = run_stoppable(lambda: run_or_batch(config, confirm))
    except NotConfirmed as declined:
        typer.echo(str(declined), err=True)
        raise typer.Exit(1) from None
    except Stopped as stop:  # the job saved what it had and said how to resume
        typer.echo(f"stopped by {stop.name}", err=True)
        raise typer.Exit(stop.exit_code) from None
    except KeyboardInterrupt:  # Ctrl-C where no signal handler could be installed
        typer.echo("interrupted", err=True)
        raise typer.Exit(130) from None
    scored = unscored = None
    if config.answers and summary.state != "dry-run" and summary.output_dir is not None:
        if summary.state == "finished":  # only a finished run scores its answers (all judged)
            from reljudge.run.scored_answers import score_answers

            scored = score_answers(config, summary.output_dir)  # per topic and system, written
        else:
            unscored = (
                f"answer scores not written: the run is {summary.state}, not every answer is judged "
                "(the same command resumes, then writes them)"
            )
    if json_output:
        payload = summary.model_dump(mode="json")
        if scored is not None:
            incomplete = [list(pair) for pair in scored.scores.incomplete]
            payload["answers"] = {
                "systems": scored.scores.systems,
                "incomplete": incomplete,
                "files": scored.files,
            }
        elif unscored is not None:
            payload["answers"] = {"systems": None, "not_scored": unscored}
        typer.echo(json.dumps(payload, indent=2))
    else:
        typer.echo(summary.render())
        if scored is not None:
            typer.echo(scored.scores.text)
            typer.echo(f"answer scores: {scored.files['topics']}, {scored.files['systems']}")
        elif unscored is not None:
            typer.echo(unscored)
    if summary.abort is not None:  # the provider cannot serve the job: its message, once
        message, hint = summary.abort.get("message"), summary.abort.get("hint")
        typer.echo(f"error: {message}" + (f" ({hint})" if hint else ""), err=True)
    raise typer.Exit(summary.exit_code)


async def run_or_batch(config: Any, confirm: Any = None) -> Any:
    """The job: one request at a time, or through the Batch API (``--batch``; exit code 75 when
    ``--batch-max-wait`` passed, 3 at the ``--max-cost`` cap). ``confirm``: the terminal's
    confirmation (`reljudge.cli.confirm.run_confirmation`), asked with the estimate at the
    synchronous or the batch price before a new job starts."""
    from reljudge.run import run_job_async

    if not config.batch or config.dry_run:
        return await run_job_async(config, confirm=confirm)
    from reljudge.llm.types import ProviderError
    from reljudge.run.batch.cost import BatchCapped
    from reljudge.run.batch.passes import BatchLimits, BatchPending, run_batch_async
    from reljudge.run.options import BATCH_LIMITS

    limits = BatchLimits(
        poll_s=config.batch_poll, max_wait_s=config.batch_max_wait, resend_lost=config.batch_resend_lost
    )
    for name, value in config.batch_limits.items():  # --batch-limit requests=N, mb=M, tokens=T
        setattr(limits, BATCH_LIMITS[name], value * 1_000_000 if name == "mb" else value)
    if confirm is not None:
        from reljudge.run.batch.cost import confirm_batch_job

        confirm_batch_job(config, confirm)
    try:
        return await run_batch_async(config, limits)
    except BatchPending as pending:
        typer.echo(str(pending), err=True)
        raise typer.Exit(75) from None
    except ProviderError as err:  # the Batch API refused or failed (secrets masked)
        resumes = getattr(err, "resumes", True)  # False: the same command would stop there again
        tail = "; everything is saved and the same command resumes" if resumes else ""
        typer.echo(f"error: the batch API: {err}{tail}", err=True)
        raise typer.Exit(1) from None
    except BatchCapped as capped:
        if capped.summary is not None:
            typer.echo(capped.summary.render())
        typer.echo(str(capped), err=True)
        raise typer.Exit(3) from None
