"""``judge sweep``: run a prompt-sensitivity sweep from a YAML file, or analyse existing judgments."""

from __future__ import annotations

from pathlib import Path

import typer

from reljudge.cli.confirm import CONFIRM_HELP, YES_HELP
from reljudge.errors import InputError


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
        "--output",
        help="Where the analysis goes (default: OUTPUT/analysis for a sweep, runs/sweep-analysis otherwise).",
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
    threshold: float | None = typer.Option(
        None,
        "--threshold",
        help="Published judgments: human grade >= threshold is relevant for binary kappa [default: 2].",
    ),
    include_excluded: bool = typer.Option(
        False,
        "--include-excluded",
        help="Published judgments: keep the prompt ids the authors excluded (4, 6, 13, 23, 27, 30).",
    ),
    exclude_prompts: str | None = typer.Option(
        None,
        "--exclude-prompts",
        help="Published judgments: prompt ids to leave out besides the authors' exclusions, e.g. 7,16.",
    ),
    pool_datasets: bool | None = typer.Option(
        None,
        "--pool-datasets/--per-dataset",
        help="Published judgments: also summarise all datasets as one distribution per model, task and "
        "group (summary_pooled.csv, summary_pooled.md) [default: per dataset].",
    ),
    variance: str | None = typer.Option(
        None,
        "--variance",
        help="Published judgments: variance over prompts, 'sample' (ddof=1) or 'population' (ddof=0) [default: sample].",
    ),
    invalid: str | None = typer.Option(
        None,
        "--invalid",
        help="Published judgments: labels outside the scale are 'drop'ped or kept as their own 'category' "
        "(counted as disagreement) [default: drop].",
    ),
    preset: str | None = typer.Option(
        None,
        "--preset",
        help="Published judgments: a named set of the conventions above; 'thesis-table-4.5' = "
        "--exclude-prompts 7,16 --pool-datasets --variance population --threshold 1 --invalid category. "
        "Options given as well override it.",
    ),
    plots: bool = typer.Option(
        True,
        "--plots/--no-plots",
        help="Write PNG plots (needs matplotlib; without it the analysis is written without plots).",
    ),
    json_output: bool = typer.Option(
        False,
        "--json",
        help="Print JSON (the estimate of a dry run, else the analysis tables) instead of text.",
    ),
    yes: bool = typer.Option(False, "--yes", "-y", help=YES_HELP),
    confirm_above: float = typer.Option(5.0, "--confirm-above", min=0.0, help=CONFIRM_HELP),
    max_cost: float | None = typer.Option(
        None,
        "--max-cost",
        min=0.0,
        help="Hard cost cap in USD over the whole sweep (all its cells and models, earlier sessions "
        "included): stop before a request would go over it, save everything, exit 3; the same command "
        "with a higher cap resumes.",
    ),
    batch: bool = typer.Option(
        False,
        "--batch",
        help="Send every cell through the provider's Batch API (OpenAI /v1/batches: half price), up to "
        "limits.cells cells at once; resumable (the same command re-attaches to the batches). Also limits.batch in the sweep file. "
        "OpenAI models (or openai/<name> with base_url) only; needs the response cache.",
    ),
    batch_poll: float = typer.Option(
        30.0, "--batch-poll", min=0.01, max=600, help="Seconds between two looks at the running batches."
    ),
    batch_max_wait: float | None = typer.Option(
        None,
        "--batch-max-wait",
        min=0.0,
        help="Stop waiting for a cell's running batches after this many seconds: everything is saved, the "
        "exit code is 75, and the same command re-attaches to them.",
    ),
    batch_limit: list[str] = typer.Option(
        [],
        "--batch-limit",
        help="A limit of the provider's Batch API, key=value (repeatable): requests=N and mb=M per batch file "
        "(default 50000 and 200), tokens=T enqueued at once (default: no limit).",
    ),
    batch_resend_lost: bool = typer.Option(
        False,
        "--batch-resend-lost",
        help="Create again the batch of a wave whose create failed and whose batch the provider does not show "
        "(the error that stopped the sweep names it); if the provider did make it, it is paid twice.",
    ),
) -> None:
    """Run a prompt-sensitivity sweep from a YAML file, or analyse existing judgments."""
    import time

    from reljudge.console import echo_json
    from reljudge.sweep import api
    from reljudge.sweep.report import pooled_markdown, ranking_markdown, summary_markdown

    def warn_if_no_matplotlib() -> None:
        # said up front, so nobody waits for a whole sweep to learn it; report.md says it too
        from reljudge.errors import MissingExtraError
        from reljudge.io.figures import pyplot

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

    def analysis_json(analysis) -> dict:
        return {
            "summary": analysis.summary,
            "pooled": analysis.pooled,
            "cells": analysis.rows,
            "rankings": [vars(r) for r in analysis.rankings],
            "notes": analysis.notes,
        }

    started = time.monotonic()
    if from_judgments is not None:
        if config is not None:
            raise InputError("give either a sweep file or --from-judgments, not both")
        from reljudge.sweep.analysis.presets import conventions_with

        published: dict = {}
        if not api.is_sweep_dir(from_judgments):
            published = dict(
                qrels=pairs_of(qrels, "--qrels"),
                prompts=prompts_file,
                runs=pairs_of(runs, "--runs"),
                include_excluded=include_excluded,
                conv=conventions_with(
                    preset,
                    threshold=threshold,
                    excluded_prompts=exclude_prompts,
                    pool_datasets=pool_datasets,
                    variance=variance,
                    invalid=invalid,
                ),
            )
        elif any(
            v is not None for v in (threshold, exclude_prompts, pool_datasets, variance, invalid, preset)
        ):
            raise InputError(
                "--threshold, --exclude-prompts, --pool-datasets, --variance, --invalid and --preset apply to "
                "published judgments; a sweep directory keeps the conventions of its sweep file",
                from_judgments,
            )
        if plots:
            warn_if_no_matplotlib()
        analysis, target = api.analyse_judgments(from_judgments, out=out, plots=plots, **published)
        if json_output:
            echo_json({**analysis_json(analysis), "directory": str(target)})
        else:
            typer.echo(summary_markdown(analysis))
            if analysis.pooled:
                typer.echo("\n" + pooled_markdown(analysis))
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
    limits = (
        batch_limits(batch_poll, batch_max_wait, batch_limit, resend_lost=batch_resend_lost)
        if batch or cfg.limits.batch
        else None
    )
    plan, est = api.plan_sweep(cfg, parse_only(only), dry_run=dry_run)
    if limits is not None:
        from reljudge.sweep.batch import check_batch_models

        check_batch_models(plan)
    models = sorted({c.model for c in plan.cells})
    if json_output and dry_run:
        echo_json({"cells": len(plan.cells), "skipped": [vars(s) for s in plan.skipped], **est})
        return
    echo = (lambda *a, **k: None) if json_output else typer.echo  # the estimate is printed as text only
    echo(
        f"sweep {cfg.name}: {len(plan.cells)} cells = {len(cfg.datasets)} dataset(s) × {len(models)} model(s) × "
        f"{len(cfg.methods)} task(s) × {len({c.prompt.id for c in plan.cells})} prompt(s)"
    )
    for s in plan.skipped:
        echo(f"  left out prompt {s.id} ({s.task}): {s.reason}")
    cost = f"${est['cost_usd']:.4f} (${est['cost_usd_batch']:.4f} through the Batch API)" + (
        "" if est["price_known"] else " (some prices unknown)"
    )
    echo(
        f"LLM calls from scratch: {est['calls']} ({est['prompt_tokens']} prompt + {est['completion_tokens']} completion tokens, estimated); cost {cost}"
    )
    for name, m in est["per_model"].items():
        echo(
            f"  {name}: {m['cells']} cells, {m['calls']} calls, ${m['cost_usd']:.4f}; {m['done_records']} records already done"
        )
    pays = est["cost_usd_batch"] if limits is not None else est["cost_usd"]
    if limits is not None:
        echo(
            f"--batch: every cell through the Batch API, {cfg.limits.cells} cell(s) at once; cost ${pays:.4f} at the batch price"
        )
    if max_cost is not None:
        fits = "fits under" if pays <= max_cost else "goes over"
        echo(f"--max-cost ${max_cost:.4f}: the estimate from scratch {fits} the cap (exit code 3 at the cap)")
    if dry_run:
        typer.echo("dry run: nothing was called and nothing was written")
        return
    done_records = sum(m["done_records"] for m in est["per_model"].values())
    if not yes and not done_records:  # a new sweep on a terminal: a costly one asks first
        from reljudge.cli.confirm import ask, on_terminal
        from reljudge.run.estimate import confirmation_reason

        reason = confirmation_reason({**est, "cost_usd": pays}, confirm_above) if on_terminal() else None
        if reason is not None and not ask(f"confirm: {reason} (--yes skips this question)"):
            typer.echo("not confirmed: nothing was called", err=True)
            raise typer.Exit(1)
    if plots and cfg.analysis.plots:
        warn_if_no_matplotlib()
    done = {"n": 0}

    def on_cell(cell, summary) -> None:
        done["n"] += 1
        typer.echo(
            f"[{done['n']}/{len(plan.cells)}] {cell.id}: {summary.usage.calls} calls, {summary.records} records",
            err=True,
        )

    from reljudge.llm.types import ProviderError
    from reljudge.run.batch.passes import BatchPending

    try:
        result = api.run_sweep(plan, out=out, plots=plots, on_cell=on_cell, max_cost=max_cost, batch=limits)
    except BatchPending as pending:  # --batch-max-wait: the same command re-attaches
        typer.echo(str(pending), err=True)
        raise typer.Exit(75) from None
    except ProviderError as err:  # the Batch API refused or failed (secrets masked)
        resumes = getattr(err, "resumes", True)  # False: the same command would stop there again
        tail = "; everything is saved and the same command resumes" if resumes else ""
        typer.echo(f"error: the batch API: {err}{tail}", err=True)
        raise typer.Exit(1) from None
    if result.capped is not None:  # every cell saved what it did; no analysis of a part
        from reljudge.errors import EXIT_BUDGET

        if json_output:
            echo_json({"state": "capped", "calls": result.calls, **result.capped.as_dict()})
        typer.echo(result.capped.message(), err=True)
        raise typer.Exit(EXIT_BUDGET)
    assert result.analysis is not None and result.directory is not None
    if json_output:
        echo_json(
            {**analysis_json(result.analysis), "directory": str(result.directory), "calls": result.calls}
        )
    else:
        typer.echo(summary_markdown(result.analysis))
    typer.echo(
        f"{len(plan.cells)} cells, {result.calls} LLM calls in this run; analysis in {result.directory} "
        f"({time.monotonic() - started:.1f}s)",
        err=True,
    )


def batch_limits(
    poll: float, max_wait: float | None, items: list[str], *, resend_lost: bool = False
) -> object:
    """The `reljudge.run.batch.passes.BatchLimits` of ``--batch-poll``, ``--batch-max-wait``,
    ``--batch-limit`` and ``--batch-resend-lost`` (as in ``judge run``)."""
    from reljudge.run.batch.passes import BatchLimits
    from reljudge.run.options import BATCH_LIMITS, batch_limit_list

    limits = BatchLimits(poll_s=poll, max_wait_s=max_wait, resend_lost=resend_lost)
    for name, value in batch_limit_list(items).items():  # requests=N, mb=M, tokens=T
        setattr(limits, BATCH_LIMITS[name], value * 1_000_000 if name == "mb" else value)
    return limits
