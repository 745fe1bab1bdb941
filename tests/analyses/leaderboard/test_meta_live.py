"""`judge leaderboard`'s numbers against autojudge-evaluate 1.1.0 run for real (not recorded):
Kendall τ-b, τ_AP-b, τ_GAP, Spearman and Pearson of every measure pair, on the recorded fixture
leaderboards and on random ones with ties in both leaderboards, under both missing-run policies.

Skips with the reason where no interpreter has autojudge-evaluate (tests/_autojudge.py says how
to give one). test_meta.py holds the same evaluator's numbers as recorded fixtures and always
runs; this file shows the recording still holds and widens it to random inputs."""

from __future__ import annotations

import json
import math
import random
import subprocess
from pathlib import Path

import pytest

from _autojudge import autojudge_python
from reljudge.analyses.leaderboard.files import read_leaderboard
from reljudge.analyses.leaderboard.meta import meta_evaluate

DATA = Path(__file__).parent / "data"
THEIRS = {
    "kendall": "kendall_tau_b",
    "tauap_b": "tau_ap_b",
    "tau_gap": "tau_gap",
    "spearman": "spearman",
    "pearson": "pearson",
}
POLICIES = {"zero": "default", "drop": "skip"}  # ours -> autojudge-evaluate's --on-missing

# run in the AutoJudge interpreter: autojudge-evaluate's own evaluator, full floats as JSON
DRIVER = """
import json, sys
from pathlib import Path
from autojudge_evaluate.evaluation import LeaderboardEvaluator
methods, cases = sys.argv[1].split(","), json.loads(sys.argv[2])
found = {}
for truth, judge, on_missing in cases:
    ev = LeaderboardEvaluator(Path(truth), on_missing=on_missing, truth_format="ir_measures",
                              eval_format="ir_measures", correlation_methods=methods)
    for (tm, jm), values in ev.evaluate(Path(judge)).items():
        found[f"{judge}|{on_missing}|{tm}|{jm}"] = {k: float(values[k]) for k in methods}
print(json.dumps(found))
"""


def _random_boards(folder: Path, seed: int) -> tuple[Path, Path]:
    """A truth and a judge leaderboard (ir_measures with 'all' rows); coarse values so that both
    tie; one judge run missing on odd seeds."""
    rng = random.Random(seed)
    runs = [f"r{i:02d}" for i in range(rng.randint(5, 12))]
    topics = [f"t{i}" for i in range(rng.randint(3, 6))]
    truth_lines, judge_lines = [], []
    for r in runs:
        base = rng.random()
        for m, lines, grid in (
            ("T1", truth_lines, 4),
            ("T2", truth_lines, 0),
            ("J1", judge_lines, 3),
            ("J2", judge_lines, 0),
        ):
            values = []
            for t in topics:
                v = rng.randint(0, grid) if grid else round(min(1.0, max(0.0, base + rng.gauss(0, 0.3))), 3)
                values.append(v)
                lines.append(f"{r}\t{t}\t{m}\t{v}")
            if m == "J1" and rng.random() < 0.4:  # an aggregate tied with another run's
                values = [1] * len(values)
            lines.append(f"{r}\tall\t{m}\t{sum(values) / len(values)}")
    if seed % 2:
        gone = runs[rng.randrange(len(runs))]
        judge_lines = [x for x in judge_lines if not x.startswith(gone + "\t")]
    rng.shuffle(judge_lines)
    truth_path, judge_path = folder / f"truth{seed}.txt", folder / f"judge{seed}.txt"
    truth_path.write_text("\n".join(truth_lines) + "\n")
    judge_path.write_text("\n".join(judge_lines) + "\n")
    return truth_path, judge_path


def _theirs(python: str, env: dict[str, str], cases: list[tuple[Path, Path, str]]) -> dict:
    """autojudge-evaluate's numbers of every (truth, judge, its --on-missing) case, in one start."""
    done = subprocess.run(
        [python, "-c", DRIVER, ",".join(THEIRS), json.dumps([[str(t), str(j), p] for t, j, p in cases])],
        env=env, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def _ours(truth: Path, judge: Path, missing: str) -> dict[tuple[str, str], dict[str, float]]:
    report = meta_evaluate(read_leaderboard(judge), read_leaderboard(truth), missing=missing, n_boot=0)
    found: dict[tuple[str, str], dict[str, float]] = {}
    for row in report.correlations:
        if row["runs"] == "all":
            found.setdefault((row["truth_measure"], row["judge_measure"]), {})[row["measure"]] = row["value"]
    return found


@pytest.mark.slow  # starts autojudge-evaluate's interpreter (pandas, scipy): 5-15 s
def test_equal_to_autojudge_evaluate_run_now(tmp_path):
    python, env = autojudge_python(tmp_path)
    boards = [(DATA / "truth.eval.txt", DATA / "judge.eval.txt")]
    boards += [_random_boards(tmp_path, seed) for seed in range(8)]
    cases = [(t, j, POLICIES[m]) for t, j in boards for m in sorted(POLICIES)]
    theirs = _theirs(python, env, cases)
    ours = {(j.name, m): _ours(t, j, m) for t, j in boards for m in POLICIES}
    back = {policy: m for m, policy in POLICIES.items()}
    compared = 0
    for key, values in theirs.items():
        judge, policy, tm, jm = key.split("|")
        truth = Path(judge)
        for name, value in values.items():
            mine = ours[(Path(judge).name, back[policy])][(tm, jm)][THEIRS[name]]
            if name == "tauap_b" and math.isnan(mine):
                # ours is NaN where a leaderboard ties every run; theirs scores that direction
                # 0 (test_meta.py: test_tau_ap_b_is_nan_where_autojudge_evaluate_scores_...)
                continue
            if math.isnan(value):
                assert math.isnan(mine), (truth.name, key, name, mine, value)
            else:
                assert mine == pytest.approx(value, rel=1e-12, abs=1e-12), (
                    truth.name,
                    key,
                    name,
                    mine,
                    value,
                )
            compared += 1
    assert len(theirs) == 2 * 9 * 4
    assert compared >= 2 * 9 * 4 * 4  # every case and pair, and (nearly) every measure, compared
