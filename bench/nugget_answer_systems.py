"""Nugget scores of the synthetic answer systems a/b/c/d through the full pipeline, against the mock
(a plumbing check: the mock's labels follow the human grade, they are no model's judgment).

For each collection: the systems of `synthetic_answer_systems.py` (answers are judged passages of
grade 3, 1, 0 and an off-topic grade-0 passage; every answer passage held out of the qrels), then

    judge run --method nuggets --answers answers.tsv --qrels heldout.qrels --topics ... --corpus ...

against an in-process mock server whose nugget assignment follows the human grade of the answer's
text for the topic (`reljudge.testing.grades`, built from the FULL qrels): nuggets are created
once per topic from the held-out qrels' relevant passages (never from an answer), each selected
nugget is assigned to each answer, and the run writes ``answer-nuggets-systems.csv``. The check:
a > b > c >= d on every score, strict or not (see `ordered`).

    python bench/nugget_answer_systems.py DATA_DIR OUT_DIR [--seed 0] [--concurrency 8]
"""

from __future__ import annotations

import argparse
import csv
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from synthetic_answer_systems import build  # noqa: E402

from reljudge.testing import AutoResponder, MockLLMServer  # noqa: E402
from reljudge.testing.grades import GradeBook  # noqa: E402

SCORES = ("all", "all-strict", "vital", "vital-strict", "weighted", "weighted-strict")
ORDER = ("a-grade3", "b-grade1", "c-grade0", "d-offtopic")


def run(data_dir: Path, out_dir: Path, seed: int = 0, concurrency: int = 8) -> dict:
    n_topics, _ = build(data_dir, out_dir, seed)
    book = GradeBook(data_dir / "qrels.txt", data_dir / "passages.tsv", data_dir / "topics.tsv")
    responder = AutoResponder()
    rule = book.rule()
    responder.register(rule.name, rule.match, rule.reply)
    run_dir = out_dir / "nuggets-run"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent / "src")}
    with MockLLMServer(responder) as server:
        command = [
            sys.executable, "-m", "reljudge", "run", "--method", "nuggets",
            "--model", "openai/mock", "--base-url", server.openai_url,
            "--answers", str(out_dir / "answers.tsv"),
            "--topics", str(data_dir / "topics.tsv"), "--qrels", str(out_dir / "heldout.qrels"),
            "--corpus", str(data_dir / "passages.tsv"),
            "--out", str(run_dir), "--no-cache", "--no-progress", "--concurrency", str(concurrency),
        ]  # fmt: skip
        started = time.monotonic()
        done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
        wall = time.monotonic() - started
        calls = server.calls
    if done.returncode != 0:
        raise SystemExit(f"judge run failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    with (run_dir / "answer-nuggets-systems.csv").open() as handle:
        rows = {r["system"]: r for r in csv.DictReader(handle)}
    return {"topics": n_topics, "calls": calls, "wall_s": wall, "rows": rows, "hits": responder.hits}


def ordered(rows: dict) -> dict[str, bool]:
    """a > b > c >= d for each score (the mock answers grade 1 with about one support in four, so
    the strict scores, which count only support, separate b from c too)."""
    out = {}
    for score in SCORES:
        values = [rows[s][score] for s in ORDER]
        if any(v == "" for v in values):
            out[score] = False
            continue
        a, b, c, d = (float(v) for v in values)
        out[score] = a > b > c >= d
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data_dir", type=Path)
    parser.add_argument("out_dir", type=Path)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--concurrency", type=int, default=8)
    args = parser.parse_args()
    result = run(args.data_dir, args.out_dir, args.seed, args.concurrency)
    rows = result["rows"]
    print(
        f"{args.data_dir.name}: {result['topics']} topics, {result['calls']} calls to the mock, "
        f"{result['wall_s']:.1f} s; assignment answers by grade: {result['hits'].get('nugget-assign-by-grade', 0)}"
    )
    print("| system | topics | " + " | ".join(SCORES) + " |")
    for system in ORDER:
        r = rows[system]
        print(
            f"| {system} | {r['topics']} | "
            + " | ".join(f"{float(r[s]):.3f}" if r[s] else "-" for s in SCORES)
            + " |"
        )
    checks = ordered(rows)
    print("a > b > c >= d: " + ", ".join(f"{s} {'yes' if ok else 'NO'}" for s, ok in checks.items()))


if __name__ == "__main__":
    main()
