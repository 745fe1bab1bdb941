"""``judge batch export|import``: a job's requests as OpenAI batch files for an engine reljudge does
not drive (``vllm run-batch``, Ray Data), and that engine's output back into the run directory
(`reljudge.run.batch.exchange`). Their options are those of ``judge run`` less the ones about sending
requests (`reljudge.run.options.NOT_BATCH_FILES`), so the same job options name the same run
directory and the same cache keys.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import typer

from reljudge.cli.deferred import DeferredCommand, JudgeGroup
from reljudge.cli.options import run_config, with_run_options

app = typer.Typer(
    help="Run a job's requests on your own engine: export OpenAI batch files, import the output.",
    cls=JudgeGroup,
    no_args_is_help=True,
)


@app.command("export", cls=DeferredCommand)
@with_run_options("batch-files", after={"requests": "output", "shards": "output"})
def export_cmd(
    requests: Path = typer.Option(
        ...,
        "--requests",
        help="Where the request lines go: a .jsonl file, or with --shards N a directory of N files "
        "split by topic (requests-000-of-00N.jsonl ...).",
    ),
    shards: int = typer.Option(
        1, "--shards", min=1, help="Split the requests into N files by topic (one per GPU node)."
    ),
    json_output: bool = typer.Option(False, "--json", help="Print the result as JSON on stdout."),
    **run_options: Any,
) -> None:
    """Write the requests a job still needs as OpenAI batch JSONL (for vllm run-batch, Ray Data).

    One pass of the job: every item whose answers are in the cache gets its record in the run
    directory; the requests of the others are written (custom_id = the response-cache key, body =
    exactly what 'judge run' would send). Answer them elsewhere, then 'judge batch import' the
    output with the same options. A multi-stage method (exam, nuggets, the pairwise sampler)
    needs one export/import per stage; an export with nothing left says the job is complete.
    """
    import asyncio

    from reljudge.console import echo_json
    from reljudge.run.batch.exchange import export_requests

    config = run_config("batch-files", run_options, command=["judge", *sys.argv[1:]])
    result = asyncio.run(export_requests(config, requests, shards=shards))
    if json_output:
        echo_json(result.as_dict())
    else:
        typer.echo(result.render())


@app.command("import", cls=DeferredCommand)
@with_run_options("batch-files", after={"outputs": "output", "requests": "output"})
def import_cmd(
    outputs: list[Path] = typer.Argument(
        ..., help="Output files: vllm run-batch output, or OpenAI batch output/error files."
    ),
    requests: list[Path] = typer.Option(
        None,
        "--requests",
        help="The request files the outputs answer (default: the files of the run directory's last "
        "export). Only their custom_ids are read.",
    ),
    skip_bad_lines: bool = typer.Option(
        False,
        "--skip-bad-lines",
        help="Leave out lines that are not answers to the exported requests (default: such a line is "
        "an error and nothing is ingested).",
    ),
    json_output: bool = typer.Option(False, "--json", help="Print the result as JSON on stdout."),
    **run_options: Any,
) -> None:
    """Ingest an engine's batch output into the run directory, then write the records it completes.

    Each answer is read, bounded, checked and cached as a synchronous answer would be; a failed
    line becomes an api_error record (--retry-failed exports it again). Give the same job options
    as the export.
    """
    import asyncio

    from reljudge.console import echo_json
    from reljudge.run.batch.exchange import import_outputs

    config = run_config("batch-files", run_options, command=["judge", *sys.argv[1:]])
    result = asyncio.run(import_outputs(config, outputs, requests=requests or None, skip_bad=skip_bad_lines))
    if json_output:
        echo_json(result.as_dict())
    else:
        typer.echo(result.render())


@app.command("ray")
def ray_cmd(
    requests: list[Path] = typer.Argument(
        ..., help="The request files of 'judge batch export' (or its --shards directory)."
    ),
    base_url: str = typer.Option(
        ..., "--base-url", help="The OpenAI-compatible endpoint, e.g. http://gpu-node:8000/v1."
    ),
    out: Path = typer.Option(
        ...,
        "--out",
        "--output",
        help="Where the output files (and the journal, parts/) go: output-000-of-00N.jsonl ...",
    ),
    model: str = typer.Option(
        None, "--model", help="The served model name every request must ask for (checked before sending)."
    ),
    workers: int = typer.Option(2, "--workers", min=1, help="Ray actors sending requests."),
    concurrency: int = typer.Option(
        8, "--concurrency-per-worker", min=1, help="Requests in flight per worker."
    ),
    batch_size: int = typer.Option(64, "--batch-size", min=1, help="Rows handed to a worker at a time."),
    cpus_per_worker: float = typer.Option(0.5, "--cpus-per-worker", min=0.01, help="Ray CPUs per worker."),
    timeout: float = typer.Option(60.0, "--timeout", min=0.1, help="Total deadline of one attempt (s)."),
    max_attempts: int = typer.Option(
        6, "--max-attempts", min=1, help="Attempts per request (429/5xx/timeouts)."
    ),
    api_key_env: str = typer.Option(
        "OPENAI_API_KEY", "--api-key-env", help="The environment variable each worker reads the key from."
    ),
    address: str = typer.Option(
        None, "--address", help="A running Ray cluster ('auto', ray://HOST:10001); default: a local one."
    ),
    num_cpus: int = typer.Option(None, "--num-cpus", min=1, help="CPUs of the local cluster started."),
    progress: bool = typer.Option(False, "--progress", help="Show Ray Data's progress bars."),
    json_output: bool = typer.Option(False, "--json", help="Print the result as JSON on stdout."),
) -> None:
    """Answer exported request files with a Ray Data pipeline (pip install 'reljudge[ray]').

    Ray places a pool of workers on the cluster; each sends its rows to --base-url with bounded
    concurrency and journals every answer as it arrives, so a killed worker or run loses nothing
    and the same command started again asks only what is not answered. Writes one OpenAI batch
    output file per request file; then: judge batch import OUT/output-*.jsonl with the job's options.
    """
    from reljudge.console import echo_json
    from reljudge.run.batch.endpoint import EndpointOptions
    from reljudge.run.batch.ray_send import PoolOptions, send_with_ray

    endpoint = EndpointOptions(
        base_url, concurrency=concurrency, timeout_s=timeout, max_attempts=max_attempts, key_env=api_key_env
    )
    pool = PoolOptions(
        workers=workers,
        batch_size=batch_size,
        cpus_per_worker=cpus_per_worker,
        address=address,
        num_cpus=num_cpus,
        progress=progress,
    )
    result = send_with_ray(requests, out, endpoint, pool, model=model)
    if json_output:
        echo_json(result.as_dict())
    else:
        typer.echo(result.render())
