"""The two entry points behind ``judge sweep``: run a sweep file (`plan_sweep`, `run_sweep`), or
analyse existing judgments (`analyse_judgments`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reljudge.errors import InputError
from reljudge.sweep.analysis import Conventions, SweepAnalysis, analyze

if TYPE_CHECKING:
    from reljudge.sweep.budget import CappedSweep
    from reljudge.sweep.config import SweepConfig
    from reljudge.sweep.execute import SweepPlan

#: published binary prompts whose instructions invert the labels ("answer 0 if relevant")
INVERTED_BINARY: frozenset[str] = frozenset({"10", "14"})


def conventions_from(config: Any) -> Conventions:
    a = config.analysis if hasattr(config, "analysis") else config
    return Conventions(
        threshold=a.threshold,
        kappa_weights=a.kappa_weights,
        alpha_level=dict(a.alpha_level),
        ranking_measure=a.ranking_measure,
    )


def _load_runs(runs: Mapping[str, str | None]) -> dict[str, dict[str, Any]]:
    from reljudge.analyses.inputs import load_runs

    return {ds: load_runs(path) for ds, path in runs.items() if path}


def analyze_sweep_dir(root: Path, *, with_runs: bool = True) -> SweepAnalysis:
    """Analyse the cells of a sweep output directory (its ``sweep.json``)."""
    from reljudge.sweep.config import Analysis
    from reljudge.sweep.execute import read_sweep_dir

    cells, index = read_sweep_dir(root)
    conv = conventions_from(Analysis.model_validate(index.get("conventions", {})))
    thresholds = {d.get("threshold") for d in index["datasets"].values()}
    if len(thresholds) == 1 and None not in thresholds:
        conv = Conventions(
            threshold=thresholds.pop(),
            kappa_weights=conv.kappa_weights,
            alpha_level=conv.alpha_level,
            ranking_measure=conv.ranking_measure,
        )
    runs = _load_runs({k: v.get("runs") for k, v in index["datasets"].items()}) if with_runs else {}
    notes = [
        f"prompt {s['id']} ({s['task']}) left out: {s['reason']}" for s in index.get("skipped_prompts", [])
    ]
    return analyze(cells, index["_qrels"], conv, runs=runs or None, notes=notes)


def analyze_published(
    path: Path,
    *,
    qrels: Mapping[str, str | Path] | None = None,
    prompts: str | Path | None = None,
    runs: Mapping[str, str | Path] | None = None,
    include_excluded: bool = False,
    conv: Conventions | None = None,
) -> SweepAnalysis:
    """Analyse the published prompt-sensitivity judgments (``judgments.tar.gz`` or its extraction).
    ``conv.excluded_prompts`` are left out besides the authors' exclusions (all of them kept with
    ``include_excluded``)."""
    from reljudge.io.trec import read_qrels
    from reljudge.sweep import published

    groups: Callable[[str], str] | None = None
    notes: list[str] = []
    texts: dict[str, Any] = {}
    collection = Path(prompts) if prompts else (path.parent if path.is_file() else path) / "prompts.json"
    if collection.is_file():
        mapping = published.groups_from_collection(collection)
        texts = published.prompt_texts(collection)
        groups = lambda pid: mapping.get(pid, published.default_group(pid))  # noqa: E731
        notes.append(f"prompt groups from {collection} (participant_name: human-*, LLM-*, umbrela)")
    conv = conv or Conventions()
    exclude = set(() if include_excluded else published.EXCLUDED_BY_AUTHORS) | set(conv.excluded_prompts)
    cells, skipped = published.read_published(path, exclude=exclude, group_of=groups)
    notes += skipped
    qrels_data = {}
    for ds in sorted({c.dataset for c in cells}):
        given = (qrels or {}).get(ds)
        qpath = Path(given) if given else published.default_qrels(path, ds)
        if qpath is None:
            raise InputError(f"no human qrels for {ds}: give --qrels {ds}=FILE", path)
        qrels_data[ds] = read_qrels(qpath)
        notes.append(f"human qrels of {ds}: {qpath}")
    notes.append(
        "gpt-4o binary/graded judged a stratified sample (at most 10 passages per grade per topic), "
        "llama3.2 and mistral all judged pairs; each cell is scored on the pairs it labelled"
    )
    run_sets = _load_runs({k: str(v) for k, v in (runs or {}).items()})
    if run_sets:
        notes.append(
            "ranking stability: each prompt's labels are a qrels in which documents the prompt did not "
            "label count as non-relevant; gpt-4o binary/graded labelled only the stratified sample, so "
            "most of the runs' top documents are unjudged for it (the 'judged' column)"
        )
    inverted = sorted(
        {c.prompt for c in cells if c.task == "binary" and c.prompt in INVERTED_BINARY},
        key=published._id_order,
    )
    if inverted:
        notes.append(
            f"binary prompt(s) {', '.join(inverted)} ask for 0 = relevant and 1 = not relevant; the published "
            "labels are the answers as given (not inverted), so their kappa and tau come out negative"
        )
    analysis = analyze(cells, qrels_data, conv, runs=run_sets or None, notes=notes)
    if texts:
        from reljudge.sweep.analysis.prompt_text import prompt_diversity

        analysis.diversity, analysis.diversity_summary = prompt_diversity(
            texts, groups or published.default_group, exclude
        )
    return analysis


def from_judgments(path: str | Path, **kwargs: Any) -> SweepAnalysis:
    """A sweep output directory, or the published release (tarball or directory)."""
    from reljudge.sweep.execute import INDEX_FILE
    from reljudge.sweep.published import is_published_layout

    p = Path(path)
    if not p.exists():
        raise InputError("not found", p)
    if is_sweep_dir(p):
        return analyze_sweep_dir(p)
    if is_published_layout(p):
        return analyze_published(p, **kwargs)
    raise InputError(
        f"neither a sweep output directory (no {INDEX_FILE}) nor published judgments (<model>/<task>/*.txt)",
        p,
    )


def is_sweep_dir(path: Path) -> bool:
    """Whether ``path`` is a sweep output directory (it holds the sweep's index)."""
    from reljudge.sweep.execute import INDEX_FILE

    return path.is_dir() and (path / INDEX_FILE).exists()


def analyse_judgments(
    path: Path, *, out: Path | None = None, plots: bool = True, **published: Any
) -> tuple[SweepAnalysis, Path]:
    """``judge sweep --from-judgments``: the analysis of `from_judgments` (``published``: the
    options of `analyze_published`) written to ``out`` (default PATH/analysis for a sweep output
    directory, runs/sweep-analysis otherwise); returns the analysis and its directory."""
    from reljudge.sweep.report import write_report

    analysis = from_judgments(path, **published)
    target = out or (path / "analysis" if is_sweep_dir(path) else Path("runs/sweep-analysis"))
    write_report(analysis, target, plots=plots)
    return analysis, target


def plan_sweep(
    config: SweepConfig, only: Mapping[str, Sequence[str]] | None = None, *, dry_run: bool = False
) -> tuple[SweepPlan, dict[str, Any]]:
    """The plan of a sweep and its estimate (`reljudge.sweep.execute.estimate`). With
    ``dry_run`` the sampled inputs go to a scratch directory, deleted before this returns:
    nothing is called and nothing is written."""
    import tempfile

    from reljudge.sweep import execute

    if not dry_run:
        plan = execute.plan(config, only)
        return plan, execute.estimate(plan)
    with tempfile.TemporaryDirectory(prefix="reljudge-sweep-") as scratch:
        plan = execute.plan(config, only, inputs_root=Path(scratch))
        return plan, execute.estimate(plan)


@dataclass(frozen=True)
class SweepRun:
    """What `run_sweep` did: the analysis, the directory it was written to, the LLM calls made;
    ``capped``: how far it got when ``--max-cost`` stopped it (then no analysis is written)."""

    analysis: SweepAnalysis | None
    directory: Path | None
    calls: int
    capped: CappedSweep | None = None


def run_sweep(
    plan: SweepPlan,
    *,
    out: Path | None = None,
    plots: bool = True,
    on_cell: Any = None,
    max_cost: float | None = None,
    batch: Any = None,
) -> SweepRun:
    """Run every cell of ``plan`` (resuming finished work; ``on_cell(cell, summary)`` after each),
    analyse the sweep directory and write the report to ``out`` (default OUTPUT/analysis; plots
    when ``plots`` and the sweep file's analysis want them). ``max_cost``: one cost cap in USD
    over the whole sweep, earlier sessions included (`reljudge.sweep.budget`); when it stops the
    sweep, the cells keep what they did and no analysis is written (``SweepRun.capped``).
    ``batch``: a `reljudge.run.batch.passes.BatchLimits` to send every cell through the provider's Batch
    API (`reljudge.sweep.batch`; `reljudge.run.batch.passes.BatchPending` after ``max_wait_s``)."""
    from reljudge.sweep import execute
    from reljudge.sweep.budget import capped_sweep, sweep_budget
    from reljudge.sweep.report import write_report

    config = plan.config
    if batch is not None:
        import asyncio

        from reljudge.sweep.batch import SweepBatchCapped, run_cells_batch

        try:
            results = asyncio.run(run_cells_batch(plan, batch, max_cost=max_cost, on_cell=on_cell))
        except SweepBatchCapped as stop:
            return SweepRun(None, None, sum(s.usage.calls for s in stop.results.values()), stop.capped)
        calls = sum(s.usage.calls for s in results.values())
    else:
        from reljudge.sweep.batch import refuse_live_batches

        refuse_live_batches(plan)
        budget = sweep_budget(plan, max_cost) if max_cost is not None else None
        results = execute.run(plan, on_cell=on_cell, budget=budget)
        calls = sum(s.usage.calls for s in results.values())
        capped = capped_sweep(plan, results, budget) if budget is not None else None
        if capped is not None:
            return SweepRun(None, None, calls, capped)
    analysis = analyze_sweep_dir(config.output_dir)
    target = out or config.output_dir / "analysis"
    write_report(analysis, target, plots=plots and config.analysis.plots, title=f"Sweep {config.name}")
    return SweepRun(analysis, target, calls)
