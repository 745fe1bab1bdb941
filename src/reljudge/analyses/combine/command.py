"""``judge combine``: a consensus judgment set from several (prompts, models, runs)."""

from __future__ import annotations

from pathlib import Path

import typer

from reljudge.console import DATASET_HELP
from reljudge.errors import InputError


def _scale(text: str | None) -> tuple[float, float] | None:
    if text is None:
        return None
    lo, sep, hi = text.partition("-")
    try:
        bounds = (float(lo), float(hi))
    except ValueError:
        bounds = None
    if not sep or bounds is None or bounds[0] > bounds[1]:
        raise InputError(f"--scale must be LO-HI (e.g. 0-3), got {text!r}")
    return bounds


def combine_cmd(
    sources: list[str] = typer.Argument(
        ..., help="Run directories, judgments files, qrels-like files or globs: one member each."
    ),
    out: Path = typer.Option(
        ..., "--out", "--output", help="Directory for qrels.txt, items.tsv and combine.json."
    ),
    rule: str = typer.Option(
        "majority", "--rule", help="majority (ties to the lowest label), mean, min or max."
    ),
    scores: str = typer.Option(
        "labels",
        "--scores",
        help="labels, or expected: each member's <method>-expected set (mean = expected-mean).",
    ),
    scale: str | None = typer.Option(
        None, "--scale", help="LO-HI: labels outside are invalid and left out (e.g. 0-1, 0-3)."
    ),
    duplicates: str = typer.Option(
        "error", "--duplicates", help="A (qid, docid) listed twice in a qrels-like file: error, last or max."
    ),
    qrels: Path | None = typer.Option(
        None, "--qrels", help="Human qrels: report kappa of each member and the consensus."
    ),
    dataset: str | None = typer.Option(None, "--dataset", help=DATASET_HELP + "."),
    json_output: bool = typer.Option(False, "--json", help="Print combine.json's content instead of tables."),
) -> None:
    """Combine judgment sets into a consensus set, with per-item disagreement and alpha between members."""
    from reljudge.analyses.combine.files import load_members, write_combined
    from reljudge.analyses.combine.pipeline import combine, summary

    human = None
    if qrels is not None or dataset is not None:
        from reljudge.analyses.inputs import load_human_labels

        human = load_human_labels(qrels, dataset)
    bounds = _scale(scale)
    members = load_members(sources, scores=scores, scale=bounds, duplicates=duplicates)
    report = combine(members, rule, human, bounds)
    if json_output:
        from reljudge.console import echo_json

        echo_json(report.as_dict())
    else:
        typer.echo(summary(report))
    written = write_combined(report, out)
    typer.echo(f"wrote {', '.join(str(w) for w in written)}", err=True)
