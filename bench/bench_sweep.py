"""Speed of `judge sweep`: `python bench/bench_sweep.py` (parts 1-2 need ../shared/data).

1. ``--from-judgments`` analysis of the whole published prompt-sensitivity release (474 cells:
   3 models x 3 tasks x 2 datasets x 26/27 prompts): κ / agreement per cell, per-group
   summaries, Krippendorff's α between prompts;
2. the same with the 63 TREC DL 2021 runs: ranking stability (nDCG@10 of every run under every
   binary/graded DL21 cell's labels, Kendall τ-b to the human ranking and between prompts);
3. ``judge sweep --from-judgments … --preset thesis-table-4.5`` end to end in a fresh process, plots
   included (target: under 60 s on the 2-core machine);
4. a mock sweep of ``examples/sweep-sample.yaml`` (the model pointed at the mock LLM server):
   planning, sampling, judging every cell, the analysis and the report.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(os.environ.get("RELJUDGE_DATA_DIR", ROOT.parent / "shared" / "data"))


def timed(label: str, fn):
    t = time.perf_counter()
    value = fn()
    print(f"{label:<66} {time.perf_counter() - t:8.3f} s")
    return value


def bench_published() -> None:
    from reljudge.analyses.inputs import load_runs
    from reljudge.sweep import published
    from reljudge.sweep.analysis import Conventions, ranking_stability
    from reljudge.sweep.api import analyze_published

    tarball = DATA / "prompt-sensitivity" / "judgments.tar.gz"
    runs_dir = DATA / "trec-dl21" / "runs"
    if not tarball.is_file():
        print(f"skipped parts 1-2: {tarball} not found")
        return
    cells, _ = timed("read the release (tarball -> cells)", lambda: published.read_published(tarball))
    analysis = timed(
        "1. --from-judgments, whole release, no runs (end to end)", lambda: analyze_published(tarball)
    )
    print(f"   {len(analysis.rows)} cells, {len(analysis.alphas)} alpha matrices")
    if not runs_dir.is_dir():
        print(f"skipped part 2: {runs_dir} not found")
        return
    runs = timed("load the 63 DL21 runs", lambda: load_runs(runs_dir))
    analysis = timed(
        "2. --from-judgments with --runs dl21=... (end to end)",
        lambda: analyze_published(tarball, runs={"dl21": runs_dir}),
    )
    from reljudge.io.trec import read_qrels

    qrels = {"dl21": read_qrels(DATA / "trec-dl21" / "qrels.txt")}
    dl21 = [c for c in cells if c.dataset == "dl21"]
    rankings = timed(
        "   ranking stability alone (DL21, runs loaded)",
        lambda: ranking_stability(dl21, qrels, {"dl21": runs}, Conventions()),
    )
    scored = sum(len(r.prompts) for r in rankings)
    print(f"   {scored} cells x {len(runs)} runs scored by nDCG@10, {len(rankings)} tau tables")


def bench_preset() -> None:
    import subprocess
    import sys

    tarball = DATA / "prompt-sensitivity" / "judgments.tar.gz"
    if not tarball.is_file():
        print(f"skipped part 3: {tarball} not found")
        return
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    with tempfile.TemporaryDirectory() as tmp:
        command = [sys.executable, "-m", "reljudge", "sweep", "--from-judgments", str(tarball)]
        command += ["--preset", "thesis-table-4.5", "--out", tmp]
        timed(
            "3. --preset thesis-table-4.5, CLI with plots (target < 60 s)",
            lambda: subprocess.run(command, check=True, capture_output=True, env=env),
        )
        print(f"   {(Path(tmp) / 'summary_pooled.csv').read_text().count(chr(10)) - 1} pooled rows")


def bench_mock_sweep() -> None:
    import yaml
    from typer.testing import CliRunner

    from reljudge.cli import app
    from reljudge.testing import MockLLMServer

    sample = ROOT / "examples" / "sweep-sample.yaml"
    config = yaml.safe_load(sample.read_text(encoding="utf-8"))
    prompts = DATA / "prompt-sensitivity" / "prompts.json"
    if not prompts.is_file():
        config["prompts"] = [p for p in config["prompts"] if "file" not in p]
    else:
        for p in config["prompts"]:
            if "file" in p:
                p["file"] = str(prompts)
    os.environ["RELJUDGE_BENCH_KEY"] = "bench"
    with tempfile.TemporaryDirectory() as tmp, MockLLMServer() as srv:
        config["output"] = str(Path(tmp) / "out")
        config["cache"] = str(Path(tmp) / "cache.sqlite")
        config["models"] = [
            {
                "name": "mock",
                "model": "openai/mock-model",
                "base_url": srv.openai_url,
                "api_key_env": "RELJUDGE_BENCH_KEY",
                "params": {"max_tokens": 50},
            }
        ]
        config.setdefault("analysis", {})["plots"] = False
        path = Path(tmp) / "sweep.yaml"
        path.write_text(yaml.safe_dump(config), encoding="utf-8")
        runner = CliRunner()
        result = timed(
            "3. mock sweep of examples/sweep-sample.yaml (from scratch)",
            lambda: runner.invoke(app, ["sweep", str(path)]),
        )
        if result.exit_code != 0:
            print(result.output)
            raise SystemExit(1)
        calls = srv.calls
        index = json.loads((Path(tmp) / "out" / "sweep.json").read_text())
        by_cell = {
            f"{c['task']}/{c['prompt']}": [
                json.loads(line)
                for line in (Path(tmp) / "out" / c["dir"] / "judgments.jsonl").read_text().splitlines()
            ]
            for c in index["cells"]
        }
        records = [r for recs in by_cell.values() for r in recs]
        ok = sum(r["status"] == "ok" for r in records)
        print(
            f"   {len(index['cells'])} cells, {calls} LLM calls, {len(records)} records, "
            f"{ok / len(records):.1%} parsed"
        )
        for cell, recs in by_cell.items():
            bad = [r for r in recs if r["status"] != "ok"]
            if bad:
                print(f"   unparsed in {cell}: {len(bad)} of {len(recs)} (e.g. {bad[0].get('raw')!r})")
        timed(
            "   re-run of the finished sweep (all cached, no call)",
            lambda: runner.invoke(app, ["sweep", str(path)]),
        )
        assert srv.calls == calls


if __name__ == "__main__":
    print(f"cores: {os.cpu_count()}")
    bench_published()
    bench_preset()
    bench_mock_sweep()
