"""End to end: the published prompt collection as a sweep against the mock LLM server."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from _cli import judge
from reljudge.testing import MockLLMServer


def _write_sweep(tmp: Path, url: str, prompts_file: Path) -> Path:
    cfg = tmp / "sweep.yaml"
    cfg.write_text(
        f"""
name: e2e
output: out
cache: cache.sqlite
datasets: [dl19-sample]
models:
  - {{name: mock, model: openai/mock-model, base_url: "{url}", api_key_env: RELJUDGE_TEST_KEY, params: {{max_tokens: 50}}}}
methods: [binary, graded, pairwise]
prompts:
  - file: {prompts_file}
    invalid: skip
  - id: inline
    group: mine
    binary: {{user: "Query: {{query}}\\nPassage: {{document}}\\nJust answer 1 for yes and 0 for no."}}
sampling: {{topics: 2, per_grade: 1, pairs_per_type: 1}}
limits: {{concurrency: 8, cells: 8}}
analysis: {{plots: false}}
""",
        encoding="utf-8",
    )
    return cfg


@pytest.fixture
def prompts_file(tmp_path: Path, shared_data: Path) -> Path:
    prompts = shared_data / "prompt-sensitivity" / "prompts.json"
    if not prompts.is_file():
        pytest.skip(f"{prompts} is not available")
    target = tmp_path / "prompts.json"
    shutil.copy(prompts, target)
    return target


@pytest.mark.shared
@pytest.mark.slow
def test_published_collection_runs_end_to_end_and_rerun_makes_no_call(tmp_path, prompts_file, monkeypatch):
    monkeypatch.setenv("RELJUDGE_TEST_KEY", "test-key")
    with MockLLMServer() as srv:
        cfg = _write_sweep(tmp_path, srv.openai_url, prompts_file)
        dry = judge("sweep", str(cfg), "--dry-run")
        assert dry.returncode == 0, dry.output
        assert srv.calls == 0
        assert not (tmp_path / "out").exists()
        result = judge("sweep", str(cfg))
        assert result.returncode == 0, result.output
        first_calls = srv.calls
        assert first_calls > 0
        index = json.loads((tmp_path / "out" / "sweep.json").read_text())
        cells = index["cells"]
        tasks = {t: {c["prompt"] for c in cells if c["task"] == t} for t in ("binary", "graded", "pairwise")}
        skipped = {(s["id"], s["task"]) for s in index["skipped_prompts"]}
        # the broken published prompts are reported, not run: 4 graded ({Document}), 23 graded and
        # pairwise (no {document}s), 27 graded (empty, content-filtered)
        assert skipped == {("4", "graded"), ("23", "graded"), ("23", "pairwise"), ("27", "graded")}
        assert tasks["binary"] == {str(i) for i in range(33)} | {"inline"}
        assert tasks["graded"] == {str(i) for i in range(33)} - {"4", "23", "27"}
        assert tasks["pairwise"] == {str(i) for i in range(32)} - {
            "23"
        }  # 32 (UMBRELA) has no pairwise prompt
        # every cell rendered and parsed its answers: records exist, the mock's answers parse
        rows = json.loads((tmp_path / "out" / "analysis" / "cells.json").read_text())
        assert len(rows) == len(cells)
        for row in rows:
            assert row["items"] > 0, row
        for task in ("binary", "graded", "pairwise"):  # every answer type is parsed somewhere
            assert sum(r["labelled"] for r in rows if r["task"] == task) > 0, task
        for row in rows:  # an answer is a label or a recorded failure, never lost
            assert row["labelled"] + row["invalid"] <= row["items"]
        records = {
            (c["task"], c["prompt"]): [
                json.loads(line)
                for line in (tmp_path / "out" / c["dir"] / "judgments.jsonl").read_text().splitlines()
            ]
            for c in cells
        }
        every = [r for recs in records.values() for r in recs]
        assert all((r["status"] == "ok") == ("label" in r) and r.get("raw") is not None for r in every)
        # the mock answers each prompt in the format it asks for, and the parsers read it: every
        # record of every prompt set and answer type parses, except two prompts that cannot:
        # binary 6 asks for a quote and a rationale but names no label, and binary 32 is UMBRELA's
        # 0-3 scale in the binary slot (its 2s and 3s are out of range, never clamped to 1)
        cannot = {("binary", "6"), ("binary", "32")}
        for key, recs in records.items():
            if key not in cannot:
                assert all(r["status"] == "ok" for r in recs), (key, [r["raw"] for r in recs][:3])
        assert not any(r["status"] == "ok" for r in records[("binary", "6")])
        assert {r["label"] for r in records[("binary", "32")] if r["status"] == "ok"} <= {0, 1}
        for task in ("binary", "graded", "pairwise"):
            task_records = [r for (t, _), recs in records.items() if t == task for r in recs]
            rate = sum(r["status"] == "ok" for r in task_records) / len(task_records)
            assert rate >= (0.9 if task == "binary" else 1.0), (task, rate)  # measured: 95.1 / 100 / 100 %
        assert sum(r["status"] == "ok" for r in every) / len(every) >= 0.97  # measured: 98.1 %
        summary = json.loads((tmp_path / "out" / "analysis" / "summary.json").read_text())
        assert {s["group"] for s in summary} >= {"human", "llm", "umbrela", "mine", "all"}
        assert (tmp_path / "out" / "analysis" / "report.md").exists()
        # a re-run of the finished sweep makes zero LLM calls
        again = judge("sweep", str(cfg))
        assert again.returncode == 0, again.output
        assert srv.calls == first_calls


@pytest.mark.shared
@pytest.mark.slow
def test_only_filter_and_from_judgments_of_a_sweep(tmp_path, prompts_file, monkeypatch):
    monkeypatch.setenv("RELJUDGE_TEST_KEY", "test-key")
    with MockLLMServer() as srv:
        cfg = _write_sweep(tmp_path, srv.openai_url, prompts_file)
        result = judge("sweep", str(cfg), "--only", "prompt=0,16", "--only", "task=binary")
        assert result.returncode == 0, result.output
        index = json.loads((tmp_path / "out" / "sweep.json").read_text())
        assert sorted(c["prompt"] for c in index["cells"]) == ["0", "16"]
        calls = srv.calls
        analysed = judge(
            "sweep", "--from-judgments", str(tmp_path / "out"), "--out", str(tmp_path / "a"), "--no-plots"
        )
        assert analysed.returncode == 0, analysed.output
        assert srv.calls == calls
        rows = json.loads((tmp_path / "a" / "cells.json").read_text())
        assert {r["prompt"] for r in rows} == {"0", "16"}
        assert all(r["kappa"] is not None for r in rows if r["paired"] > 1)
        assert any(r["paired"] > 1 for r in rows)
