"""``judge answers``: check generated-answer files and convert between their formats."""

from __future__ import annotations

from pathlib import Path

import typer

app = typer.Typer(
    help="Check answer files (TREC RAG 2024 JSON Lines, system<TAB>qid<TAB>answer TSV) and convert them.",
    no_args_is_help=True,
)

FORMATS = ("tsv", "rag24")


@app.command("check")
def answers_check_cmd(
    files: list[Path] = typer.Argument(
        ..., metavar="FILE...", help="Answer files (.jsonl: TREC RAG 2024; else TSV)."
    ),
) -> None:
    """Read answer files strictly; print systems, topics and answers per file. A malformed file
    is 'error: FILE:LINE: what is wrong' and exit 2."""
    from reljudge.io.answers import answers_by_system, read_answers

    for path in files:
        answers = read_answers(path)
        for system, by_qid in answers_by_system(answers).items():
            words = sum(a.length for a in by_qid.values())
            typer.echo(f"{path}: system {system}: {len(by_qid)} topic(s), {words:,} words")


@app.command("convert")
def answers_convert_cmd(
    files: list[Path] = typer.Argument(..., metavar="FILE...", help="Answer files to read (either format)."),
    out: Path = typer.Option(..., "--out", "--output", help="The file to write (atomically)."),
    to: str = typer.Option("tsv", "--to", help="Output format: tsv (every system) or rag24 (one system)."),
) -> None:
    """Convert answer files: several TREC RAG 2024 runs into one TSV, or a TSV of one system into
    TREC RAG 2024 (sentences and citations are not in a TSV: each answer is one sentence)."""
    from reljudge.errors import InputError
    from reljudge.io.answers import read_answers, write_answers_tsv, write_rag24

    if to not in FORMATS:
        raise InputError(f"--to {to!r}: expected tsv or rag24")
    answers = [a for path in files for a in read_answers(path)]
    seen: set[tuple[str, str]] = set()
    for a in answers:
        if (a.system, a.qid) in seen:
            raise InputError(f"system {a.system!r} answers topic {a.qid!r} in more than one file")
        seen.add((a.system, a.qid))
    if to == "rag24":
        systems = sorted({a.system for a in answers})
        if len(systems) != 1:
            raise InputError(f"--to rag24 writes one run per file; the input holds {len(systems)} systems")
        count = write_rag24(answers, out)
    else:
        count = write_answers_tsv(answers, out)
    typer.echo(f"{count} answer(s) -> {out}")
