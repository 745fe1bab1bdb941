"""``judge sweep --batch`` against the mock server's Batch API (in-process, a real HTTP server on
127.0.0.1): a synchronous sweep and the same sweep through batches, with the mock's simulated
completion delay, the batch sweep run with one cell at a time and with ``limits.cells`` cells at
once (their waits overlap), then ``--max-cost`` at a quarter of the batch estimate, the same cap
again, and a higher cap. Prints wall times, chat calls and batch submissions counted on the
server, labels compared cell by cell, and the costs.

Usage: PYTHONPATH=src python bench/bench_sweep_batch.py [--delay S] [--topics N]
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

from typer.testing import CliRunner

from reljudge.cli import app
from reljudge.io.judgments import read_judgments
from reljudge.testing import MockLLMServer

ENV = {"RELJUDGE_BENCH_KEY": "sk-bench"}


def write(tmp: Path, url: str, name: str, cells: int, topics: int) -> Path:
    models = "".join(
        f'  - {{name: {n}, model: openai/{m}, base_url: "{url}", api_key_env: RELJUDGE_BENCH_KEY, '
        "params: {max_tokens: 20}}\n"
        for n, m in (("mini", "gpt-4o-mini"), ("nano", "gpt-4.1-nano"))
    )
    prompts = "".join(
        f"  - id: {pid}\n    group: mine\n"
        f'    binary: {{user: "{lead}Query: {{query}}\\nPassage: {{document}}\\nAnswer 1 for yes and 0 for no."}}\n'
        f'    graded: {{user: "{lead}Query: {{query}}\\nPassage: {{document}}\\nGrade the passage from 0 to 3."}}\n'
        for pid, lead in (("short", ""), ("long", "You judge search results.\\n"))
    )
    cfg = tmp / f"{name}.yaml"
    cfg.write_text(
        f"name: {name}\noutput: {name}\ncache: {name}.sqlite\ndatasets: [dl19-sample]\nmodels:\n{models}"
        f"methods: [binary, graded]\nprompts:\n{prompts}sampling: {{topics: {topics}, per_grade: 5}}\n"
        f"limits: {{concurrency: 8, cells: {cells}}}\nanalysis: {{plots: false}}\n",
        encoding="utf-8",
    )
    return cfg


def sweep(cfg: Path, *args: str) -> tuple[int, str, float]:
    started = time.monotonic()
    result = CliRunner().invoke(app, ["sweep", str(cfg), *args], env=ENV)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.output, time.monotonic() - started


def labels(out: Path) -> dict:
    return {
        (str(p.parent.relative_to(out)), r.key): (r.status, r.label)
        for p in sorted(out.glob("cells/**/judgments.jsonl"))
        for r in read_judgments(p)
    }


def cost(out: Path) -> float:
    return sum(
        r.provenance.usage.cost_usd for p in out.glob("cells/**/judgments.jsonl") for r in read_judgments(p)
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--delay", type=float, default=2.0, help="the mock's batch completion delay (s)")
    parser.add_argument("--topics", type=int, default=5)
    a = parser.parse_args()
    os.environ.update(ENV)
    models = ("gpt-4o-mini", "gpt-4.1-nano")
    with tempfile.TemporaryDirectory() as scratch:
        tmp = Path(scratch)
        poll = ("--batch-poll", "0.2")
        with MockLLMServer(models=models) as server:
            code, _, took = sweep(write(tmp, server.openai_url, "sync", 4, a.topics))
            print(
                f"synchronous sweep: exit {code}, {server.calls} chat calls, {took:.1f} s, ${cost(tmp / 'sync'):.6f}"
            )
        for cells in (1, 4):  # a server each: its counts are this sweep's
            name = f"batch{cells}"
            with MockLLMServer(models=models, batch_delay_s=a.delay) as server:
                code, _, took = sweep(write(tmp, server.openai_url, name, cells, a.topics), "--batch", *poll)
                print(
                    f"--batch, limits.cells {cells}, batch delay {a.delay:g} s: exit {code}, {took:.1f} s, "
                    f"{server.calls} chat calls, {sum(server.batches.submissions.values())} requests submitted in "
                    f"{len(server.batches.batches)} batches, {server.batches.resubmitted} twice, labels identical "
                    f"to the synchronous sweep: {labels(tmp / name) == labels(tmp / 'sync')}, ${cost(tmp / name):.6f}"
                )
        with MockLLMServer(models=models) as server:
            cfg = write(tmp, server.openai_url, "cap", 4, a.topics)
            code, text, _ = sweep(cfg, "--dry-run", "--json")
            est = json.loads(text)
            cap = est["cost_usd_batch"] / 4
            print(
                f"estimate: {est['calls']} calls, ${est['cost_usd']:.6f} synchronous, "
                f"${est['cost_usd_batch']:.6f} batch; cap a quarter of the batch estimate: ${cap:.6f}"
            )
            for label, value in (("a quarter", cap), ("the same cap", cap), ("8x", cap * 8)):
                before = sum(server.batches.submissions.values())
                code, text, took = sweep(cfg, "--batch", *poll, "--max-cost", f"{value:.8f}")
                sent = sum(server.batches.submissions.values()) - before
                message = next((line for line in text.splitlines() if line.startswith("stopped at")), "")
                print(
                    f"--max-cost {label} (${value:.6f}): exit {code}, {sent} submitted, "
                    f"{len(labels(tmp / 'cap'))} records, ${cost(tmp / 'cap'):.6f} spent, "
                    f"{server.batches.resubmitted} submitted twice\n  {message}"
                )


if __name__ == "__main__":
    main()
