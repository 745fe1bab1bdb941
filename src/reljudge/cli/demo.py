"""``judge demo``: the whole pipeline once, offline, in a few seconds.

It starts the project's mock LLM server (`reljudge.testing.MockLLMServer`) in this process,
then runs the commands a user would type -- ``judge run`` on the bundled sample, ``judge
evaluate`` against the human labels and the published GPT-4o judgments, ``judge report`` -- as
the same command functions (no subprocess), into one folder, and prints where to look. The mock's
labels are deterministic but mean nothing (kappa near 0): the demo shows the files and the
report, not a judge's quality.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from reljudge.errors import InputError

#: the file that marks a folder as a demo's (a second demo into it starts afresh)
MARKER = ".reljudge-demo"


def demo_cmd(
    ctx: typer.Context,
    out: Path = typer.Option(
        Path("reljudge-demo"),
        "--out",
        "--output",
        help="Folder for the demo's run, evaluation and reports (made; a non-empty folder that is not a "
        "demo's is refused).",
    ),
    limit: int | None = typer.Option(
        None, "--limit", min=1, help="Judge only the first N pairs of the sample (default: all 684)."
    ),
) -> None:
    """Try it without a key: judge the bundled sample on a mock LLM, evaluate, write the report."""
    import shutil

    from reljudge.datasets import BUNDLED, bundled_path
    from reljudge.testing import MockLLMServer

    judge = ctx.find_root().command  # the judge group, to run its commands
    _check_out(out)
    if (out / MARKER).exists():
        shutil.rmtree(out)  # an earlier demo's folder: start afresh
    out.mkdir(parents=True, exist_ok=True)
    (out / MARKER).write_text("made by judge demo; a new judge demo replaces this folder\n")
    run_dir, evaluation = out / "run", out / "evaluation"
    with MockLLMServer() as server:
        typer.echo(f"demo: a mock LLM (meaningless labels) serves {server.openai_url}", err=True)
        run_args = [
            "run", "--method", "umbrela", "--model", "openai/mock", "--base-url", server.openai_url,
            "--dataset", BUNDLED, "--out", str(run_dir), "--cache", str(out / "llm-cache.sqlite"),
            "--no-progress", "--yes",
        ]  # fmt: skip
        if limit is not None:
            run_args += ["--limit", str(limit)]
        _step(judge, run_args)
    published = bundled_path() / "llm-judgments" / "gpt-4o"
    _step(
        judge,
        [
            "evaluate",
            "--dataset",
            BUNDLED,
            "--judgments",
            str(run_dir),
            "--judgments",
            str(published),
            "--missing-zero",
            "preferences*",
            "--out",
            str(evaluation),
            "--bootstrap",
            "200",
        ],  # fmt: skip
    )
    _step(judge, ["report", str(run_dir)])
    _step(judge, ["report", str(evaluation)])
    typer.echo("")
    typer.echo(f"demo done in {out}/:")
    typer.echo(f"  {evaluation / 'report.html'}  the evaluation report (open it in a browser)")
    typer.echo(f"  {run_dir / 'report.html'}  the run report: every item, its prompt and answer")
    typer.echo(f"  {run_dir / 'judgments.jsonl'}  the records; {run_dir / 'qrels.txt'} the derived qrels")
    typer.echo(f"  {evaluation}/  evaluation.json and the CSV tables")
    typer.echo(
        "next: judge doctor --model gpt-4o, then the same judge run with --model gpt-4o (a key needed)"
    )


def _check_out(out: Path) -> None:
    """Refuse a file, or a non-empty folder that an earlier demo did not make."""
    if out.exists() and not out.is_dir():
        raise InputError(f"--out {out}: a file is there, not a folder")
    if out.is_dir() and any(out.iterdir()) and not (out / MARKER).exists():
        raise InputError(
            f"--out {out}: the folder is not empty and not a demo's; give another --out (nothing was written)"
        )


def _step(judge: Any, args: list[str]) -> None:
    """One ``judge`` command (``judge``: the group), in this process, as typed; a failing step
    stops the demo with its code."""
    typer.echo(f"$ judge {' '.join(args)}", err=True)
    code = judge.main(args=args, prog_name="judge", standalone_mode=False)
    if isinstance(code, int) and code != 0:
        typer.echo(f"demo: 'judge {args[0]}' stopped with exit code {code}", err=True)
        raise typer.Exit(code)
