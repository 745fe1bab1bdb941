"""Repeated samples of one pointwise item (``--samples N``): one record from N answers.

Each answer is read on its own (`reljudge.judges.call_records.record_from_answer`, so every rule of a
single answer applies to each). The record's label is the majority of the labels read, ties going
to the **lowest** tied label (`reljudge.aggregation.consensus.majority`, the rule of
``judge combine``); ``extra["agreement"]`` is the share of the readable samples that gave it and
``extra["samples"]`` keeps every sample (label, status, raw text, parse rule, seed, grade
distribution). The record's raw text, parse rule and log-probabilities are those of the first
sample with the majority label; its usage and attempts count every sample, and each sample keeps
its own re-asked answers (``reasked``). With grade
distributions, ``extra["expected"]`` is their mean over the samples that have one. When no
sample can be read, the record is the first sample's failure, with every sample kept.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from reljudge.aggregation.consensus import majority
from reljudge.judges.call_records import record_from_answer
from reljudge.judges.context import JudgeContext
from reljudge.records import Judgment, Usage

if TYPE_CHECKING:
    from reljudge.judges.reading import Answer
    from reljudge.prompts import PromptTemplate

__all__ = ["sampled_record"]


def _mean_expected(records: Sequence[Judgment]) -> dict[str, Any] | None:
    found = [r.extra["expected"] for r in records if isinstance(r.extra.get("expected"), dict)]
    found = [e for e in found if "expected" in e]
    if not found:
        return None
    grades = list(found[0]["p"])
    k = len(found)
    return {
        "scale": found[0]["scale"],
        "p": {g: sum(e["p"].get(g, 0.0) for e in found) / k for g in grades},
        "outside": sum(e["outside"] for e in found) / k,
        "expected": sum(e["expected"] for e in found) / k,
        "samples": k,
    }


def sampled_record(
    ctx: JudgeContext,
    prompt: PromptTemplate,
    answers: Sequence[Answer],
    *,
    method: str,
    qid: str,
    docid: str,
    scale: tuple[int, ...] | None = None,
    extra: dict[str, Any] | None = None,
) -> Judgment:
    """The record of one item asked ``len(answers)`` times (see the module docstring)."""
    records = [
        record_from_answer(ctx, prompt, a, method=method, qid=qid, docid=docid, scale=scale, extra=extra)
        for a in answers
    ]
    samples = []
    for r in records:
        entry: dict[str, Any] = {
            "label": r.label,
            "status": r.status,
            "raw": r.raw,
            "parse": r.parse,
            "seed": r.provenance.params.get("seed"),
        }
        if isinstance(r.extra.get("expected"), dict):
            entry["expected"] = r.extra["expected"]
        if r.extra.get("reasked"):
            entry["reasked"] = r.extra["reasked"]
        samples.append(entry)
    usage = Usage()
    for r in records:
        usage = usage + r.provenance.usage
    attempts = sum(r.provenance.attempts for r in records)
    readable = [r for r in records if r.status == "ok" and r.label is not None]
    if not readable:
        base = records[0]
        extra = {**{k: v for k, v in base.extra.items() if k != "reasked"}, "samples": samples}
        return base.model_copy(update={"extra": extra, "provenance": _counted(base, usage, attempts)})
    label, share = majority([r.label for r in readable])  # type: ignore[misc]
    base = next(r for r in readable if r.label == label)
    extra = {k: v for k, v in base.extra.items() if k not in ("expected", "reasked")}
    extra.update(samples=samples, agreement=share, majority_of=len(readable))
    mean = _mean_expected(readable)
    if mean is not None:
        extra["expected"] = mean
    return base.model_copy(
        update={"label": label, "extra": extra, "provenance": _counted(base, usage, attempts)}
    )


def _counted(record: Judgment, usage: Usage, attempts: int) -> Any:
    return record.provenance.model_copy(update={"usage": usage, "attempts": attempts})
