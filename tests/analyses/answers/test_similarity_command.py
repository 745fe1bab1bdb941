"""``judge answers similarity`` from files, with precomputed .npy vectors (no torch): the
outputs, the ordering of close and far answers, and the errors on bad input."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest

from _cli import judge


def _write(tmp: Path) -> dict[str, Path]:
    """Two topics on axes 0 and 1; grade-g passages at a growing angle; systems near / far / off."""
    rng = np.random.default_rng(1)
    ids, vecs, qrels, answers = [], [], [], []
    angle = {3: 0.1, 2: 0.4, 1: 0.8, 0: 1.2}
    for t in range(3):
        for g, a in angle.items():
            for i in range(3):
                d = f"p{t}{g}{i}"
                v = np.zeros(6)
                v[t], v[3 + i] = np.cos(a), np.sin(a)
                ids.append(d)
                vecs.append(v + rng.normal(0, 0.01, 6))
                qrels.append(f"{t} 0 {d} {g}")
        for system, a, axis in (("near", 0.1, t), ("far", 1.2, t), ("off", 0.1, (t + 1) % 3)):
            v = np.zeros(6)
            v[axis], v[5] = np.cos(a), np.sin(a)
            ids.append(f"answer\t{system}\t{t}")
            vecs.append(v)
            answers.append(f"{system}\t{t}\tsome answer text")
    paths = {"qrels": tmp / "q.qrels", "answers": tmp / "a.tsv", "npy": tmp / "v.npy"}
    paths["qrels"].write_text("\n".join(qrels) + "\n")
    paths["answers"].write_text("\n".join(answers) + "\n")
    np.save(paths["npy"], np.array(vecs))
    (tmp / "v.ids").write_text("\n".join(ids) + "\n")
    return paths


def test_similarity_command_writes_json_and_csv(tmp_path):
    p = _write(tmp_path)
    out = tmp_path / "out"
    args = [
        "answers",
        "similarity",
        str(p["answers"]),
        "--qrels",
        str(p["qrels"]),
        "--embeddings",
        str(p["npy"]),
    ]
    result = judge(*args, "--out", str(out))
    assert result.returncode == 0, result.output
    data = json.loads((out / "similarity.json").read_text())
    systems = data["systems"]
    assert systems["near"]["score"] > systems["far"]["score"]
    assert systems["near"]["fd"] < systems["far"]["fd"]
    assert systems["near"]["sim_grade_3"] > systems["near"]["sim_grade_0"]
    assert systems["near"]["pairs"] == 3 * 3 and systems["near"]["fd_topics"] == 3
    means = [r["mean"] for r in data["cross_grade"]]
    assert [r["grade"] for r in data["cross_grade"]] == [3, 2, 1, 0] and means == sorted(means, reverse=True)
    rows = list(csv.DictReader((out / "similarity.csv").open()))
    assert {r["system"] for r in rows} == {"near", "far", "off"}
    assert (out / "cross_grade.csv").read_text().startswith("grade,n,mean")
    assert "near" in result.output


def test_similarity_command_plots_the_cross_grade_validation(tmp_path):
    pytest.importorskip("matplotlib")
    p = _write(tmp_path)
    out = tmp_path / "out"
    args = [
        "answers",
        "similarity",
        str(p["answers"]),
        "--qrels",
        str(p["qrels"]),
        "--embeddings",
        str(p["npy"]),
    ]
    result = judge(*args, "--out", str(out), "--plot")
    assert result.returncode == 0, result.output
    assert (out / "cross_grade.png").read_bytes().startswith(b"\x89PNG")


def test_similarity_command_lists_runs_fd_beside_the_answers(tmp_path):
    p = _write(tmp_path)
    runs = tmp_path / "runs"
    runs.mkdir()
    good = [f"{t} Q0 p{t}3{i} {i + 1} {10 - i} good" for t in range(3) for i in range(2)]
    bad = [f"{t} Q0 p{t}0{i} {i + 1} {10 - i} bad" for t in range(3) for i in range(2)]
    (runs / "good.run").write_text("\n".join(good) + "\n")
    (runs / "bad.run").write_text("\n".join(bad) + "\n")
    args = [
        "answers",
        "similarity",
        str(p["answers"]),
        "--qrels",
        str(p["qrels"]),
        "--embeddings",
        str(p["npy"]),
    ]
    result = judge(*args, "--runs", str(runs), "--k", "2", "--out", str(tmp_path / "o"))
    assert result.returncode == 0, result.output
    systems = json.loads((tmp_path / "o" / "similarity.json").read_text())["systems"]
    assert systems["good"]["kind"] == "run" and systems["good"]["fd_k"] == 2
    assert systems["good"]["fd"] < systems["bad"]["fd"]
    assert systems["good"]["nDCG@10"] > systems["bad"]["nDCG@10"]
    assert {"near", "far", "off", "good", "bad"} == set(systems)


def test_similarity_command_needs_one_vector_source_and_good_files(tmp_path):
    p = _write(tmp_path)
    base = ["answers", "similarity", str(p["answers"]), "--qrels", str(p["qrels"])]
    result = judge(*base)
    assert result.returncode == 2 and "exactly one of --encoder" in result.stderr
    bad = tmp_path / "bad.tsv"
    bad.write_text("near\t0\tok\nbroken line\n")
    result = judge("answers", "similarity", str(bad), "--qrels", str(p["qrels"]),
                   "--embeddings", str(p["npy"]), "--out", str(tmp_path / "o"))  # fmt: skip
    assert result.returncode == 2 and "bad.tsv:2" in result.stderr
    assert not (tmp_path / "o").exists()


def test_an_answer_given_in_two_files_is_a_file_line_error(tmp_path):
    """Regression: `judge answers similarity` read several answer files last-wins, where
    `judge run` refuses a (system, topic) answered twice; now one reader: FILE:LINE, exit 2."""
    p = _write(tmp_path)
    again = tmp_path / "again.tsv"
    again.write_text("other\t0\tfine\nnear\t1\tthe same system and topic as a.tsv's line 5\n")
    result = judge("answers", "similarity", str(p["answers"]), str(again), "--qrels", str(p["qrels"]),
                   "--embeddings", str(p["npy"]), "--ids", str(tmp_path / "v.ids"), "--out", str(tmp_path / "o"))  # fmt: skip
    assert result.returncode == 2, result.stderr
    assert f"error: {again}:2: system 'near' answers topic '1' already in {p['answers']}:4" in result.stderr
    assert not (tmp_path / "o").exists()
