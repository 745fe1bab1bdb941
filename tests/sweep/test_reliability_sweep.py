"""Crash and resume of a sweep: ``judge sweep CONFIG`` killed with SIGKILL mid-way, then the
same command again.

Every cell's final judgments must equal those of an uninterrupted sweep, with no record
duplicated or missing, and the server must see no second call for any item finished before the
kill (answers that arrived but were not yet written come from the sweep's response cache).
A re-run of the finished sweep makes no call at all.
"""

from __future__ import annotations

import json
import re
import signal
import subprocess
import time
from collections import Counter
from pathlib import Path

import pytest

from _cli import judge
from _reliability import Dataset, env, judge_cmd, make_dataset, sandbox
from reljudge.io.judgments import read_judgments
from reljudge.testing import MockLLMServer, MockRequest

pytestmark = pytest.mark.slow

N_TOPICS, DOCS, PAIRS_PER_TYPE = 7, 40, 10
PROMPTS = ("alpha", "beta")
TASKS = ("binary", "graded", "pairwise")
CONCURRENCY, CELLS_AT_ONCE = 16, 3
# per cell: 280 pointwise items, or 7 topics x 3 pair types x 10 = 210 pairs (2 calls each)
POINTWISE, PAIRS = N_TOPICS * DOCS, N_TOPICS * 3 * PAIRS_PER_TYPE
EXPECTED = {task: PAIRS if task == "pairwise" else POINTWISE for task in TASKS}
TOTAL = len(PROMPTS) * sum(EXPECTED.values())  # 1,540 judgments, 1,960 calls

_TAG = re.compile(r"^\[(\w+)/(\w+)\]")
_DOCREF = re.compile(r"\bdocref (d\d+-\d+)\b")
_USER = {
    "binary": "Query: {query}\\nPassage: {document}\\n"
    "Is the passage relevant to the query? Answer 1 for yes or 0 for no.",
    "graded": "Query: {query}\\nPassage: {document}\\n"
    "Grade the passage 0, 1, 2 or 3 (3 = perfectly relevant). Answer with the number only.",
    "pairwise": "Query: {query}\\nPassage A: {documentA}\\nPassage B: {documentB}\\n"
    "Which passage is more relevant? Answer with a single letter, A or B.",
}


def _write_config(path: Path, url: str, data: Dataset, output: str, cache: str) -> Path:
    prompts = "".join(
        f"  - id: {p}\n    group: mine\n"
        + "".join(
            f'    {task}: {{system: "[{p}/{task}] You are a TREC assessor.", user: "{_USER[task]}"}}\n'
            for task in TASKS
        )
        for p in PROMPTS
    )
    path.write_text(
        f"""name: crash-resume
output: {output}
cache: {cache}
datasets:
  - {{name: synth, topics: {data.topics}, qrels: {data.qrels}, corpus: {data.corpus}}}
models:
  - {{name: mock, model: openai/mock-model, base_url: "{url}", params: {{max_tokens: 20}}}}
methods: [binary, graded, pairwise]
prompts:
{prompts}sampling: {{pairs_per_type: {PAIRS_PER_TYPE}, seed: 7}}
limits: {{concurrency: {CONCURRENCY}, cells: {CELLS_AT_ONCE}}}
analysis: {{plots: false}}
""",
        encoding="utf-8",
    )
    return path


def _cell_dirs(out: Path) -> dict[str, Path]:
    return {f"{p}/{t}": out / "cells" / "synth" / "mock" / t / p for t in TASKS for p in PROMPTS}


def _request_item(req: MockRequest) -> tuple[str, tuple[str, ...]]:
    """(cell, docids in the order the prompt shows them) of one request."""
    tag = _TAG.match(req.prompt)
    assert tag is not None, req.prompt
    return f"{tag.group(1)}/{tag.group(2)}", tuple(_DOCREF.findall(req.prompt))


def _record_item(cell: str, record) -> tuple[str, frozenset[str]]:  # type: ignore[no-untyped-def]
    return cell, frozenset(d for d in (record.docid, record.docid_b) if d)


def _final(out: Path) -> dict[str, dict[tuple, tuple]]:
    """{cell: {key: (status, label, raw)}} of the latest record of each key."""
    result = {}
    for cell, d in _cell_dirs(out).items():
        latest = {r.key: r for r in read_judgments(d / "judgments.jsonl")}
        result[cell] = {k: (r.status, r.label, r.raw) for k, r in latest.items()}
    return result


def _saved_lines(out: Path) -> int:
    total = 0
    for d in _cell_dirs(out).values():
        try:
            total += (d / "judgments.jsonl").read_bytes().count(b"\n")
        except FileNotFoundError:
            pass
    return total


def _wait_for_lines(out: Path, n: int, proc: subprocess.Popen, timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"the sweep ended before it could be killed: {proc.stderr.read()}")
        if _saved_lines(out) >= n:
            return
        time.sleep(0.02)
    raise AssertionError("the sweep made too little progress to be killed mid-way")


def _state(cell_dir: Path) -> str | None:
    path = cell_dir / "manifest.json"
    return json.loads(path.read_text())["extra"]["state"] if path.exists() else None


@pytest.mark.slow
def test_sigkill_then_resume_equals_an_uninterrupted_sweep(tmp_path):
    data = make_dataset(tmp_path / "data", N_TOPICS, DOCS)
    with MockLLMServer(latency_s=0.002) as srv:
        # the reference: one uninterrupted sweep (own output, own cache)
        ref_cfg = _write_config(tmp_path / "ref.yaml", srv.openai_url, data, "ref", "ref-cache.sqlite")
        done = judge("sweep", str(ref_cfg), cwd=tmp_path, env=sandbox(tmp_path))
        assert done.returncode == 0, done.stderr
        expected = _final(tmp_path / "ref")
        assert {c: len(v) for c, v in expected.items()} == {
            f"{p}/{t}": EXPECTED[t] for t in TASKS for p in PROMPTS
        }
        assert srv.calls == TOTAL + len(PROMPTS) * PAIRS  # pairwise asks both orders

        # the same sweep, killed with SIGKILL after about two thirds of the judgments
        srv.reset()
        out = tmp_path / "out"
        cfg = _write_config(tmp_path / "sweep.yaml", srv.openai_url, data, "out", "cache.sqlite")
        args = ["sweep", str(cfg)]
        proc = subprocess.Popen(
            judge_cmd(*args), env=env(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path
        )
        try:
            _wait_for_lines(out, 2 * TOTAL // 3, proc)
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.communicate(timeout=30)
        assert proc.returncode == -signal.SIGKILL
        time.sleep(0.3)  # let the server's handler threads finish the requests that were in flight
        first_calls = Counter(_request_item(r) for r in srv.requests)
        assert max(first_calls.values()) == 1

        cells = _cell_dirs(out)
        saved: dict[str, list] = {}  # complete records only: a torn last line is skipped
        for cell, d in cells.items():
            path = d / "judgments.jsonl"
            saved[cell] = read_judgments(path) if path.exists() else []
            assert len({r.key for r in saved[cell]}) == len(saved[cell])
        n_saved = sum(len(v) for v in saved.values())
        assert 2 * TOTAL // 3 <= n_saved < TOTAL
        # at most CELLS_AT_ONCE cells run at a time, so some were finished and some were not
        states = {cell: _state(d) for cell, d in cells.items()}
        assert "finished" in states.values(), states
        assert {s for s in states.values() if s != "finished"} <= {"running", None}
        assert any(len(saved[c]) < EXPECTED[c.split("/")[1]] for c in cells)
        saved_items = {_record_item(c, r) for c, records in saved.items() for r in records}

        # a torn last line in an unfinished cell, as a kill in the middle of a write leaves it
        torn = next(c for c in cells if states[c] == "running" and saved[c])
        raw = (cells[torn] / "judgments.jsonl").read_bytes()
        if raw.endswith(b"\n"):
            (cells[torn] / "judgments.jsonl").write_bytes(raw + b'{"qid": "q0", "docid": "d0-')

        # the same command again
        srv.reset()
        resumed = judge(*args, cwd=tmp_path, env=sandbox(tmp_path))
        assert resumed.returncode == 0, resumed.stderr
        second_calls = Counter(_request_item(r) for r in srv.requests)
        again = {(cell, frozenset(ids)) for cell, ids in second_calls} & saved_items
        assert not again, f"finished items were sent to the server again: {sorted(again)[:5]}"
        assert not second_calls or max(second_calls.values()) == 1
        # no paid answer was lost: of the requests the server saw before the kill, only those in
        # flight are paid for again. A request keeps its concurrency slot until its answer is
        # committed to the response cache (`LLMClient._call`), so at any moment at most
        # `concurrency` requests are sent but not durable; answers that arrived and were cached
        # but not yet written as records come from the cache on resume. (Before, the slot was
        # given back on arrival and the cache write queued behind it: under load 17-38 answers
        # were paid twice.)
        assert sum(second_calls[i] for i in first_calls) <= CONCURRENCY  # at most those in flight
        for cell, d in cells.items():
            manifest = json.loads((d / "manifest.json").read_text())
            assert manifest["extra"]["state"] == "finished"
            new = manifest["extra"]["last_session"]["new_records"]
            assert new == EXPECTED[cell.split("/")[1]] - len(saved[cell]), cell
            if states[cell] == "finished":  # untouched by the resumed sweep
                assert not any(c == cell for c, _ in second_calls)

        for cell, d in cells.items():
            records = read_judgments(d / "judgments.jsonl")
            assert len(records) == len({r.key for r in records}) == EXPECTED[cell.split("/")[1]], cell
        assert _final(out) == expected
        assert (out / "sweep.json").exists() and (out / "analysis" / "cells.json").exists()

        # a re-run of the finished sweep makes no call and writes no record
        srv.reset()
        again_run = judge(*args, cwd=tmp_path, env=sandbox(tmp_path))
        assert again_run.returncode == 0, again_run.stderr
        assert srv.calls == 0
        assert _final(out) == expected
        assert sum(len(read_judgments(d / "judgments.jsonl")) for d in cells.values()) == TOTAL
