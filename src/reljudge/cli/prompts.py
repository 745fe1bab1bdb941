"""``judge prompts``: list, show and render the bundled prompt templates."""

from __future__ import annotations

from typing import Any

import typer

from reljudge.errors import InputError

app = typer.Typer(help="List, show and render the published prompt templates.", no_args_is_help=True)


@app.command("list")
def prompts_list_cmd(
    json_output: bool = typer.Option(False, "--json", help="Print JSON (full metadata) instead of a table."),
) -> None:
    """List the bundled prompt templates: id, the method that uses it, its source and licence
    (``judge prompts show ID`` for everything else)."""
    import json

    from reljudge.judges.registry import registered
    from reljudge.prompts import list_prompts

    templates = list_prompts()
    if json_output:
        typer.echo(json.dumps([t.metadata() for t in templates], indent=2, ensure_ascii=False))
        return
    judges = registered()
    rows = [(t.id, _methods(t.id, judges), t.source.get("repo", "-"), _licence(t.licence)) for t in templates]
    widths = [max(len(row[i]) for row in [("id", "method", "source", ""), *rows]) for i in range(3)]
    for row in [("id", "method", "source", "licence"), *rows]:
        typer.echo("  ".join(f"{cell:<{w}}" for cell, w in zip(row, widths, strict=False)) + "  " + row[3])


def _methods(prompt_id: str, judges: dict[str, Any]) -> str:
    """The methods judging with the prompt by default, else the method of its family (an option
    or a step of it), else custom (``--method custom --prompt ID``)."""
    default = [name for name, cls in judges.items() if cls.default_prompt == prompt_id]
    if default:
        return ", ".join(default)
    family = prompt_id.split("/")[0]
    own = [name for name, cls in judges.items() if (cls.default_prompt or "").split("/")[0] == family]
    return ", ".join(own) if own else "custom"


def _licence(text: str | None) -> str:
    """A licence's short name (its full statement: ``judge prompts show``)."""
    if not text:
        return "-"
    known = ("Apache-2.0", "MIT", "none stated", "not verified", "part of reljudge")
    found = sorted((text.find(name), name) for name in known if name in text)
    return found[0][1] if found else text.split(";")[0][:40]


@app.command("show")
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


@app.command("render")
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
