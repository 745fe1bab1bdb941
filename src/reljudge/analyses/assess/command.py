"""``judge assess TASK``: serve the assessment page; ``judge assess export TASK``: human qrels,
a records file and the assessors' agreement."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer
from typer.core import TyperGroup


class AssessGroup(TyperGroup):
    """``judge assess TASK ...`` is ``judge assess serve TASK ...``; ``export`` is the other command."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ("--help", "-h"):
            args = ["serve", *args]
        return super().parse_args(ctx, args)


app = typer.Typer(
    cls=AssessGroup,
    no_args_is_help=True,
    help="People judge or post-edit LLM labels on a local page (judge assess TASK); "
    "export their labels (judge assess export TASK).",
)

RUN = typer.Option(
    None, "--run", help="The run the task was selected from: refuse the task unless it matches (fingerprint)."
)


def _assessor(name: str | None) -> str:
    import getpass

    from reljudge.analyses.assess.task import ASSESSOR_NAME
    from reljudge.errors import InputError

    if name is None:
        try:
            name = getpass.getuser()
        except (KeyError, OSError):
            name = ""
        if not ASSESSOR_NAME.fullmatch(name):
            raise InputError("give the assessor's name with --assessor NAME")
    if not ASSESSOR_NAME.fullmatch(name):
        raise InputError(
            f"--assessor {name!r}: letters, digits, '.', '_' and '-' only (it names a file), at most 64"
        )
    return name


@app.command("serve")
def serve_cmd(
    task_path: Path = typer.Argument(..., metavar="TASK", help="The task file (judge select writes it)."),
    assessor: str | None = typer.Option(
        None,
        "--assessor",
        help="Who judges (default: the login name); each assessor has a file of their own.",
    ),
    mode: str | None = typer.Option(
        None,
        "--mode",
        help="judge (the LLM's label shown), post-edit (its label pre-selected: Enter accepts) or blind "
        "(nothing of the LLM shown). Default: the task's.",
    ),
    port: int = typer.Option(8750, "--port", min=0, max=65535, help="Port on 127.0.0.1 (0: any free port)."),
    assessments: Path | None = typer.Option(
        None,
        "--assessments",
        help="The assessor's file (default: TASK_STEM.assess-NAME.jsonl beside the task).",
    ),
    run: Path | None = RUN,
) -> None:
    """Serve the assessment page on 127.0.0.1; every judgment is on disk before the page says saved."""
    from reljudge.analyses.assess.files import (
        AssessmentWriter,
        check_task_matches_run,
        default_assessment_path,
        read_task,
    )
    from reljudge.analyses.assess.server import AssessServer
    from reljudge.analyses.assess.task import MODES
    from reljudge.errors import InputError

    name = _assessor(assessor)
    task = read_task(task_path)
    if run is not None:
        check_task_matches_run(task, run)
    chosen = mode or task.mode
    if chosen not in MODES:
        raise InputError(f"--mode must be one of {', '.join(MODES)}, got {chosen!r}")
    path = assessments or default_assessment_path(task_path, name)
    with AssessmentWriter(path, task, name, chosen) as writer:
        try:
            server = AssessServer(task, writer, chosen, port)
        except OSError as err:
            raise InputError(f"cannot listen on 127.0.0.1:{port}: {err.strerror or err}") from None
        judged = sum(v is not None for v in server.app.labels.values())
        typer.echo(server.url, err=False)
        typer.echo(
            f"assessor {name}, {chosen} mode: {judged} of {len(task.items)} items judged so far; "
            f"every judgment goes to {path} at once. Ctrl-C stops.",
            err=True,
        )
        import sys

        sys.stdout.flush()
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass
        typer.echo(f"stopped: {len(writer.lines)} lines in {path}", err=True)


@app.command("export")
def export_cmd(
    task_path: Path = typer.Argument(..., metavar="TASK", help="The task file."),
    qrels: Path = typer.Option(..., "--qrels", help="Write the human qrels (qid 0 docid label) here."),
    records: Path = typer.Option(
        ...,
        "--records",
        help="Write the records (judgments JSONL: judge evaluate/combine/calibrate read it) here.",
    ),
    assessments: list[Path] = typer.Option(
        [],
        "--assessments",
        help="An assessor's file (repeat it; default: every TASK_STEM.assess-*.jsonl beside TASK).",
    ),
    run: Path | None = RUN,
    method: str = typer.Option("human", "--method", help="The records' method name."),
    json_output: bool = typer.Option(False, "--json", help="Print the counts and the agreement as JSON."),
) -> None:
    """Human qrels and a records file from the assessors' files; their agreement and the rule for the label."""
    from reljudge.analyses.assess.consensus import summary_lines
    from reljudge.analyses.assess.pipeline import export_paths

    result, written = export_paths(task_path, qrels, records, assessments or None, run=run, method=method)
    if json_output:
        from reljudge.console import echo_json

        echo_json({"counts": result.counts, "files": [str(f) for f in result.files]} | result.agreement)
    else:
        typer.echo(f"assessment files: {', '.join(str(f) for f in result.files)}")
        typer.echo("\n".join(summary_lines(result.counts, result.agreement)))
    typer.echo(f"wrote {', '.join(str(w) for w in written)}", err=True)
