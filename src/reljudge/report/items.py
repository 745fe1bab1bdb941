"""The per-item browser of a run directory's report: one row per judged item (its latest record),
with the human grade where the qrels know it and, for pointwise judges, the prompt as it was sent.

The inputs of the run (topics, qrels, passages) are found again from the run's manifest (its
dataset, or its explicit files); when they cannot be found the report still lists every item, and
says what it could not show. What a row holds is bounded: answers and prompts are clipped to
`MAX_TEXT_CHARS` and at most ``max_items`` rows are kept -- failures first, then disagreements
with the humans, then the rest in file order -- so a report of a million judgments stays small.
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reljudge.records import Judgment

#: characters of an answer, a prompt or a passage shown per item (the rest is cut, and says so)
MAX_TEXT_CHARS = 4000
DEFAULT_MAX_ITEMS = 5000


@dataclass
class RunInputs:
    """What the report could find again of a run's inputs."""

    topics: Mapping[str, str] = field(default_factory=dict)
    qrels: Mapping[str, Mapping[str, float]] | None = None
    relevant_threshold: float = 2
    judge: Any = None  # the run's judge, rebuilt from its configuration (for its prompt)
    dataset: Any = None  # the run's `reljudge.datasets.Dataset` (for its passages)
    notes: list[str] = field(default_factory=list)


@dataclass
class RunItems:
    rows: list[dict[str, Any]]
    total: int  # items in the run (latest record per key)
    shown: int
    human_known: int  # items with a human grade
    disagreements: int  # items whose label and human grade disagree (binary)
    status_counts: dict[str, int]
    relevant_threshold: float
    notes: list[str]


def clip(text: str | None, limit: int = MAX_TEXT_CHARS) -> str | None:
    if text is None or len(text) <= limit:
        return text
    return text[:limit] + f"\n[... {len(text) - limit:,} more characters not shown]"


def _existing(path_text: str | None, rundir: Path) -> Path | None:
    """A path of the manifest as given (relative to where the run was started), or relative to
    the run directory's parent."""
    if not path_text:
        return None
    path = Path(path_text)
    for candidate in (path, rundir.parent / path):
        if candidate.exists():
            return candidate
    return path


def find_inputs(manifest: Mapping[str, Any], rundir: Path, qrels_path: Path | None) -> RunInputs:
    """The topics, qrels and judge of the run the manifest describes (``qrels_path`` overrides
    the run's own qrels). Whatever cannot be found is left empty, with a note."""
    from reljudge.errors import ReljudgeError

    found = RunInputs()
    config = manifest.get("config") or {}
    dataset = None
    if config.get("dataset") or config.get("topics"):
        try:
            from reljudge.datasets import load_dataset

            dataset = load_dataset(
                str(_existing(config.get("dataset"), rundir) or config.get("dataset"))
                if config.get("dataset")
                else None,
                topics=_existing(config.get("topics"), rundir),
                qrels=_existing(config.get("qrels"), rundir),
                corpus=_existing(config.get("corpus"), rundir),
                passages=False,
            )
            found.topics = dataset.topics
            found.qrels = dataset.qrels if dataset.has_qrels else None
            found.relevant_threshold = dataset.relevant_threshold
        except (ReljudgeError, OSError, ValueError) as err:
            found.notes.append(
                f"the run's inputs were not found again ({err}): no queries, passages or prompts"
            )
            dataset = None
    if qrels_path is not None:
        from reljudge.io.trec import read_qrels

        found.qrels = read_qrels(qrels_path, on_duplicate="max")
    if found.qrels is None:
        found.notes.append("no human qrels (give --qrels FILE): no human grades or disagreements")
    found.judge = _rebuild_judge(config, found.notes)
    found.dataset = dataset
    return found


def _rebuild_judge(config: Mapping[str, Any], notes: list[str]) -> Any:
    try:
        from reljudge.run.config import RunConfig
        from reljudge.run.prepare import build_judge

        return build_judge(RunConfig.model_validate(dict(config)))
    except Exception as err:  # a plugin no longer installed, a prompt file moved: no prompts shown
        notes.append(f"the run's judge could not be rebuilt ({type(err).__name__}: {err}): no prompts")
        return None


def _human_grade(qrels: Mapping[str, Mapping[str, float]] | None, record: Judgment) -> float | None:
    if qrels is None or record.docid is None or record.docid_b is not None or record.item_id is not None:
        return None
    grade = qrels.get(record.qid, {}).get(record.docid)
    return None if grade is None else float(grade)


def _disagrees(record: Judgment, human: float | None, threshold: float, judge_binary: bool) -> bool | None:
    """Binary disagreement: the human grade (>= threshold is relevant) against the label (>= 1 for
    a 0/1 judge, else >= the same threshold); None when either is missing."""
    if human is None or record.label is None:
        return None
    label_cut = 1 if judge_binary else threshold
    return (human >= threshold) != (float(record.label) >= label_cut)


def _priority(row: Mapping[str, Any]) -> int:
    if row["status"] != "ok":
        return 0
    if row.get("disagrees"):
        return 1
    return 2


def collect_items(judgments_path: Path, inputs: RunInputs, *, max_items: int = DEFAULT_MAX_ITEMS) -> RunItems:
    """The rows of the per-item browser (see the module docstring for what is kept)."""
    from reljudge.io.judgments import iter_judgments

    latest: dict[tuple[str, ...], int] = {}
    # the latest record of each key: one pass remembering the ordinal of each key's last record
    for ordinal, record in enumerate(iter_judgments(judgments_path)):
        latest[record.key] = ordinal
    keep_ordinals = set(latest.values())
    binary = _judge_is_binary(inputs.judge)
    chosen: list[tuple[int, int, dict[str, Any]]] = []  # heap of (-priority, -ordinal, row): worst kept
    human_known = disagreements = 0
    status_counts: dict[str, int] = {}
    for ordinal, record in enumerate(iter_judgments(judgments_path)):
        if ordinal not in keep_ordinals:
            continue
        human = _human_grade(inputs.qrels, record)
        human_known += human is not None
        status_counts[record.status] = status_counts.get(record.status, 0) + 1
        row = {
            "qid": record.qid,
            "docid": record.docid or "",
            "docid_b": record.docid_b or "",
            "item": record.item_id or "",
            "method": record.method,
            "status": record.status,
            "label": record.label,
            "human": human,
            "disagrees": _disagrees(record, human, inputs.relevant_threshold, binary),
            "parse": record.parse or "",
            "error": clip(record.error, 1000) or "",
            "raw": clip(record.raw) or "",
            "cached": record.provenance.cached,
            "prompt_id": record.provenance.prompt_id or "",
            "messages_sha256": record.provenance.messages_sha256 or "",
        }
        disagreements += bool(row["disagrees"])
        entry = (-_priority(row), -ordinal, row)
        if len(chosen) < max_items:
            heapq.heappush(chosen, entry)
        else:
            heapq.heappushpop(chosen, entry)
    rows = [row for _, _, row in sorted(chosen, key=lambda e: -e[1])]  # in file order
    _add_texts(rows, inputs)
    notes = list(inputs.notes)
    if len(rows) < len(latest):
        notes.append(
            f"{len(rows):,} of {len(latest):,} items shown (failures first, then disagreements with the "
            "humans, then the rest in file order; --max-items N shows more)"
        )
    return RunItems(
        rows=rows,
        total=len(latest),
        shown=len(rows),
        human_known=human_known,
        disagreements=disagreements,
        status_counts=status_counts,
        relevant_threshold=inputs.relevant_threshold,
        notes=notes,
    )


def _judge_is_binary(judge: Any) -> bool:
    prompt = getattr(judge, "prompt", None)
    output = getattr(prompt, "output", None)
    return getattr(output, "type", None) == "binary"


def _add_texts(rows: list[dict[str, Any]], inputs: RunInputs) -> None:
    """Queries, passages and -- for a pointwise judge -- the rendered prompt of each shown row."""
    dataset = inputs.dataset
    wanted = {d for r in rows for d in (r["docid"], r["docid_b"]) if d}
    passages: Mapping[str, str] = {}
    if dataset is not None and wanted:
        try:
            passages = dataset.passages(wanted)
        except Exception as err:  # the corpus file moved or is unreadable: items without passages
            inputs.notes.append(f"passages not read ({type(err).__name__}: {err})")
    from reljudge.records import messages_sha256

    judge = inputs.judge
    render = getattr(judge, "variables", None) if hasattr(judge, "prompt") else None
    for row in rows:
        query = inputs.topics.get(row["qid"])
        row["query"] = clip(query, 1000) or ""
        passage = passages.get(row["docid"]) if row["docid"] else None
        row["passage"] = clip(passage) or ""
        row["prompt"] = ""
        sent = row.pop("messages_sha256")
        row["prompt_check"] = ""
        if render is not None and query is not None and passage is not None and not row["docid_b"]:
            try:
                messages = judge.prompt.render(**render(query, passage))
                row["prompt"] = (
                    clip("\n\n".join(f"--- {m['role']} ---\n{m['content']}" for m in messages)) or ""
                )
                if sent:
                    row["prompt_check"] = (
                        "the same messages as sent (SHA-256 matches the record)"
                        if messages_sha256(messages) == sent
                        else "rendered again from the run's inputs: differs from what was sent (SHA-256)"
                    )
            except Exception:  # a prompt that no longer renders: shown without it
                row["prompt"] = ""
