"""Synthetic answer "systems" for the acceptance check of `judge answers similarity` (issue 13).

For each topic of a TREC DL collection with at least two grade-3 passages, a grade-1 and a
grade-0 passage: system ``a-grade3`` answers with the text of a grade-3 passage, ``b-grade1``
with a grade-1 passage, ``c-grade0`` with a grade-0 passage and ``d-offtopic`` with a grade-0
passage judged for another topic (seeded choices). Every passage used as an answer is removed
from every topic of the qrels written beside (``heldout.qrels``), so no answer is compared with
itself: not a cross-grade target, not a top-grade target, not an FD reference passage.

    python bench/synthetic_answer_systems.py DATA_DIR OUT_DIR [--seed 0]

writes OUT_DIR/answers.tsv and OUT_DIR/heldout.qrels. The expected order is a > b > c >= d.
"""

from __future__ import annotations

import argparse
import random
from pathlib import Path

from reljudge.io.answers import write_answers_tsv
from reljudge.io.corpus import load_corpus
from reljudge.io.trec import read_qrels


def build(data_dir: Path, out_dir: Path, seed: int = 0) -> tuple[int, int]:
    qrels = read_qrels(data_dir / "qrels.txt")
    rng = random.Random(seed)
    picks: dict[str, dict[str, str]] = {}
    topics = sorted(qrels)
    for qid in topics:
        docs = qrels[qid]
        by_grade = {g: sorted(d for d, v in docs.items() if v == g) for g in (3, 1, 0)}
        if len(by_grade[3]) < 2 or not by_grade[1] or not by_grade[0]:
            continue
        others = [q for q in topics if q != qid]
        other = rng.choice(others)
        off = sorted(d for d, v in qrels[other].items() if v == 0 and d not in docs)
        if not off:
            continue
        picks[qid] = {
            "a-grade3": rng.choice(by_grade[3]),
            "b-grade1": rng.choice(by_grade[1]),
            "c-grade0": rng.choice(by_grade[0]),
            "d-offtopic": rng.choice(off),
        }
    used = {d for p in picks.values() for d in p.values()}
    texts = load_corpus(data_dir / "passages.tsv", docids=used)
    answers: dict[str, dict[str, str]] = {}
    for qid, p in picks.items():
        for system, docid in p.items():
            answers.setdefault(system, {})[qid] = texts[docid]
    out_dir.mkdir(parents=True, exist_ok=True)
    write_answers_tsv(answers, out_dir / "answers.tsv")
    lines = [f"{q} 0 {d} {int(g)}" for q in topics for d, g in qrels[q].items() if d not in used]
    (out_dir / "heldout.qrels").write_text("\n".join(lines) + "\n")
    return len(picks), len(used)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data_dir", type=Path)
    parser.add_argument("out_dir", type=Path)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    n_topics, n_used = build(args.data_dir, args.out_dir, args.seed)
    print(f"{n_topics} topics, {n_used} passages held out -> {args.out_dir}")


if __name__ == "__main__":
    main()
