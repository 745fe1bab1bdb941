"""``judge report DIR``: one self-contained HTML file to look at a run, evaluation or sweep."""

from __future__ import annotations

from pathlib import Path

import typer


def report_cmd(
    directory: Path = typer.Argument(..., help="A run directory, an evaluation or sweep output directory."),
    out: Path | None = typer.Option(
        None, "--out", "--output", help="The HTML file to write (default: DIRECTORY/report.html)."
    ),
    qrels: Path | None = typer.Option(
        None, "--qrels", help="Human qrels for the item browser (default: the run's own dataset's qrels)."
    ),
    max_items: int = typer.Option(
        5000,
        "--max-items",
        min=1,
        help="Items listed in a run's browser (failures first, then disagreements with the humans).",
    ),
    assessments: list[Path] = typer.Option(
        [],
        "--assessments",
        "-a",
        help="Assessment files of judge assess: the people's checks beside the LLM labels.",
    ),
    task: Path | None = typer.Option(None, "--task", help="The task file of the assessments (their strata)."),
) -> None:
    """Write one self-contained HTML report (no network, no server): summary, status counts, cost,
    figures, tables and, for a run, a per-item browser with filters."""
    from reljudge.report import write_html_report

    path = write_html_report(
        directory, out, qrels=qrels, max_items=max_items, assessments=assessments, task=task
    )
    typer.echo(f"wrote {path}")
