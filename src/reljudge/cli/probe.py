"""``judge probe``: re-judge a sample with passages altered to game the judge.

Its options are `RunConfig`'s for ``probe`` (`reljudge.cli.options`; the model's seed is
``--model-seed`` there) and these of its own: ``--sample``, ``--seed`` (of the sample),
``--perturbation``, ``--output`` (the report file), ``--max-flip-rate`` and ``--json``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from reljudge.cli.options import run_config, with_run_options

AFTER_OPTION = "options"  # the sample's options follow --option in the help


@with_run_options("probe", after={"sample": AFTER_OPTION, "seed": AFTER_OPTION, "perturbation": AFTER_OPTION})
def probe_cmd(
    sample: int = typer.Option(50, "--sample", min=1, help="Items drawn at random from the pool."),
    seed: int = typer.Option(0, "--seed", help="Seed of the sample."),
    perturbation: list[str] = typer.Option(
        [],
        "--perturbation",
        help="query-stuffing, relevance-claim or instruction (repeatable; default: all).",
    ),
    output: Path | None = typer.Option(
        None, "--out", "--output", help="Write the report (with every item's answers) to this JSON file."
    ),
    max_flip_rate: float | None = typer.Option(
        None,
        "--max-flip-rate",
        min=0.0,
        max=1.0,
        help="Exit 1 when a perturbation flips a larger share of labels.",
    ),
    json_output: bool = typer.Option(False, "--json", help="Print the report as JSON on stdout."),
    **run_options: Any,
) -> None:
    """Re-judge a sample with the passages altered to game the judge (query terms stuffed in, a
    claim of perfect relevance, an instruction to the judge) and report how many labels flip."""
    import json

    from reljudge.io.atomic import write_text_atomic
    from reljudge.probe import probe

    config = run_config("probe", run_options, progress=False)
    report = probe(config, sample=sample, seed=seed, perturbations=perturbation or None)
    data = report.as_dict()
    if output is not None:
        write_text_atomic(output, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    if json_output:
        typer.echo(json.dumps({k: v for k, v in data.items() if k != "items"}, indent=2))
    else:
        typer.echo(report.render())
    if max_flip_rate is not None and report.max_flip_rate > max_flip_rate:
        typer.echo(
            f"failed: a perturbation flipped {report.max_flip_rate:.1%} of labels (limit {max_flip_rate:.1%})",
            err=True,
        )
        raise typer.Exit(1)
