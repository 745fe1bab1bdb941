"""`run_bounded` (the judges' fan-out) and the compact `ExistingRecords` resume mapping."""

from __future__ import annotations

import asyncio

import pytest

from reljudge.io.judgment_index import index_judgments
from reljudge.io.judgments import JudgmentWriter
from reljudge.judges.base import run_bounded
from reljudge.records import Judgment


def test_run_bounded_takes_items_lazily_and_bounds_work_in_progress() -> None:
    taken = 0
    running = peak = 0
    done: list[int] = []

    def items():
        nonlocal taken
        for i in range(100):
            taken += 1
            assert taken - len(done) <= 5  # never more than `limit` items taken ahead
            yield i

    async def worker(i: int) -> None:
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        await asyncio.sleep(0)
        running -= 1
        done.append(i)

    asyncio.run(run_bounded(items(), worker, limit=5))
    assert sorted(done) == list(range(100)) and peak == 5


def test_run_bounded_propagates_the_first_error() -> None:
    async def worker(i: int) -> None:
        await asyncio.sleep(0)
        if i == 3:
            raise RuntimeError("boom")

    with pytest.raises(ExceptionGroup) as info:
        asyncio.run(run_bounded(range(50), worker, limit=4))
    assert any(isinstance(e, RuntimeError) for e in info.value.exceptions)


def test_existing_records_keeps_label_records_on_disk(tmp_path) -> None:
    path = tmp_path / "judgments.jsonl"
    with JudgmentWriter(path) as writer:
        writer.write(Judgment(qid="q1", item_id="n1", method="nugget", extra={"text": "a fact"}))
        writer.write(Judgment(qid="q1", docid="d1", method="binary", status="api_error", error="x"))
        writer.write(Judgment(qid="q1", docid="d2", method="binary", label=0))
        writer.write(Judgment(qid="q1", docid="d1", method="binary", label=1))  # replaces the error
    index = index_judgments(path, lazy_methods=("binary",))
    existing = index.existing
    assert index.records == 4 and index.superseded == {1}
    assert len(existing) == 3 and set(existing) == {
        ("nugget", "q1", "", "", "n1"),
        ("binary", "q1", "d1", "", ""),
        ("binary", "q1", "d2", "", ""),
    }
    assert existing[("binary", "q1", "d1", "", "")].label == 1  # read back from the file
    assert existing.get(("binary", "q1", "d9", "", "")) is None
    retry = index_judgments(path, lazy_methods=("binary",), exclude_statuses=("api_error",)).existing
    assert ("binary", "q1", "d1", "", "") in retry  # its latest record is ok
