"""``judge cache``: inspect or clear the persistent LLM response cache."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from reljudge.errors import InputError

app = typer.Typer(help="Inspect or clear the persistent LLM response cache.", no_args_is_help=True)


def _cache_file(cache: Path | None) -> Path:
    from reljudge.llm import default_cache_path

    return cache.expanduser() if cache is not None else default_cache_path()


@app.command("stats")
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
    stats: dict[str, Any]
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


@app.command("clear")
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
