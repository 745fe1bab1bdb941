"""``judge autojudge``: judge TREC AutoJudge responses and write the files AutoJudge reads.

Prints the files written, the requests sent and the answers the cache gave; never a response's
text (with or without ``--privacy``: the console names files, ids and counts).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer


def autojudge_cmd(
    responses: list[Path] = typer.Option(
        ..., "--responses", help="AutoJudge response file, or a directory of *.jsonl (repeatable)."
    ),
    topics: Path = typer.Option(
        ..., "--topics", help="AutoJudge topics file (JSON Lines, request_id and title)."
    ),
    method: str = typer.Option(..., "--method", help="umbrela, nuggets, citation-support or pairwise."),
    model: str = typer.Option(..., "--model", help="Model, as for 'judge run'."),
    out: Path = typer.Option(Path("."), "--out", "--output", "--out-dir", help="Output directory."),
    filebase: str = typer.Option(
        "reljudge",
        "--filebase",
        help="Name of the outputs: FILEBASE.eval.txt, .eval.measures.yml, .config.yml, ...",
    ),
    base_url: str | None = typer.Option(
        None, "--base-url", help="Server URL (any OpenAI-compatible server)."
    ),
    api_key_env: str | None = typer.Option(
        None, "--api-key-env", help="Name of the environment variable holding the API key (never the key)."
    ),
    cache_dir: Path | None = typer.Option(
        None,
        "--cache-dir",
        help="Directory of the response cache (AutoJudge's CACHE_DIR); default reljudge's cache.",
    ),
    cache_only: bool = typer.Option(
        False,
        "--cache-only",
        help="Offline replay: answer from the cache only; a miss stops the job naming it.",
    ),
    no_cache: bool = typer.Option(False, "--no-cache", help="Neither read nor write the response cache."),
    max_cost: float | None = typer.Option(
        None,
        "--max-cost",
        min=0.0,
        help="Stop before the run's cost in USD would go over this (exit 3; resumes).",
    ),
    prices: Path | None = typer.Option(None, "--prices", help="Prices file, as for 'judge run'."),
    privacy: bool = typer.Option(
        False,
        "--privacy",
        help="Keep response text out of everything written but the records the judge needs.",
    ),
    corpus: Path | None = typer.Option(
        None, "--corpus", help="Passages of cited documents the responses do not embed (TSV or JSONL)."
    ),
    track: str | None = typer.Option(
        None, "--track", help="Hold the responses to a track's rules: rag26, rag25, ragtime26, kiddie, ..."
    ),
    nugget_source: str = typer.Option(
        "documents",
        "--nugget-source",
        help="nuggets: made from the cited 'documents' or from the 'responses'.",
    ),
    nugget_format: str = typer.Option(
        "nuggetizer",
        "--nugget-format",
        help="nuggets: the bank's format, 'nuggetizer' or 'v3' (autojudge-base's).",
    ),
    option: list[str] | None = typer.Option(
        None,
        "--option",
        "-o",
        help="key=value (repeatable): temperature, seed, max_tokens, prompt, concurrency, ... or a judge option.",
    ),
    json_output: bool = typer.Option(False, "--json", help="Print the result as JSON."),
) -> None:
    """Judge TREC AutoJudge responses (UMBRELA, AutoNuggetizer or citation support, no qrels) and
    write FILEBASE.eval.txt (run topic measure value, with 'all' rows), .eval.measures.yml,
    .config.yml and .qrels.txt (umbrela) or .nuggets.jsonl (nuggets). The run directory
    FILEBASE.reljudge/ keeps the records: the same command resumes it, and --cache-only replays it
    offline into byte-identical files. Exit codes: 0 ok, 2 bad input (FILE:LINE), 3 capped at
    --max-cost, 1 the provider could not serve the job."""
    from reljudge.autojudge import AutoJudgeSpec, NotFinished, judge_responses
    from reljudge.run.options import parse_options

    spec = AutoJudgeSpec(
        responses=list(responses),
        topics=topics,
        method=method,
        model=model,
        out_dir=out,
        filebase=filebase,
        base_url=base_url,
        api_key_env=api_key_env,
        cache_dir=cache_dir,
        cache_only=cache_only,
        use_cache=not no_cache,
        max_cost=max_cost,
        prices=prices,
        privacy=privacy,
        options=parse_options(option or (), flag="--option"),
        corpus=corpus,
        track=track,
        nugget_source=nugget_source,
        nugget_format=nugget_format,
    )
    try:
        result = judge_responses(spec)
    except NotFinished as stopped:
        typer.echo(f"error: {stopped}", err=True)
        raise typer.Exit(stopped.exit_code) from None
    for warning in result.warnings:
        typer.echo(f"warning: {warning}", err=True)
    written = [
        p
        for p in (result.eval_txt, result.measures_yml, result.qrels, result.nuggets, result.config_yml)
        if p
    ]
    if json_output:
        payload: dict[str, Any] = {
            "method": result.method,
            "files": [str(p) for p in written],
            "run_dir": str(result.run_dir),
            "calls": result.calls,
            "cached": result.cached,
            "responses": result.responses,
            "unjudged": [list(pair) for pair in result.unjudged],
            "warnings": len(result.warnings),
            "failure_rate": result.failure_rate,
        }
        typer.echo(json.dumps(payload, indent=2))
        raise typer.Exit(result.exit_code)
    typer.echo(
        f"{result.method}: {result.responses} responses, {len(result.unjudged)} without a score; "
        f"{result.calls} requests sent, {result.cached} answered from the cache"
    )
    typer.echo(f"wrote {', '.join(str(p) for p in written)}", err=True)
    if result.exit_code:
        typer.echo(
            f"error: {result.failure_rate:.1%} of the records failed (see --option max_failure_rate)",
            err=True,
        )
    raise typer.Exit(result.exit_code)
