"""Running a sweep: prepare the sampled inputs, expand the grid, run every cell as a judging job.

Each cell is one `reljudge.run` job with the ``custom`` judge and the cell's prompt, written
to ``OUT/cells/<dataset>/<model>/<task>/<prompt>/`` (judgments.jsonl, qrels.txt, manifest.json),
exactly like ``judge run``. All cells of a model share one `LLMClient` (one cache, one set of
rate limits); up to ``limits.cells`` cells run at the same time. The runner resumes a cell from
its judgments file, so re-running a finished sweep makes no LLM call; an interrupted sweep
continues cell by cell.

Inputs the cells share are written once to ``OUT/inputs/<dataset>/``: the pooled (sampled)
qrels of the pointwise tasks and the pairs of the pairwise task. ``OUT/sweep.json`` indexes the
cells for `judge sweep --from-judgments OUT`.
"""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reljudge.errors import InputError
from reljudge.records import Usage
from reljudge.sweep.config import SweepConfig
from reljudge.sweep.grid import Cell, expand_grid
from reljudge.sweep.labels import CellLabels
from reljudge.sweep.prompts import SkippedPrompt, SweepPrompt, resolve_prompts

INDEX_FILE = "sweep.json"
OUTPUT_SPEC = {"binary": "binary", "graded": "graded:0-3", "pairwise": "pairwise"}
PAIR_TYPES = (("top", "mid"), ("top", "low"), ("mid", "low"))


@dataclass
class DatasetInputs:
    name: str
    dataset_arg: str | None  # RunConfig.dataset
    files: dict[str, str]  # explicit topics/qrels/corpus
    human_qrels: dict[str, dict[str, float]]
    human_qrels_path: str | None
    pool_qrels: Path
    pairs: Path | None
    runs_dir: str | None
    threshold: float
    unacceptable: float
    items: dict[str, int] = field(default_factory=dict)  # pointwise items, pairs


@dataclass
class SweepPlan:
    config: SweepConfig
    cells: list[Cell]
    prompts: list[SweepPrompt]
    skipped: list[SkippedPrompt]
    datasets: dict[str, DatasetInputs]
    #: the warnings its cells' jobs gave (a model's price), so that each is said once per sweep
    said: set[str] = field(default_factory=set)


def _sample_pool(
    qrels: Mapping[str, Mapping[str, float]], topics: Sequence[str], per_grade: int | None, seed: int
) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for qid in topics:
        docs = qrels.get(qid, {})
        if per_grade is None:
            out[qid] = dict(docs)
            continue
        by_grade: dict[float, list[str]] = {}
        for docid, grade in docs.items():
            by_grade.setdefault(grade, []).append(docid)
        keep: set[str] = set()
        for grade, ids in by_grade.items():
            ids = sorted(ids)
            random.Random(f"{seed}:{qid}:{grade}").shuffle(ids)
            keep.update(ids[:per_grade])
        out[qid] = {d: g for d, g in docs.items() if d in keep}  # qrels file order
    return out


def _sample_pairs(
    qrels: Mapping[str, Mapping[str, float]], topics: Sequence[str], n: int, seed: int, unacceptable: float
) -> list[tuple[str, str, str, str, str]]:
    from reljudge.metrics.alignment import categories

    names = {"B": "top", "A": "mid", "U": "low"}
    rows = []
    for qid in topics:
        cats = categories(qrels.get(qid, {}), unacceptable)
        groups: dict[str, list[str]] = {"top": [], "mid": [], "low": []}
        for docid, cat in cats.items():
            groups[names[cat]].append(docid)
        for c1, c2 in PAIR_TYPES:
            all_pairs = [(a, b) for a in sorted(groups[c1]) for b in sorted(groups[c2])]
            rng = random.Random(f"{seed}:{qid}:{c1}:{c2}")
            for a, b in rng.sample(all_pairs, min(n, len(all_pairs))):
                if rng.random() < 0.5:  # which passage comes first is random, as in the published sample
                    a, b = b, a
                rows.append((qid, c1, c2, a, b))
    return rows


def prepare_inputs(config: SweepConfig, inputs_root: Path | None = None) -> dict[str, DatasetInputs]:
    """Load every dataset, sample the items and save them under ``OUT/inputs`` (or
    ``inputs_root``, e.g. a temporary directory for a dry run)."""
    from reljudge.datasets import load_dataset
    from reljudge.io.atomic import write_text_atomic
    from reljudge.io.trec import write_qrels

    out: dict[str, DatasetInputs] = {}
    s = config.sampling
    for i, spec in enumerate(config.datasets):
        line = config.line("datasets", i)
        files = {
            k: str(config.path(v))
            for k in ("topics", "qrels", "corpus")
            if (v := getattr(spec, k)) is not None
        }
        source = str(config.path(spec.path)) if spec.path else (None if "topics" in files else spec.name)
        runs = str(config.path(spec.runs)) if spec.runs else None
        try:
            data = load_dataset(
                source, topics=files.get("topics"), qrels=files.get("qrels"), corpus=files.get("corpus")
            )
            qrels = data.qrels
        except InputError as err:
            raise InputError(f"dataset {spec.name!r}: {err}", config.source, line) from None
        topics = [q for q in data.topics if qrels.get(q)]
        if isinstance(s.topics, int):
            topics = topics[: s.topics]
        elif isinstance(s.topics, list):
            unknown = [q for q in s.topics if q not in data.topics]
            if unknown:
                raise InputError(
                    f"sampling.topics: {unknown} are not topics of {spec.name!r}",
                    config.source,
                    config.line("sampling", "topics"),
                )
            topics = [q for q in s.topics if qrels.get(q)]
        threshold = spec.threshold if spec.threshold is not None else config.analysis.threshold
        unacceptable = spec.unacceptable if spec.unacceptable is not None else float(data.min_grade)
        base = (inputs_root or config.output_dir / "inputs") / spec.name
        pool = _sample_pool(qrels, topics, s.per_grade, s.seed)
        pool_path = base / "pool.qrels.txt"
        pairs_path: Path | None = None
        n_pairs = 0
        if "pairwise" in config.methods or any(j.pairs for j in config.judges):
            pairs_path = base / "pairs.tsv"
            given = s.pairs or spec.pairs
            if given:
                from reljudge.io.pairs import read_pairs

                pairs, cats = read_pairs(config.path(given))
                keep = set(topics)
                rows = [
                    (q, *cats.get((q, a, b), ("?", "?")), a, b)
                    for q in pairs
                    if q in keep
                    for a, b in pairs[q]
                ]
            else:
                rows = _sample_pairs(qrels, topics, s.pairs_per_type, s.seed, unacceptable)
            n_pairs = len(rows)
            write_text_atomic(pairs_path, "".join("\t".join(r) + "\n" for r in rows))
        base.mkdir(parents=True, exist_ok=True)
        write_qrels(pool, pool_path)
        qrels_path = files.get("qrels") or (str(data.paths["qrels"]) if "qrels" in data.paths else None)
        out[spec.name] = DatasetInputs(
            name=spec.name,
            dataset_arg=source,
            files={k: v for k, v in files.items() if k != "qrels"},
            human_qrels={q: dict(d) for q, d in qrels.items()},
            human_qrels_path=qrels_path,
            pool_qrels=pool_path,
            pairs=pairs_path,
            runs_dir=runs or (str(data.runs_dir) if data.runs_dir and data.run_files() else None),
            threshold=threshold,
            unacceptable=unacceptable,
            items={"pointwise": sum(len(d) for d in pool.values()), "pairs": n_pairs, "topics": len(topics)},
        )
    return out


def plan(
    config: SweepConfig, only: Mapping[str, Sequence[str]] | None = None, *, inputs_root: Path | None = None
) -> SweepPlan:
    """Prompts, cells and sampled inputs of a sweep (inputs go to ``inputs_root`` when given)."""
    from reljudge.sweep.judges import resolve_judges

    prompts, skipped = resolve_prompts(config)
    prompts += resolve_judges(config, prompts)
    cells = expand_grid(config, prompts, only)
    datasets = prepare_inputs(config, inputs_root)
    return SweepPlan(config, cells, prompts, skipped, datasets)


def cell_run_config(plan: SweepPlan, cell: Cell, *, dry_run: bool = False) -> Any:
    from reljudge.run import RunConfig

    config = plan.config
    ds = plan.datasets[cell.dataset]
    model = cell.model_spec
    params = dict(model.params)
    judge = cell.prompt.judge
    options: dict[str, Any]
    if judge is not None:  # a whole judging method with its own options
        options = dict(judge.options)
    elif cell.prompt.builtin:
        options = {"prompt": cell.prompt.builtin}
    else:
        options = {
            "system": cell.prompt.system or None,
            "user": cell.prompt.user,
            "output": OUTPUT_SPEC[cell.task],
            "prompt_id": f"sweep/{cell.task}/{cell.prompt.id}",
        }
    request_fields = dict(params.pop("extra", None) or {})  # sent as-is with every request
    if params.get("top_logprobs") is not None:
        request_fields["top_logprobs"] = params.pop("top_logprobs")
    kwargs: dict[str, Any] = dict(
        method=judge.method if judge is not None else "custom",
        model=model.model_string,
        base_url=model.base_url,
        api_key_env=model.api_key_env,
        dataset=ds.dataset_arg,
        qrels=ds.pool_qrels,
        pairs=ds.pairs if cell.task == "pairwise" or (judge is not None and judge.pairs) else None,
        options=options,
        output=cell.directory(config.output_dir),
        concurrency=config.limits.concurrency,
        rpm=config.limits.rpm,
        tpm=config.limits.tpm,
        timeout_s=config.limits.timeout_s,
        max_attempts=config.limits.max_attempts,
        dry_run=dry_run,
        max_failure_rate=1.0,
        progress=False,
        cache_path=config.path(config.cache) if config.cache else None,
        command=["judge", "sweep", str(config.source)],
        params=request_fields,
        **{k: v for k, v in params.items() if k in ("temperature", "seed", "max_tokens", "logprobs")},
    )
    for key in ("topics", "corpus"):
        if key in ds.files:
            kwargs[key] = Path(ds.files[key])
    return RunConfig(**kwargs)


def estimate(plan: SweepPlan) -> dict[str, Any]:
    """Calls, tokens and cost of every cell from scratch (nothing called, nothing written)."""
    from reljudge.run import estimate_job, prepare
    from reljudge.run.inputs import SharedInputs

    total: dict[str, Any] = {
        "cells": len(plan.cells),
        "calls": 0,
        "prompt_tokens": 0,
        "completion_tokens": 0,
        "cost_usd": 0.0,
        "cost_usd_batch": 0.0,  # the same requests through the providers' Batch APIs
        "price_known": True,
    }
    per_model: dict[str, dict[str, Any]] = {}
    shared = SharedInputs(said=plan.said)  # each dataset loaded, and its pooled passages read, once
    for cell in plan.cells:
        job = prepare(cell_run_config(plan, cell, dry_run=True), shared=shared)
        est = estimate_job(job.config, job.judge, job.inputs, job.pool, model=job.model)
        m = per_model.setdefault(cell.model, {"cells": 0, "calls": 0, "cost_usd": 0.0, "done_records": 0})
        m["cells"] += 1
        m["calls"] += est["calls"]
        m["cost_usd"] += est["cost_usd"]
        m["done_records"] += len(job.existing)
        for k in ("calls", "prompt_tokens", "completion_tokens", "cost_usd", "cost_usd_batch"):
            total[k] += est[k]
        total["price_known"] = total["price_known"] and est["price_known"]
    total["per_model"] = per_model
    return total


async def run_async(plan: SweepPlan, *, on_cell: Any = None, budget: Any = None) -> dict[str, Any]:
    """Run every cell (resuming finished work) and write the sweep index. ``budget``: one
    `reljudge.llm.budget.CostBudget` for the whole sweep (``--max-cost``, `reljudge.sweep.budget`),
    shared by the clients of all its models; once it is reached the cells in progress stop
    (state ``capped``) and the cells not started yet are left out of the results."""
    from reljudge.llm import LLMClient
    from reljudge.run import client_config, run_job_async
    from reljudge.run.inputs import SharedInputs

    write_index(plan)
    configs = {cell.id: cell_run_config(plan, cell) for cell in plan.cells}
    shared = SharedInputs(said=plan.said)  # each dataset loaded, and its pooled passages read, once
    clients: dict[str, LLMClient] = {}
    for cell in plan.cells:
        if cell.model not in clients:
            clients[cell.model] = LLMClient(client_config(configs[cell.id]), budget=budget)
    gate = asyncio.Semaphore(plan.config.limits.cells)
    results: dict[str, Any] = {}

    async def one(cell: Cell) -> None:
        async with gate:
            if budget is not None and budget.exhausted is not None:
                return  # the cost cap is reached: a cell not started yet is not started
            summary = await run_job_async(configs[cell.id], clients[cell.model], shared=shared)
            results[cell.id] = summary
            if on_cell is not None:
                on_cell(cell, summary)

    try:
        for client in clients.values():
            await client.__aenter__()
        async with asyncio.TaskGroup() as group:
            for cell in plan.cells:
                group.create_task(one(cell))
    finally:
        for client in clients.values():
            await client.aclose()
    return results


def run(plan: SweepPlan, *, on_cell: Any = None, budget: Any = None) -> dict[str, Any]:
    """`run_async` on its own event loop (in a worker thread where one is running: a notebook)."""
    from reljudge.run.job import run_coroutine

    return run_coroutine(lambda: run_async(plan, on_cell=on_cell, budget=budget))


def write_index(plan: SweepPlan) -> Path:
    from reljudge.io.atomic import write_text_atomic

    config = plan.config
    out = config.output_dir
    index = {
        "name": config.name,
        "config": str(config.source),
        "conventions": config.analysis.model_dump(),
        "datasets": {
            name: {
                "qrels": ds.human_qrels_path,
                "runs": ds.runs_dir,
                "threshold": ds.threshold,
                "unacceptable": ds.unacceptable,
                "items": ds.items,
            }
            for name, ds in plan.datasets.items()
        },
        "skipped_prompts": [s.__dict__ for s in plan.skipped],
        "cells": [
            {
                "dataset": c.dataset,
                "model": c.model,
                "task": c.task,
                "prompt": c.prompt.id,
                "group": c.prompt.group,
                "dir": str(c.directory(out).relative_to(out)),
                **({"judge": c.prompt.judge.method} if c.prompt.judge is not None else {}),
            }
            for c in plan.cells
        ],
    }
    out.mkdir(parents=True, exist_ok=True)
    path = out / INDEX_FILE
    write_text_atomic(path, json.dumps(index, indent=2) + "\n")
    return path


def cell_labels_from_dir(
    directory: Path, entry: Mapping[str, Any], qrels: Mapping[str, Mapping[str, float]], unacceptable: float
) -> CellLabels:
    """A cell's labels from its run directory (last record per key)."""
    import numpy as np

    from reljudge.io.judgments import load_judgments
    from reljudge.sweep.analysis import pairwise_outcomes

    cell = CellLabels(
        entry["dataset"],
        entry["model"],
        entry["task"],
        entry["prompt"],
        entry["group"],
        source=str(directory),
    )
    path = directory / "judgments.jsonl"
    records = load_judgments(path) if path.exists() else []
    if entry.get("judge"):
        return _judge_cell_labels(cell, directory, records)
    cell.usage = _spent(records)
    prefs: list[tuple[str, str, str, int]] = []
    qids: list[str] = []
    docids: list[str] = []
    values: list[float] = []
    for r in records:
        if r.status == "skipped":
            continue
        is_pair = r.docid_b is not None
        if (cell.task == "pairwise") != is_pair or r.docid is None:
            continue
        cell.items += 1
        if not r.ok or r.label is None:
            cell.invalid += 1
            continue
        if r.docid_b is not None:  # is_pair
            prefs.append((r.qid, r.docid, r.docid_b, int(r.label)))
        else:
            qids.append(r.qid)
            docids.append(r.docid)
            values.append(float(r.label))
    if cell.task == "pairwise":
        pairwise_outcomes(cell, qrels, prefs, unacceptable)
    else:
        cell.qids, cell.docids, cell.values = qids, docids, np.asarray(values, dtype=float)
    return cell


def _judge_cell_labels(cell: CellLabels, directory: Path, records: Sequence[Any]) -> CellLabels:
    """A judge cell's labels: the document scores its run wrote to ``qrels.txt``; its items are
    the passages its records are about, and those without a score are invalid."""
    import numpy as np

    from reljudge.io.trec import read_qrels

    items: set[tuple[str, str]] = set()
    for r in records:
        if r.status == "skipped":
            continue
        items.update((r.qid, d) for d in (r.docid, r.docid_b) if d is not None)
    qrels_path = directory / "qrels.txt"
    scores = read_qrels(qrels_path) if qrels_path.exists() else {}
    labelled = [(q, d, float(v)) for q, docs in scores.items() for d, v in docs.items() if (q, d) in items]
    cell.usage = _spent(records)
    cell.items = len(items)
    cell.invalid = len(items) - len(labelled)
    cell.qids = [q for q, _, _ in labelled]
    cell.docids = [d for _, d, _ in labelled]
    cell.values = np.asarray([v for _, _, v in labelled], dtype=float)
    return cell


def _spent(records: Sequence[Any]) -> Usage:
    """The usage of the records not answered from the cache (what the cell paid)."""
    from reljudge.run.ledger import UsageSum

    spent = UsageSum()
    for r in records:
        if not r.provenance.cached:
            spent.add(r.provenance.usage)
    return spent.total()


def read_sweep_dir(root: Path) -> tuple[list[CellLabels], dict[str, Any]]:
    """The cells of a sweep output directory (from its ``sweep.json``) and the index."""
    from reljudge.io.trec import read_qrels

    index_path = root / INDEX_FILE
    try:
        index = json.loads(index_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise InputError(f"cannot read the sweep index: {err}", index_path) from None
    qrels = {}
    for name, ds in index["datasets"].items():
        if ds.get("qrels"):
            qrels[name] = read_qrels(ds["qrels"])
    cells = [
        cell_labels_from_dir(
            root / e["dir"],
            e,
            qrels.get(e["dataset"], {}),
            index["datasets"][e["dataset"]].get("unacceptable", 0),
        )
        for e in index["cells"]
    ]
    index["_qrels"] = qrels
    return cells, index
