"""Acceptance of issue 28's adapter: TREC AutoJudge's own runner (``auto-judge run``, autojudge-base
1.0.0) with reljudge's shipped workflow files, on the starter kit's kiddie sample
(tests/io/autojudge_kiddie, MIT), against reljudge's mock server:

- UMBRELA, nuggets, citation support and the pairwise tournament each produce a leaderboard (every run on every topic,
  and its ``all`` row) that ``auto-judge-evaluate meta-evaluate`` (1.1.0) reads;
- a replay into a fresh out dir, cache only (``RELJUDGE_CACHE_ONLY=1``) and pointed at another
  endpoint (a second mock server, so the cache keys cannot hang on the URL), sends 0 requests
  (counted by both servers) and writes byte-identical outputs;
- the API key reaches the server and no file written.

Slow (about a minute: seven starts of autojudge-base's interpreter). It needs autojudge-base and
autojudge-evaluate, which ``.[dev]`` does not install: it skips, saying so, unless the running
interpreter has them or ``RELJUDGE_AUTOJUDGE_PYTHON`` names one that does (tests/_autojudge.py):

    python3 -m venv /tmp/aj && /tmp/aj/bin/pip install -e '.[autojudge]'
    RELJUDGE_AUTOJUDGE_PYTHON=/tmp/aj/bin/python pytest -p no:xdist tests/autojudge/test_auto_judge_run.py
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from _autojudge import autojudge_python, console_script
from reljudge.autojudge.adapter import METHODS, workflow_path
from reljudge.testing import MockLLMServer

KIDDIE = Path(__file__).resolve().parent.parent / "io" / "autojudge_kiddie"
TOPICS = KIDDIE / "topics" / "kiddie-topics.jsonl"
RUNS = KIDDIE / "runs"
TRUTH = KIDDIE / "kiddie_fake.eval.ir_measures.txt"
SECRET = "sk-reljudge-test-secret-0123456789"
#: the outputs AutoJudge reads, per workflow (its filebase): compared byte for byte on replay
SUFFIXES = (".eval.txt", ".eval.measures.yml", ".qrels.txt", ".nuggets.jsonl", ".config.yml", ".topics.jsonl")


def _auto_judge(python: str, env: dict[str, str], method: str, out: Path) -> subprocess.CompletedProcess:
    done = subprocess.run(
        [console_script(python, "auto-judge"), "run", "--workflow", str(workflow_path(method)),
         "--rag-responses", str(RUNS), "--rag-topics", str(TOPICS), "--out-dir", str(out)],
        env=env, cwd=out.parent, capture_output=True, text=True, timeout=900, check=False,
    )  # fmt: skip
    assert done.returncode == 0, f"{method}: exit {done.returncode}\n{done.stderr[-4000:]}"
    return done


def _outputs(out: Path) -> dict[str, bytes]:
    return {
        p.name: p.read_bytes()
        for p in sorted(out.iterdir())
        if p.is_file() and any(p.name.endswith(s) for s in SUFFIXES)
    }


def _leaderboard(path: Path) -> dict[tuple[str, str, str], float]:
    rows = {}
    for line in path.read_text().splitlines():
        run, topic, measure, value = line.split("\t")
        rows[(run, topic, measure)] = float(value)
    return rows


@pytest.mark.slow
def test_auto_judge_run_with_the_shipped_workflows_and_an_offline_replay(tmp_path):
    python, env = autojudge_python(tmp_path)
    topics = [line.split('"request_id"')[1].split('"')[1] for line in TOPICS.read_text().splitlines() if line]
    runs = sorted(p.stem for p in RUNS.glob("*.jsonl"))
    first, replay = tmp_path / "first" / "out", tmp_path / "replay" / "out"
    first.parent.mkdir()
    replay.parent.mkdir()
    env.update(OPENAI_MODEL="mock-model", OPENAI_API_KEY=SECRET, CACHE_DIR=str(tmp_path / "cache"))
    with MockLLMServer() as server, MockLLMServer() as disabled:
        measured = []
        for method in METHODS:
            started, before = time.perf_counter(), server.calls
            _auto_judge(python, {**env, "OPENAI_BASE_URL": server.openai_url}, method, first)
            measured.append(
                f"{method} {server.calls - before} requests {time.perf_counter() - started:.1f} s"
            )
        calls = server.calls
        assert calls > 0
        assert all("authorization" in r.headers for r in server.requests)  # the key was sent

        replay_env = {**env, "OPENAI_BASE_URL": disabled.openai_url, "RELJUDGE_CACHE_ONLY": "1"}
        started = time.perf_counter()
        for method in METHODS:
            _auto_judge(python, replay_env, method, replay)
        assert server.calls == calls and disabled.calls == 0
        measured.append(f"replay of all {len(METHODS)} 0 requests {time.perf_counter() - started:.1f} s")

    print("auto-judge run: " + "; ".join(measured))
    written = _outputs(first)
    # a topic whose nugget bank is empty (the mock's nuggets for it were none) has no nugget
    # score: its rows are left out and the 'all' row counts it 0 (autojudge-base's fix_aggregate)
    banks = [json.loads(x) for x in (first / "reljudge-nuggets.nuggets.jsonl").read_text().splitlines()]
    unscored = {"nuggets": {b["qid"] for b in banks if not b["nuggets"]}}
    assert [b["qid"] for b in banks] == topics
    for method in METHODS:
        board = _leaderboard(first / f"reljudge-{method}.eval.txt")
        scored = [t for t in topics if t not in unscored.get(method, set())]
        assert {(r, t) for r, t, _ in board} == {(r, t) for r in runs for t in [*scored, "all"]}, method
    assert _outputs(replay) == written  # byte for byte, every file AutoJudge reads
    assert not [p for p in tmp_path.rglob("*") if p.is_file() and SECRET.encode() in p.read_bytes()]

    evaluated = subprocess.run(
        [console_script(python, "auto-judge-evaluate"), "meta-evaluate", "--truth-leaderboard", str(TRUTH),
         "--truth-format", "ir_measures", "--truth-header", "--eval-format", "ir_measures",
         "--on-missing", "default", "--output", str(tmp_path / "meta.jsonl"), "--out-format", "jsonl",
         *(str(first / f"reljudge-{m}.eval.txt") for m in METHODS)],
        env=env, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert evaluated.returncode == 0, evaluated.stderr[-4000:]
    lines = (tmp_path / "meta.jsonl").read_text().splitlines()
    judged = {line.split('"Judge":"')[1].split('"')[0] for line in lines}
    assert judged == {f"reljudge-{m}.eval" for m in METHODS}
    shutil.rmtree(tmp_path / "cache", ignore_errors=True)


@pytest.mark.slow
def test_the_runners_nugget_phase_a_cache_only_miss_and_the_cost_cap(tmp_path):
    """With ``create_nuggets: true`` the runner's nugget phase gets reljudge's bank in the format
    the class declares (v3 here, through `NuggetsV3Judge`), verifies and rewrites it (an empty
    topic is a clear error); a cache-only replay with an empty cache sends nothing, writes no
    leaderboard and says why; the cost cap stops a run (exit 3) that the same command resumes."""
    python, env = autojudge_python(tmp_path)
    flow = workflow_path("nuggets").read_text()
    flow = flow.replace("create_nuggets: false", "create_nuggets: true").replace(
        ":NuggetsJudge", ":NuggetsV3Judge"
    )
    flow = flow.replace(
        '  filebase: "reljudge-nuggets"\n',
        '  filebase: "v3"\n  nugget_source: responses\n  nugget_format: v3\n',
        1,
    )
    custom = tmp_path / "nuggets-v3.yml"
    custom.write_text(flow)
    out = tmp_path / "out"
    env.update(OPENAI_MODEL="mock-model", OPENAI_API_KEY=SECRET, CACHE_DIR=str(tmp_path / "cache"))
    with MockLLMServer() as server:
        done = subprocess.run(
            [console_script(python, "auto-judge"), "run", "--workflow", str(custom), "--rag-responses", str(RUNS),
             "--rag-topics", str(TOPICS), "--out-dir", str(out)],
            env={**env, "OPENAI_BASE_URL": server.openai_url}, capture_output=True, text=True, timeout=900, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr[-4000:]
        assert "but auto_judge declares nugget_banks_type" not in done.stderr
        banks = [json.loads(x) for x in (out / "v3.nuggets.jsonl").read_text().splitlines()]
        assert all(b["format_version"] == "v3" and b["claim_bank"] for b in banks)
        assert server.calls > 0

        # the shipped workflow's bank through the runner's nugget phase: a topic without nuggets
        # (the mock's for one topic are none) is a clear error, not the runner's traceback
        runner_phase = (
            workflow_path("nuggets").read_text().replace("create_nuggets: false", "create_nuggets: true")
        )
        (tmp_path / "nuggets-runner.yml").write_text(runner_phase)
        phased = subprocess.run(
            [console_script(python, "auto-judge"), "run", "--workflow", str(tmp_path / "nuggets-runner.yml"),
             "--rag-responses", str(RUNS), "--rag-topics", str(TOPICS), "--out-dir", str(tmp_path / "phased")],
            env={**env, "OPENAI_BASE_URL": server.openai_url}, capture_output=True, text=True, timeout=900, check=False,
        )  # fmt: skip
        bank = (tmp_path / "phased" / "reljudge-nuggets.nuggets.jsonl").read_text().splitlines()
        if any(not json.loads(line)["nuggets"] for line in bank):
            assert phased.returncode == 1 and "Traceback" not in phased.stderr
            assert "Empty nugget banks" in phased.stderr and "create_nuggets: false" in phased.stderr
        else:
            assert phased.returncode == 0, phased.stderr[-4000:]

        calls = server.calls
        missed = subprocess.run(
            [console_script(python, "auto-judge"), "run", "--workflow", str(workflow_path("umbrela")),
             "--rag-responses", str(RUNS), "--rag-topics", str(TOPICS), "--out-dir", str(tmp_path / "miss")],
            env={**env, "OPENAI_BASE_URL": server.openai_url, "CACHE_DIR": str(tmp_path / "empty"),
                 "RELJUDGE_CACHE_ONLY": "1"},
            capture_output=True, text=True, timeout=900, check=False,
        )  # fmt: skip
        assert missed.returncode != 0 and server.calls == calls
        assert "error: " in missed.stderr and "cache" in missed.stderr  # names the missing answer
        assert not (tmp_path / "miss" / "reljudge-umbrela.eval.txt").exists()

        # --max-cost through the runner: capped (exit 3, no leaderboard), then resumed with a
        # higher cap without asking anything twice; gpt-4o-mini is in litellm's price map
        paid = {**env, "OPENAI_BASE_URL": server.openai_url, "OPENAI_MODEL": "gpt-4o-mini"}
        before = server.calls
        command = [console_script(python, "auto-judge"), "run", "--workflow", str(workflow_path("umbrela")),
                   "--rag-responses", str(RUNS), "--rag-topics", str(TOPICS), "--out-dir", str(tmp_path / "capped")]  # fmt: skip
        capped = subprocess.run(
            command,
            env={**paid, "RELJUDGE_MAX_COST": "0.001"},
            capture_output=True,
            text=True,
            timeout=900,
            check=False,
        )
        assert capped.returncode == 3 and "error: " in capped.stderr and "Traceback" not in capped.stderr
        assert 0 < server.calls - before < 20
        assert not (tmp_path / "capped" / "reljudge-umbrela.eval.txt").exists()
        resumed = subprocess.run(
            command,
            env={**paid, "RELJUDGE_MAX_COST": "1"},
            capture_output=True,
            text=True,
            timeout=900,
            check=False,
        )
        assert resumed.returncode == 0, resumed.stderr[-4000:]
        assert server.calls - before == 20  # 20 responses, none asked twice
        assert (tmp_path / "capped" / "reljudge-umbrela.eval.txt").exists()
