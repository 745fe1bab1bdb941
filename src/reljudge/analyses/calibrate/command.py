"""``judge calibrate``: fit judge scores to human grades on a few topics, judge on the rest."""

from __future__ import annotations

from pathlib import Path

import typer

from reljudge.console import DATASET_HELP


def calibrate_cmd(
    judgments: str = typer.Option(
        ...,
        "--judgments",
        help="A run directory, judgments .jsonl or qrels-like file (labels or expected scores).",
    ),
    qrels: Path | None = typer.Option(None, "--qrels", help="Human qrels (qid iter docid grade)."),
    dataset: str | None = typer.Option(None, "--dataset", help=DATASET_HELP + "."),
    set_name: str | None = typer.Option(
        None, "--set", help="The score set when the judgments give several (e.g. umbrela-expected)."
    ),
    topics_fraction: float = typer.Option(
        0.2, "--topics-fraction", help="Share of topics the mapping is fitted on."
    ),
    repeats: int = typer.Option(50, "--repeats", min=1, help="Random topic splits (cross-validation)."),
    seed: int = typer.Option(0, "--seed", help="Seed of the topic splits."),
    human_threshold: float | None = typer.Option(
        None,
        "--human-threshold",
        help="Lowest human grade that is relevant (default: the dataset's, else 2).",
    ),
    out: Path | None = typer.Option(
        None,
        "--out",
        "--output",
        help="Write calibration.json and the first split's calibrated binary/graded qrels here.",
    ),
    json_output: bool = typer.Option(False, "--json", help="Print the summary and every split as JSON."),
) -> None:
    """Calibrate judge scores on a few human-labelled topics; kappa on the held-out topics with intervals."""
    from reljudge.analyses.calibrate.files import write_calibration
    from reljudge.analyses.calibrate.pipeline import calibrate_paths
    from reljudge.analyses.calibrate.summary import summary
    from reljudge.errors import InputError

    if not 0.0 < topics_fraction < 1.0:
        raise InputError(f"--topics-fraction must be between 0 and 1, got {topics_fraction}")
    chosen, result = calibrate_paths(
        judgments,
        qrels=qrels,
        dataset=dataset,
        set_name=set_name,
        fit_fraction=topics_fraction,
        repeats=repeats,
        seed=seed,
        human_threshold=human_threshold,
    )
    if json_output:
        from reljudge.console import echo_json

        echo_json({"summary": result.summary, "splits": [vars(s) for s in result.splits]})
    else:
        typer.echo(summary(result))
    if out is not None:
        written = write_calibration(chosen, result, out)
        typer.echo(f"wrote {', '.join(str(w) for w in written)}", err=True)
