"""``judge export`` (judgments to qrels, CSV or JSONL) and ``judge datasets`` (the known datasets)."""

from __future__ import annotations

from pathlib import Path

import typer

from reljudge.console import warnings_to_stderr


def export_cmd(
    judgments: Path = typer.Option(
        ...,
        "--judgments",
        help="A run directory, a judgments .jsonl file, or a qrels-like file (int or float grades).",
    ),
    to: str = typer.Option(
        "qrels", "--to", help="Output format: qrels, csv (flat provenance columns) or jsonl."
    ),
    out: Path = typer.Option(..., "--out", "--output", help="Output file (written atomically)."),
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

    from reljudge.export import export_source

    warnings_to_stderr()
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


def datasets_cmd(
    json_output: bool = typer.Option(False, "--json", help="Print JSON instead of a table."),
    grades: bool = typer.Option(
        False,
        "--grades",
        help="Per dataset: topics with judgments and the judgments per grade, with its label.",
    ),
) -> None:
    """List the known datasets with their topic, judgment and passage counts."""
    import json

    from reljudge.datasets import DATA_DIR_ENV, list_datasets

    entries = list_datasets(grades=grades)
    if json_output:
        typer.echo(json.dumps(entries, indent=2))
        return
    if grades:
        typer.echo(_grades_table(entries))
        if not all(e["available"] for e in entries):
            typer.echo(f"(set {DATA_DIR_ENV} to the directory holding the full collections)", err=True)
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


def _grades_table(entries: list[dict]) -> str:
    """Markdown: one row per available dataset, topics with judgments and a column per grade."""
    available = [e for e in entries if e["available"]]
    grades = sorted({g["grade"] for e in available for g in e["per_grade"]})
    head = ["dataset", "topics"] + [f"grade {g:g}" for g in grades]
    lines = ["| " + " | ".join(head) + " |", "|---|" + "---:|" * (len(head) - 1)]
    for e in available:
        count = {g["grade"]: g["count"] for g in e["per_grade"]}
        cells = [f"{count[g]:,}" if g in count else "–" for g in grades]
        lines.append(f"| {e['name']} | {e['judged_topics']:,} | " + " | ".join(cells) + " |")
    lines.append("")
    for e in available:
        names = ", ".join(f"{g['grade']:g} {g['label']}" for g in e["per_grade"] if g["label"])
        lines.append(f"{e['name']}: {names}")
    return "\n".join(lines)
