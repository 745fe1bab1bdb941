"""``judge select`` (what people should check) and ``judge estimate`` (scores from LLM labels
corrected by the people's sample)."""

from __future__ import annotations

from pathlib import Path

import typer

from reljudge.console import DATASET_HELP


def select_cmd(
    run: Path = typer.Argument(
        ..., help="The run: a run directory, a judgments file or a qrels-like file of LLM labels."
    ),
    out: Path | None = typer.Option(
        None, "--out", "--output", "-o", help="The task file to write (JSON Lines)."
    ),
    strategy: str = typer.Option(
        "stratified", "--strategy", help="stratified (random, for estimates), uncertainty or influence."
    ),
    budget: int = typer.Option(..., "--budget", "-n", help="How many items people will check."),
    seed: int = typer.Option(0, "--seed", help="Seed of the random choices (and of tie-breaks)."),
    mode: str = typer.Option(
        "post-edit", "--mode", help="How the page shows the LLM's label: judge, post-edit or blind."
    ),
    runs: Path | None = typer.Option(None, "--runs", help="Directory of system runs (--strategy influence)."),
    measure: str = typer.Option(
        "nDCG@10", "--measure", help="The measure whose system order influence protects."
    ),
    relevance_level: int = typer.Option(
        2, "--relevance-level", help="Grades >= this are relevant (P@k, strata)."
    ),
    members: list[Path] = typer.Option(
        [],
        "--members",
        help="Other judges' labels of the same items (ensemble disagreement, --strategy uncertainty).",
    ),
    allocation: str = typer.Option(
        "proportional",
        "--allocation",
        help="stratified: proportional, equal per stratum, or top (see --top-share).",
    ),
    depth: int | None = typer.Option(
        None,
        "--depth",
        help="stratified with --runs: strata also by whether a system ranks the item in its top K.",
    ),
    top_share: float = typer.Option(
        0.8, "--top-share", help="--allocation top: share of the budget for the top-K strata."
    ),
    method: str | None = typer.Option(None, "--method", help="The run's method, when it holds several."),
    dataset: str | None = typer.Option(None, "--dataset", help=DATASET_HELP + " (queries and passages)."),
    topics: Path | None = typer.Option(None, "--topics", help="Topics file (qid<TAB>query) for the queries."),
    corpus: Path | None = typer.Option(None, "--corpus", help="Passages file for the texts."),
    dry_run: bool = typer.Option(
        False, "--dry-run", help="Print how many items each stratum gives; write nothing."
    ),
    scale: str | None = typer.Option(
        None,
        "--scale",
        help="The grades people may give, LO-HI (e.g. 0-3); default: 0 to the run's highest label.",
    ),
) -> None:
    """Choose the items people should check and write them as an assessment task file."""
    from reljudge.analyses.humans.files import MODES, write_task
    from reljudge.analyses.humans.pipeline import dry_run_lines, select
    from reljudge.errors import InputError

    if mode not in MODES:
        raise InputError(f"unknown --mode {mode!r}; choose from {', '.join(MODES)}")
    if out is None and not dry_run:
        raise InputError("give the task file with --out FILE (or --dry-run)")
    bounds: tuple[int, int] | None = None
    if scale is not None:
        lo, sep, hi = scale.partition("-")
        if not sep or not lo.strip().isdigit() or not hi.strip().isdigit() or int(lo) >= int(hi):
            raise InputError(f"--scale {scale!r}: expected LO-HI with whole numbers LO < HI, e.g. 0-3")
        bounds = (int(lo), int(hi))
    sel = select(
        run,
        strategy=strategy,
        budget=budget,
        seed=seed,
        mode=mode,
        runs=runs,
        measure=measure,
        relevance_level=relevance_level,
        members=members,
        allocation=allocation,
        depth=depth,
        top_share=top_share,
        method=method,
        dataset=dataset,
        topics=topics,
        corpus=corpus,
        texts=not dry_run,
        scale=bounds,
    )
    typer.echo("\n".join(dry_run_lines(sel)))
    for note in sel.notes:
        typer.echo(f"note: {note}", err=True)
    if dry_run:
        return
    assert out is not None
    written = write_task(out, sel.header, sel.items)
    typer.echo(f"wrote {written} ({len(sel.items)} items)", err=True)


def estimate_cmd(
    task: Path = typer.Argument(..., help="The task file written by judge select."),
    assessments: list[Path] = typer.Option(
        ..., "--assessments", "-a", help="Assessment files (one per assessor; repeat the option)."
    ),
    run: Path | None = typer.Option(None, "--run", help="The run, when it moved since the selection."),
    runs: Path | None = typer.Option(None, "--runs", help="Directory of system runs: estimate their scores."),
    measures: list[str] = typer.Option(["nDCG@10", "P@10"], "--measure", help="nDCG@k or P@k (repeat)."),
    relevance_level: int = typer.Option(
        2, "--relevance-level", help="Grades >= this are relevant (P@k, share)."
    ),
    level: float = typer.Option(0.95, "--level", help="Nominal coverage of the intervals."),
    out: Path | None = typer.Option(
        None, "--out", "--output", "-o", help="Write the estimates as JSON to this file."
    ),
    json_output: bool = typer.Option(False, "--json", help="Print the JSON instead of tables."),
) -> None:
    """Scores from the LLM labels corrected by the people's sample (PPI++), with intervals."""
    from reljudge.analyses.humans.files import read_task
    from reljudge.analyses.humans.pipeline import estimate, summary
    from reljudge.errors import InputError

    if not 0 < level < 1:
        raise InputError(f"--level must be between 0 and 1, got {level}")
    report = estimate(
        read_task(task),
        assessments,
        run_spec=run,
        runs=runs,
        measures=measures,
        relevance_level=relevance_level,
        level=level,
    )
    if json_output:
        from reljudge.console import echo_json

        echo_json(report.as_dict())
    else:
        typer.echo(summary(report))
    if out is not None:
        import json

        from reljudge.io.atomic import write_text_atomic
        from reljudge.io.tables import json_ready

        write_text_atomic(out, json.dumps(json_ready(report.as_dict()), indent=1) + "\n")
        typer.echo(f"wrote {out}", err=True)
