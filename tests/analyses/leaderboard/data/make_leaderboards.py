"""How truth.eval.txt and judge.eval.txt were made (python make_leaderboards.py in this folder):
8 runs x 5 topics in AutoJudge's ir_measures layout with 'all' rows; the judge's UMBRELA measure
is coarse (values 0-3), so its aggregates tie."""

import random

random.seed(28)
runs = [f"run{c}" for c in "ABCDEFGH"]
topics = ["t1", "t2", "t3", "t4", "t5"]
truth, judge = {}, {}
for r in runs:
    base = random.random()
    for t in topics:
        truth[(r, t, "nDCG@10")] = round(min(1, max(0, base + random.gauss(0, 0.15))), 4)
        truth[(r, t, "R@100")] = round(min(1, max(0, base * 0.8 + random.gauss(0, 0.2))), 4)
        judge[(r, t, "UMBRELA")] = random.choice([0, 1, 1, 2, 2, 3])
        judge[(r, t, "NUGGET")] = round(min(1, max(0, base + random.gauss(0, 0.3))), 4)


def write(values, measures, path):
    lines = [f"{r}\t{t}\t{m}\t{values[(r, t, m)]}" for r in runs for t in topics for m in measures]
    for r in runs:
        for m in measures:
            lines.append(f"{r}\tall\t{m}\t{sum(values[(r, t, m)] for t in topics) / len(topics)}")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


write(truth, ["nDCG@10", "R@100"], "truth.eval.txt")
write(judge, ["UMBRELA", "NUGGET"], "judge.eval.txt")
