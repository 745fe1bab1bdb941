"""`judge evaluate`: the relevance level of binary measures (from the dataset, overridden, always
printed) and the topics of judgment sets and runs (a topics column, warnings, trec_eval's -c)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from _cli import judge
from reljudge.analyses.evaluate.comparison import evaluate, qrels_level
from reljudge.analyses.inputs import JudgmentSet

QRELS = "q1 0 a 2\nq1 0 b 1\nq1 0 c 0\nq2 0 d 1\nq2 0 e 3\nq2 0 g 0\nq3 0 f 2\nq3 0 h 0\n"
RUNS = {
    "full": {"q1": ["a", "b", "c"], "q2": ["x", "e", "d"], "q3": ["h", "f"]},
    "partial": {"q1": ["a", "b", "c"], "q2": ["x", "e", "d"]},  # skips the topic it does worst on
}
# AP by hand (see tests/metrics/test_relevance_level.py): grade >= 1: q1 1, q2 7/12, q3 1/2;
# grade >= 2: q1 1, q2 1/2, q3 1/2
MAP = {
    (1, False): {"full": 25 / 36, "partial": 19 / 24},
    (2, False): {"full": 2 / 3, "partial": 3 / 4},
    (1, True): {"full": 25 / 36, "partial": 19 / 36},
    (2, True): {"full": 2 / 3, "partial": 1 / 2},
}
UMBRELA = "q1 0 a 3\nq1 0 b 1\nq1 0 c 0\nq2 0 d 2\nq2 0 e 3\nq2 0 g 0\nq3 0 f 2\nq3 0 h 1\n"
SMALL = "q1 0 a 1\nq1 0 b 0\nq1 0 c 0\n"  # labels one of the three topics


def _collection(root: Path, dataset_json: dict | None = None) -> Path:
    """A dataset directory (topics, qrels, runs; dataset.json when given) and two judgment sets."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "topics.tsv").write_text("q1\tone\nq2\ttwo\nq3\tthree\n")
    (root / "qrels.txt").write_text(QRELS)
    if dataset_json is not None:
        (root / "dataset.json").write_text(json.dumps(dataset_json))
    runs = root / "runs"
    runs.mkdir(exist_ok=True)
    for name, topics in RUNS.items():
        lines = [
            f"{q} Q0 {d} {r + 1} {10 - r} {name}" for q, docs in topics.items() for r, d in enumerate(docs)
        ]
        (runs / f"{name}.run").write_text("\n".join(lines) + "\n")
    (root / "umbrela.qrels").write_text(UMBRELA)
    (root / "small.qrels").write_text(SMALL)
    return root


def _evaluate(root: Path, *args: str, human: tuple[str, ...] | None = None):
    out = root / "out"
    ran = judge(
        "evaluate",
        *(human or ("--dataset", str(root))),
        "--judgments",
        root / "umbrela.qrels",
        "--runs",
        root / "runs",
        "--measure",
        "map",
        "--bootstrap",
        "0",
        "--out",
        out,
        *args,
    )
    assert ran.returncode == 0, ran.output
    return ran, json.loads((out / "evaluation.json").read_text())


def test_binary_measures_take_the_level_the_dataset_declares(tmp_path):
    root = _collection(tmp_path / "c", {"name": "toy", "relevant_threshold": 2})
    ran, data = _evaluate(root)
    settings = data["settings"]
    assert settings["relevance_level"] == 2
    assert settings["relevance_level_source"] == "declared by dataset toy"
    assert settings["measure_definitions"] == {"map": "AP(rel=2)"}
    assert data["human_measure"] == pytest.approx(MAP[(2, False)])
    assert (
        "map = AP(rel=2); binary measures count grade >= 2 as relevant (declared by dataset toy)"
        in ran.stdout
    )
    # the set as qrels: its labels are on the human scale, so the human level (printed per row)
    rows = list(csv.DictReader((root / "out" / "qrels_ranking.csv").open()))
    assert [(r["measure"], r["relevance_level"]) for r in rows] == [("map", "2")]
    row = next(
        line.split() for line in ran.stdout.splitlines() if line.startswith("umbrela") and " map " in line
    )
    assert row[:4] == ["umbrela", "map", ">=", "2"]  # the "set rel." column


def test_an_option_overrides_the_level_and_says_so(tmp_path):
    root = _collection(tmp_path / "c", {"name": "toy", "relevant_threshold": 2})
    ran, data = _evaluate(root, "--rel-threshold", "1")
    assert data["settings"]["relevance_level"] == 1
    assert data["settings"]["relevance_level_source"] == "given with --rel-threshold"
    assert data["human_measure"] == pytest.approx(MAP[(1, False)])
    assert "binary measures count grade >= 1 as relevant (given with --rel-threshold)" in ran.stdout


@pytest.mark.parametrize("dataset_json", [None, {"name": "toy"}])
def test_without_a_declared_level_binary_measures_keep_trec_evals_default(tmp_path, dataset_json):
    root = _collection(tmp_path / "c", dataset_json)
    for human in (None, ("--qrels", str(root / "qrels.txt"))):  # an undeclared dataset, a qrels file
        ran, data = _evaluate(root, human=human)
        assert data["settings"]["relevance_level"] == 1
        assert data["settings"]["measure_definitions"] == {"map": "AP"}
        assert data["human_measure"] == pytest.approx(MAP[(1, False)])
        assert "binary measures count grade >= 1 as relevant (trec_eval's default" in ran.stdout


def test_a_known_dataset_prints_its_level_in_json(tmp_path):
    from reljudge.datasets import bundled_path, load_dataset

    assert load_dataset("dl19-sample").relevance_level == 2
    published = bundled_path() / "llm-judgments" / "gpt-4o" / "umbrela.dl19.qrels"
    ran = judge("evaluate", "--dataset", "dl19-sample", "--judgments", published, "--json",
                "--bootstrap", "0", "--out", tmp_path / "ev")  # fmt: skip
    assert ran.returncode == 0, ran.output
    data = json.loads(ran.stdout)
    assert data["settings"]["relevance_level"] == 2
    assert data["settings"]["relevance_level_source"] == "declared by dataset dl19-sample"
    assert data["topics"] == 5 and data["sets"][0]["topics"] == 5


def test_qrels_level_of_a_judgment_set():
    human = {"q1": {"a": 0, "b": 3}}
    assert qrels_level({"q1": {"a": 0, "b": 1}}, human, 2) == 1  # 0/1 labels
    assert qrels_level({"q1": {"a": 0, "b": 2, "c": 3}}, human, 2) == 2  # on the human scale
    assert qrels_level({"q1": {"a": 0, "b": 7}}, human, 2) == 1  # win counts: any positive score


def test_topics_column_and_a_warning_when_sets_cover_different_topics(tmp_path):
    root = _collection(tmp_path / "c")
    ran = judge("evaluate", "--qrels", root / "qrels.txt", "--judgments", root / "umbrela.qrels",
                "--judgments", root / "small.qrels", "--bootstrap", "0", "--out", root / "out")  # fmt: skip
    assert ran.returncode == 0, ran.output
    data = json.loads((root / "out" / "evaluation.json").read_text())
    assert data["topics"] == 3
    assert [(s["name"], s["topics"]) for s in data["sets"]] == [("umbrela", 3), ("small", 1)]
    rows = list(csv.DictReader((root / "out" / "alignment.csv").open()))
    assert [(r["set"], r["topics"]) for r in rows] == [("umbrela", "3"), ("small", "1")]
    header = next(line for line in ran.stdout.splitlines() if line.startswith("set "))
    assert header.split()[:2] == ["set", "topics"]
    assert (
        "warning: judgment sets label different topics of the 3 the human qrels judge "
        "(3 topics: umbrela; 1 topic: small)" in ran.stderr
    )
    # the same topics everywhere: no warning
    alone = judge("evaluate", "--qrels", root / "qrels.txt", "--judgments", root / "umbrela.qrels",
                  "--bootstrap", "0", "--out", root / "out2")  # fmt: skip
    assert "label different topics" not in alone.stderr


@pytest.mark.parametrize("level", [1, 2])
def test_complete_scores_a_missing_topic_zero_as_trec_eval_c(tmp_path, level):
    root = _collection(tmp_path / "c")
    human = ("--qrels", str(root / "qrels.txt"))
    ran, data = _evaluate(root, "--rel-threshold", str(level), human=human)
    # by default the run that skips a topic is averaged over its own two and outranks the full run
    assert data["human_measure"] == pytest.approx(MAP[(level, False)])
    assert data["settings"]["averaging"] == "run topics"
    assert data["runs_missing_topics"] == {"partial": ["q3"]}
    assert (
        "warning: 1 of 2 runs lack topics of the 3 the human qrels judge (topics ranked: partial 2); "
        "their means are over their own topics" in ran.stderr
    )
    assert "run means over each run's own topics with qrels (trec_eval without -c)" in ran.stdout
    ran, data = _evaluate(root, "--rel-threshold", str(level), "--complete", human=human)
    assert data["human_measure"] == pytest.approx(MAP[(level, True)])
    assert data["settings"]["averaging"] == "complete"
    assert "they score 0 on the missing topics (--complete, trec_eval -c)" in ran.stderr
    assert "run means over all 3 topics of the qrels, a missing topic scoring 0 (trec_eval -c)" in ran.stdout
    measure = {r["run"]: r for r in csv.DictReader((root / "out" / "measure.csv").open())}
    assert (measure["partial"]["topics"], measure["partial"]["missing_topics"]) == ("3", "1")
    # compatibility over the set's topics with a positive judgment, the missing one scoring 0
    assert data["sets"][0]["compatibility"]["partial"]["topics"] == 3


def test_complete_matches_ir_measures_aggregate():
    """ir_measures' own aggregate averages over every qrels topic, a missing one at 0 (trec_eval -c)."""
    import ir_measures

    qrels = {"q1": {"a": 2, "b": 1, "c": 0}, "q2": {"d": 1, "e": 3, "g": 0}, "q3": {"f": 2, "h": 0}}
    runs = {name: {q: {d: 10.0 - r for r, d in enumerate(docs)} for q, docs in topics.items()}
            for name, topics in RUNS.items()}  # fmt: skip
    sets = [JudgmentSet("umbrela", {"q1": {"a": 3.0}, "q2": {"e": 3.0}, "q3": {"f": 2.0}})]
    for level in (1, 2):
        report = evaluate(qrels, sets, runs, measure="map", relevance_level=level, complete=True, n_boot=0)
        for name, run in runs.items():
            reference = ir_measures.calc_aggregate([ir_measures.AP(rel=level)], qrels, run)
            assert report.mean_measure()[name] == pytest.approx(reference[ir_measures.AP(rel=level)])


@pytest.mark.shared
@pytest.mark.slow
def test_dl21_map_at_the_two_levels(shared_data: Path, monkeypatch):
    """The issue's figures: pash_f1 MAP 0.354 at grade >= 1 and 0.319 at >= 2 (TREC DL's level,
    the default with --dataset trec-dl21), the 63-run MAP rankings at the two levels agreeing at
    Kendall tau-b 0.770."""
    from scipy.stats import kendalltau

    from reljudge.analyses.inputs import load_human_labels, load_runs
    from reljudge.datasets import DATA_DIR_ENV

    monkeypatch.setenv(DATA_DIR_ENV, str(shared_data))
    human = load_human_labels(dataset="trec-dl21")
    assert human.relevance_level == 2
    runs = load_runs(shared_data / "trec-dl21" / "runs")
    means = {
        level: evaluate(human.qrels, [], runs, measure="map", relevance_level=level, n_boot=0).mean_measure()
        for level in (1, 2)
    }
    assert round(means[1]["pash_f1"], 3) == 0.354 and round(means[2]["pash_f1"], 3) == 0.319
    names = sorted(means[1])
    assert len(names) == 63
    tau = kendalltau([means[1][n] for n in names], [means[2][n] for n in names]).statistic
    assert round(tau, 3) == 0.770
