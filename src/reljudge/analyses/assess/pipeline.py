"""``judge assess export``: the assessors' files of a task -> human qrels, a records file and the
agreement figures.

The records file holds one `Judgment` per exported item (method ``human`` unless named otherwise,
status ok, the exported label; ``extra`` keeps each assessor's label, the rule, the LLM's label,
the item's stratum and inclusion probability), so ``judge evaluate``, ``judge combine`` and
``judge calibrate`` read it like any judgments file; the qrels are ``qid 0 docid label``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reljudge.analyses.assess.consensus import RULE, agreement, combine
from reljudge.analyses.assess.files import (
    assessment_files,
    check_task_matches_run,
    read_assessments,
    read_task,
    write_export,
)
from reljudge.analyses.assess.task import Assessment, Task
from reljudge.errors import InputError


@dataclass
class ExportResult:
    task: Task
    files: list[Path]
    counts: dict[str, int]
    agreement: dict[str, Any]
    qrels: dict[str, dict[str, int]]
    records: list[Any]


def export_assessments(
    task_path: str | Path,
    assessments: list[Path] | None = None,
    *,
    run: str | Path | None = None,
    method: str = "human",
) -> ExportResult:
    """Read the task and its assessors' files (by default every ``TASK_STEM.assess-*.jsonl``
    beside it), combine the labels by `RULE` and measure the agreement. Writes nothing."""
    from reljudge.records import Judgment, Provenance

    task = read_task(task_path)
    if run is not None:
        check_task_matches_run(task, run)
    files = list(assessments) if assessments else assessment_files(task_path)
    if not files:
        raise InputError(
            "no assessment files beside the task (judge assess TASK writes them); give --assessments",
            task_path,
        )
    labels: dict[str, dict[str, int]] = {}
    lines: dict[str, list[Assessment]] = {}
    owner: dict[str, Path] = {}
    for path in files:
        read = read_assessments(path, task)
        if not read:
            continue
        name = read[0].assessor
        if name in owner:
            raise InputError(f"assessor {name!r} is also in {owner[name]} (one file per assessor)", path)
        owner[name] = path
        lines[name] = read
        current: dict[str, int | None] = {}
        for a in read:
            current[a.item] = a.label
        labels[name] = {item: label for item, label in current.items() if label is not None}
    names = [it.item for it in task.items]
    rows = combine(names, labels)
    llm = {it.item: it.llm_label for it in task.items}
    result = agreement(names, labels, llm, task.scale)
    last_at: dict[str, str] = {}  # the latest judgment of each item, whatever the files' order
    for read in lines.values():
        for a in read:
            last_at[a.item] = max(last_at.get(a.item, a.at), a.at)
    qrels: dict[str, dict[str, int]] = {}
    records = []
    for row in rows:
        it = task.item(row.item)
        assert it is not None
        qrels.setdefault(it.qid, {})[it.docid] = row.label
        records.append(
            Judgment(
                qid=it.qid,
                docid=it.docid,
                method=method,
                label=row.label,
                parse="human",
                extra={
                    "assessors": row.votes,
                    "rule": RULE,
                    "llm_label": it.llm_label,
                    "stratum": it.stratum,
                    "inclusion_prob": it.inclusion_prob,
                    "task": str(task_path),
                },
                provenance=Provenance(
                    backend="human", model="+".join(row.votes), timestamp=last_at[row.item]
                ),
            )
        )
    counts = {
        "items": len(task.items),
        "labelled": len(rows),
        "multiple": sum(len(r.votes) >= 2 for r in rows),
        "assessors": len(labels),
    }
    return ExportResult(task, [owner[n] for n in sorted(owner)], counts, result, qrels, records)


def export_paths(
    task_path: str | Path,
    qrels_path: Path,
    records_path: Path,
    assessments: list[Path] | None = None,
    *,
    run: str | Path | None = None,
    method: str = "human",
) -> tuple[ExportResult, list[Path]]:
    """`export_assessments`, then the qrels and the records written (each atomically)."""
    result = export_assessments(task_path, assessments, run=run, method=method)
    if not result.records:
        raise InputError("no item has a label yet: nothing to export", task_path)
    return result, write_export(result.qrels, result.records, qrels_path, records_path)
