"""``judge answers similarity --runs/--anchors`` from files with precomputed .npy vectors (no
torch): the common scale of runs and generators, the anchors table and its stability, ``--json``,
``--average``, and the errors."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from _cli import judge

# FD beside two runs: scipy warns that Spearman of two values is undefined
pytestmark = pytest.mark.filterwarnings("ignore::scipy.stats.ConstantInputWarning")

VECTORS = {
    "t0a": [1, 0, 0, 0],
    "t0b": [0.8, 0.6, 0, 0],
    "n0": [0, 1, 0, 0],
    "t1a": [0, 0, 1, 0],
    "n1": [0, 0, 0, 1],
    "answer\tnear\t0": [1, 0, 0, 0],
    "answer\tnear\t1": [0, 0, 1, 0],
    "answer\tfar\t0": [0, 0, 0, 1],
    "answer\tfar\t1": [0, 0, 0, 1],
}


def _write(tmp: Path) -> dict[str, Path]:
    """Topic 0: targets t0a, t0b (grade 3), n0 (grade 0); topic 1: target t1a (grade 2), n1 (0).
    Run 'good' ranks the targets first, 'bad' the non-relevant passages first."""
    p = {"qrels": tmp / "q.qrels", "answers": tmp / "a.tsv", "npy": tmp / "v.npy", "runs": tmp / "runs"}
    p["qrels"].write_text("0 0 t0a 3\n0 0 t0b 3\n0 0 n0 0\n1 0 t1a 2\n1 0 n1 0\n")
    p["answers"].write_text("near\t0\tx\nnear\t1\tx\nfar\t0\tx\nfar\t1\tx\n")
    np.save(p["npy"], np.array(list(VECTORS.values()), dtype=float))
    (tmp / "v.ids").write_text("\n".join(VECTORS) + "\n")
    p["runs"].mkdir()
    good = [
        "0 Q0 t0a 1 3 good",
        "0 Q0 t0b 2 2 good",
        "0 Q0 n0 3 1 good",
        "1 Q0 t1a 1 2 good",
        "1 Q0 n1 2 1 good",
    ]
    bad = ["0 Q0 n0 1 3 bad", "0 Q0 t0a 2 2 bad", "0 Q0 t0b 3 1 bad", "1 Q0 n1 1 2 bad", "1 Q0 t1a 2 1 bad"]
    (p["runs"] / "good.run").write_text("\n".join(good) + "\n")
    (p["runs"] / "bad.run").write_text("\n".join(bad) + "\n")
    return p


def _args(p: dict[str, Path], *extra: str) -> list[str]:
    return ["answers", "similarity", str(p["answers"]), "--qrels", str(p["qrels"]), "--embeddings", str(p["npy"]),
            *extra]  # fmt: skip


def test_runs_and_generators_on_one_scale_json(tmp_path):
    p = _write(tmp_path)
    out = tmp_path / "out"
    result = judge(*_args(p, "--runs", str(p["runs"]), "--k", "2", "--json", "--out", str(out)))
    assert result.returncode == 0, result.output
    data = json.loads(result.stdout)
    assert data == json.loads((out / "similarity.json").read_text())
    s = data["systems"]
    # good: f_R(t0a) = t0b, f_R(t0b) = t0a (0.8 each), f_R(t1a) = n1 (0) -> micro 1.6 / 3
    assert s["good"]["kind"] == "run" and s["good"]["score"] == pytest.approx(1.6 / 3)
    # bad: f_R = n0 for both targets of topic 0 (0 and 0.6), n1 for t1a (0)
    assert s["bad"]["score"] == pytest.approx(0.6 / 3)
    assert s["near"]["kind"] == "answers" and s["near"]["score"] == pytest.approx(2.8 / 3)
    assert s["far"]["score"] == pytest.approx(0.0)
    assert s["near"]["nDCG@10"] is None and s["good"]["nDCG@10"] > s["bad"]["nDCG@10"]
    assert all(s[n]["pairs"] == 3 and s[n]["missing_vectors"] == 0 and s[n]["no_result"] == 0 for n in s)
    assert data["common_scale"]["agreement"]["systems"] == 2
    assert data["common_scale"]["agreement"]["tau_b"] == pytest.approx(1.0)
    assert data["anchors"] is None


def test_average_macro_is_over_topics(tmp_path):
    p = _write(tmp_path)
    result = judge(*_args(p, "--runs", str(p["runs"]), "--average", "macro", "--json"))
    assert result.returncode == 0, result.output
    s = json.loads(result.stdout)["systems"]
    assert s["good"]["score"] == pytest.approx((0.8 + 0) / 2)
    assert s["near"]["score"] == pytest.approx((0.9 + 1) / 2)
    assert json.loads(result.stdout)["settings"]["score"] == "macro over topics"


def test_anchors_table_and_stability(tmp_path):
    p = _write(tmp_path)
    out = tmp_path / "out"
    result = judge(*_args(p, "--anchors", str(p["runs"]), "--json", "--out", str(out)))
    assert result.returncode == 0, result.output
    anchors = json.loads(result.stdout)["anchors"]
    # anchor good: top-1 t0a, t1a; anchor bad: top-1 n0, n1
    assert anchors["scores"]["near"] == {"good": pytest.approx(1.0), "bad": pytest.approx(0.0)}
    assert anchors["scores"]["far"] == {"good": pytest.approx(0.0), "bad": pytest.approx(0.5)}
    assert anchors["mean"] == {"near": pytest.approx(0.5), "far": pytest.approx(0.25)}
    st = anchors["stability"]
    assert (st["anchors"], st["pairs"], st["identical_order_share"]) == (2, 1, 0.0)
    assert st["mean_tau_b"] == pytest.approx(-1.0)
    rows = (out / "anchors.csv").read_text().splitlines()
    assert rows[0] == "system,mean,bad,good" and rows[1].startswith("near,0.5,0.0,1.0")


@pytest.mark.slow
def test_runs_without_answers_and_the_plot(tmp_path):
    p = _write(tmp_path)
    out = tmp_path / "out"
    args = ["answers", "similarity", "--qrels", str(p["qrels"]), "--embeddings", str(p["npy"]),
            "--runs", str(p["runs"]), "--out", str(out), "--plot"]  # fmt: skip
    result = judge(*args)
    assert result.returncode == 0, result.output
    assert "Kendall tau-b(score, nDCG@10)" in result.stdout
    assert set(json.loads((out / "similarity.json").read_text())["systems"]) == {"good", "bad"}
    assert (out / "common_scale.png").read_bytes().startswith(b"\x89PNG")


def test_errors_exit_2(tmp_path):
    p = _write(tmp_path)
    base = ["answers", "similarity", "--qrels", str(p["qrels"]), "--embeddings", str(p["npy"])]
    result = judge(*base, "--anchors", str(p["runs"]))
    assert result.returncode == 2 and "--anchors scores answers" in result.stderr
    result = judge(*base)
    assert result.returncode == 2 and "nothing to score" in result.stderr
    result = judge(*_args(p, "--average", "median"))
    assert result.returncode == 2 and "--average 'median'" in result.stderr
    result = judge(*_args(p, "--anchors", str(tmp_path / "nowhere")))
    assert result.returncode == 2 and "nowhere" in result.stderr


def test_evaluate_ranks_generators_and_runs_together(tmp_path):
    p = _write(tmp_path)
    out = tmp_path / "ev"
    base = ["evaluate", "--qrels", str(p["qrels"]), "--judgments", str(p["qrels"]), "--runs", str(p["runs"]),
            "--bootstrap", "0", "--out", str(out), "--answers", str(p["answers"]), "--embeddings", str(p["npy"])]  # fmt: skip
    result = judge(*base, "--json")
    assert result.returncode == 0, result.output
    ranking = json.loads(result.stdout)["system_ranking"]
    assert [(r["system"], r["kind"]) for r in ranking["systems"]] == [
        ("near", "answers"), ("good", "run"), ("bad", "run"), ("far", "answers")]  # fmt: skip
    near, good = ranking["systems"][0], ranking["systems"][1]
    assert near["similarity"] == pytest.approx(2.8 / 3) and near["nDCG@10"] is None
    assert good["similarity"] == pytest.approx(1.6 / 3) and good["nDCG@10"] > 0
    assert ranking["agreement"]["systems"] == 2
    assert json.loads((out / "evaluation.json").read_text())["system_ranking"] == ranking
    assert (out / "systems.csv").read_text().splitlines()[1].startswith("near,answers,0.933")
    result = judge(*base)
    assert result.returncode == 0, result.output
    assert "generators and runs on one scale" in result.stdout and "near" in result.stdout


def test_evaluate_answers_need_vectors(tmp_path):
    p = _write(tmp_path)
    base = [
        "evaluate",
        "--qrels",
        str(p["qrels"]),
        "--judgments",
        str(p["qrels"]),
        "--out",
        str(tmp_path / "ev"),
    ]
    result = judge(*base, "--answers", str(p["answers"]))
    assert result.returncode == 2 and "exactly one of --encoder" in result.stderr
    assert not (tmp_path / "ev").exists()
    result = judge(*base, "--embeddings", str(p["npy"]))
    assert result.returncode == 2 and "go with --answers" in result.stderr


def test_evaluate_refuses_an_answer_given_in_two_files(tmp_path):
    """Regression: `judge evaluate --answers A B` kept the last of a (system, topic) answered in
    both files; now it is `error: FILE:LINE: ...`, exit 2, as in `judge run`."""
    p = _write(tmp_path)
    again = tmp_path / "again.tsv"
    again.write_text("far\t0\tanother answer of far to topic 0\n")
    base = ["evaluate", "--qrels", str(p["qrels"]), "--judgments", str(p["qrels"]), "--runs", str(p["runs"]),
            "--bootstrap", "0", "--out", str(tmp_path / "ev"), "--answers", str(p["answers"]),
            "--answers", str(again), "--embeddings", str(p["npy"])]  # fmt: skip
    result = judge(*base)
    assert result.returncode == 2, result.stderr
    assert f"error: {again}:1: system 'far' answers topic '0' already in {p['answers']}:" in result.stderr


def test_a_dataset_gives_the_qrels(tmp_path):
    """``--dataset DIR`` instead of ``--qrels`` reads the directory's qrels: the same result."""
    p = _write(tmp_path)
    ds = tmp_path / "ds"
    ds.mkdir()
    (ds / "qrels.txt").write_bytes(p["qrels"].read_bytes())
    (ds / "topics.tsv").write_text("0\tquestion zero\n1\tquestion one\n")
    base = [
        "answers",
        "similarity",
        str(p["answers"]),
        "--embeddings",
        str(p["npy"]),
        "--runs",
        str(p["runs"]),
        "--json",
    ]
    given = judge(*base, "--qrels", str(p["qrels"]))
    known = judge(*base, "--dataset", str(ds))
    assert given.returncode == known.returncode == 0, known.output
    assert json.loads(known.stdout) == json.loads(given.stdout)
    both = judge(*base, "--dataset", str(ds), "--qrels", str(p["qrels"]))
    assert both.returncode == 2 and "exactly one of --qrels" in both.output
