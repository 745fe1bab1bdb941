"""Reading answer files (`reljudge.io.answers`): time and memory of a synthetic TREC RAG 2024 run,
and the refusal of a hostile file of one endless line.

A synthetic run of 1,000 topics (8 sentences of 40 words, 3 citations each, 20 references) is
read with `read_rag24`, written as the TSV and read back; then a file of one 500 MB line is read
in a fresh process, which must refuse it at line 1 without reading the line whole. Files live in
a temporary directory (never kept). Peak resident set sizes come from ``getrusage``.

Usage: python bench/bench_answers.py
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HOSTILE_MB = 500

_HOSTILE = """
import resource, time
from reljudge.errors import InputError
from reljudge.io.answers import read_rag24
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
t0 = time.perf_counter()
try:
    read_rag24({path!r})
    print("NOT REFUSED")
except InputError as err:
    print("error:", err)
print(f"refused in {{time.perf_counter() - t0:.3f}} s; peak RSS {{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024}} MB (after import {{base}} MB)")
"""


def main() -> None:
    import resource

    from reljudge.io.answers import read_answers_tsv, read_rag24, write_answers_tsv

    random.seed(0)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        run = root / "synthetic.jsonl"
        with run.open("w", encoding="utf-8") as handle:
            for t in range(1000):
                refs = [f"msmarco_v2.1_doc_{t}_{i}#0_{i}" for i in range(20)]
                answer = [
                    {
                        "text": " ".join(f"word{random.randrange(9999)}" for _ in range(40)),
                        "citations": random.sample(range(20), 3),
                    }
                    for _ in range(8)
                ]
                record = {"run_id": "synthetic", "topic_id": f"2024-{t}", "topic": f"topic {t}"}
                record.update(references=refs, response_length=320, answer=answer)
                handle.write(json.dumps(record) + "\n")
        t0 = time.perf_counter()
        answers = read_rag24(run)
        t1 = time.perf_counter()
        write_answers_tsv(answers, root / "answers.tsv")
        back = read_answers_tsv(root / "answers.tsv")
        t2 = time.perf_counter()
        assert len(back) == len(answers) == 1000
        print(f"read_rag24: {len(answers)} answers, {run.stat().st_size / 1e6:.1f} MB in {t1 - t0:.3f} s")
        print(f"TSV written and read back in {t2 - t1:.3f} s")
        print(f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024} MB")

        hostile = root / "hostile.jsonl"
        with hostile.open("w", encoding="utf-8") as handle:
            chunk = "x" * (1024 * 1024)
            handle.write('{"run_id": "')
            for _ in range(HOSTILE_MB):
                handle.write(chunk)
            handle.write('"}\n')
        done = subprocess.run(
            [sys.executable, "-c", _HOSTILE.format(path=str(hostile))], capture_output=True, text=True
        )
        print(done.stdout.strip() or done.stderr.strip())


if __name__ == "__main__":
    main()
