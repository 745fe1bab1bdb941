#!/usr/bin/env python
"""Regenerate the bundled sample ``src/reljudge/data/dl19-sample/`` from ../shared/data.

Topic choice (deterministic): among the 43 judged TREC DL 2019 passage topics, keep those where
every grade 0, 1, 2 and 3 occurs at least twice (so every grade of the scale is represented),
then take the 5 with the fewest judged passages (ties broken by qid as text). That keeps an
end-to-end demo at a few hundred LLM calls per pointwise method. Every judged passage of the
chosen topics is included, with its text; qrels lines, EXAM questions and the published GPT-4o
judgment lines are copied verbatim (filtered to the chosen topics, original order kept).

Usage: python scripts/make_sample.py [--shared ../shared/data] [--out src/reljudge/data/dl19-sample]
"""

from __future__ import annotations

import argparse
import json
import shutil
from collections import Counter
from pathlib import Path

N_TOPICS = 5
MIN_PER_GRADE = 2
GRADES = (0, 1, 2, 3)
ROOT = Path(__file__).resolve().parent.parent


def read_lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def choose_topics(qrels_lines: list[str]) -> list[str]:
    grades: dict[str, Counter[int]] = {}
    for line in qrels_lines:
        qid, _, _, grade = line.split()
        grades.setdefault(qid, Counter())[int(grade)] += 1
    eligible = [q for q, c in grades.items() if all(c[g] >= MIN_PER_GRADE for g in GRADES)]
    eligible.sort(key=lambda q: (sum(grades[q].values()), q))
    return eligible[:N_TOPICS]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("--shared", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("--out", type=Path, default=ROOT / "src" / "reljudge" / "data" / "dl19-sample")
    args = parser.parse_args()
    src = args.shared / "trec-dl19"
    out: Path = args.out

    qrels_lines = [line for line in read_lines(src / "qrels.txt") if line.strip()]
    chosen = choose_topics(qrels_lines)
    keep = set(chosen)

    if out.exists():
        shutil.rmtree(out)
    (out / "llm-judgments" / "gpt-4o").mkdir(parents=True)

    topics = {line.split("\t", 1)[0]: line for line in read_lines(src / "topics.tsv") if line.strip()}
    (out / "topics.tsv").write_text("".join(topics[q] + "\n" for q in chosen), encoding="utf-8")

    sample_qrels = [line for line in qrels_lines if line.split()[0] in keep]
    (out / "qrels.txt").write_text("".join(line + "\n" for line in sample_qrels), encoding="utf-8")

    docids: list[str] = []
    for line in sample_qrels:
        docid = line.split()[2]
        if docid not in docids:
            docids.append(docid)
    passages = {}
    for line in read_lines(src / "passages.tsv"):
        docid, _, _ = line.partition("\t")
        passages[docid] = line
    missing = [d for d in docids if d not in passages]
    if missing:
        raise SystemExit(f"passages missing from {src / 'passages.tsv'}: {missing[:5]}")
    (out / "passages.tsv").write_text("".join(passages[d] + "\n" for d in docids), encoding="utf-8")

    questions = [
        line
        for line in read_lines(src / "exam_questions.gpt-4o.tsv")
        if line.rsplit("\t")[0].rpartition("_")[0] in keep
    ]
    (out / "exam_questions.gpt-4o.tsv").write_text(
        "".join(line + "\n" for line in questions), encoding="utf-8"
    )

    judgment_counts = {}
    for path in sorted((args.shared / "llm-judgments" / "gpt-4o").glob("*.dl19.qrels")):
        lines = [line for line in read_lines(path) if line.strip() and line.split()[0] in keep]
        (out / "llm-judgments" / "gpt-4o" / path.name).write_text(
            "".join(line + "\n" for line in lines), encoding="utf-8"
        )
        judgment_counts[path.name] = len(lines)

    per_topic = Counter(line.split()[0] for line in sample_qrels)
    per_grade = {
        q: Counter(int(line.split()[3]) for line in sample_qrels if line.split()[0] == q) for q in chosen
    }
    meta = {
        "name": "dl19-sample",
        "description": f"bundled sample: {len(chosen)} TREC DL 2019 topics with all {len(sample_qrels)} judged pairs",
        "min_grade": 0,
        "max_grade": 3,
        "relevant_threshold": 2,
        "grade_labels": {
            "0": "irrelevant",
            "1": "related",
            "2": "highly relevant",
            "3": "perfectly relevant",
        },
        "tag": "dl19",
        "source": "TREC DL 2019 passage task via Narabzad/llm-relevance-judgement-comparison",
    }
    (out / "dataset.json").write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")

    rows = "\n".join(
        f"| {q} | {topics[q].split(chr(9), 1)[1]} | {per_topic[q]} | "
        + " / ".join(str(per_grade[q][g]) for g in GRADES)
        + " |"
        for q in chosen
    )
    files = "\n".join(f"| `llm-judgments/gpt-4o/{name}` | {n} |" for name, n in judgment_counts.items())
    readme = README.format(
        n_topics=len(chosen),
        n_pairs=len(sample_qrels),
        n_passages=len(docids),
        n_questions=len(questions),
        rows=rows,
        files=files,
    )
    (out / "README.md").write_text(readme, encoding="utf-8")
    size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    print(
        f"wrote {out}: topics {chosen}, {len(sample_qrels)} judged pairs, {len(docids)} passages, {size / 1e6:.2f} MB"
    )


README = """# dl19-sample: a small slice of TREC Deep Learning 2019 (passage task)

Bundled with reljudge so that every command and test can run without downloading anything.
Generated by `scripts/make_sample.py` from `../shared/data` (do not edit by hand).

## Contents

{n_topics} topics, {n_pairs} judged (topic, passage) pairs, {n_passages} passage texts,
{n_questions} EXAM questions. Human grades 0-3 (0 irrelevant, 1 related, 2 highly relevant,
3 perfectly relevant); binary relevance in reljudge uses grade >= 2 (TREC DL passage convention).

Topic choice: among the 43 DL19 topics, those with at least 2 passages at every grade 0-3, then
the {n_topics} with the fewest judged passages (ties by qid). A pointwise method over the whole
sample costs {n_pairs} LLM calls.

| qid | query | judged | grade 0 / 1 / 2 / 3 |
|---|---|---|---|
{rows}

| file | content |
|---|---|
| `topics.tsv` | `qid<TAB>query` |
| `qrels.txt` | NIST qrels `qid Q0 docid grade`, lines copied verbatim |
| `passages.tsv` | `docid<TAB>text`, every judged passage (MS MARCO v1 passage ids; text as distributed, including its encoding artefacts) |
| `exam_questions.gpt-4o.tsv` | `qid_n<TAB>question`, the 10 EXAM questions per topic generated by GPT-4o |
| `llm-judgments/gpt-4o/<method>.dl19.qrels` | published GPT-4o judgments of the same pairs (4th column int or float; see ../shared/data/README.md for each method's scale) |
| `dataset.json` | grade scale metadata read by `reljudge.load_dataset` |

Published GPT-4o judgment lines per file (the nugget files cover only the passages the
AutoNuggetizer scored; `preferences` lists only passages that won at least one comparison):

| file | lines |
|---|---|
{files}

## Sources and terms

- **Topics and relevance judgments**: TREC 2019 Deep Learning Track, passage ranking task,
  National Institute of Standards and Technology (NIST), https://trec.nist.gov/ ;
  Craswell, Mitra, Yilmaz, Campos, Voorhees, "Overview of the TREC 2019 Deep Learning Track", 2020.
- **Passages**: MS MARCO passage collection, (c) Microsoft Corporation, provided for
  non-commercial research purposes only under the MS MARCO terms
  (https://microsoft.github.io/msmarco/). The passages are not covered by reljudge's
  Apache-2.0 licence; do not use them for commercial purposes.
- **EXAM questions and GPT-4o judgments**: released with Arabzadeh & Clarke, "Benchmarking
  LLM-based Relevance Judgment Methods" (SIGIR 2025), repository
  https://github.com/Narabzad/llm-relevance-judgement-comparison (which also redistributes the
  qrels and passages above).
"""


if __name__ == "__main__":
    main()
