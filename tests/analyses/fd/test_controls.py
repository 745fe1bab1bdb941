"""``judge fd``'s controls: the agreement of the measure with −FD recomputed on random vectors and
with the reference passages excluded from the runs, reported beside the real figure."""

from __future__ import annotations

import json

import numpy as np
import pytest

from _cli import judge
from reljudge.analyses.fd.controls import RandomVectors
from reljudge.analyses.fd.files import fd_data, format_fd_report
from reljudge.analyses.fd.per_run import fd_docids, fd_runs, retrieved_set
from reljudge.vectors.embedding_source import PrecomputedEmbeddings


def test_random_vectors_keep_identity_dimension_and_missing():
    source = PrecomputedEmbeddings(["a", "b", "c"], np.arange(12, dtype=float).reshape(3, 4))
    rnd = RandomVectors(source, seed=1)
    m1, found, missing = rnd.lookup(["a", "x", "b", "a"])
    assert found == ["a", "b", "a"] and missing == ["x"] and m1.shape == (3, 4)
    assert np.array_equal(m1[0], m1[2]) and not np.allclose(m1[0], m1[1])
    assert not np.allclose(m1[0], source.lookup(["a"])[0][0])
    again = RandomVectors(source, seed=1).lookup(["a"])[0][0]
    other = RandomVectors(source, seed=2).lookup(["a"])[0][0]
    assert np.array_equal(again, m1[0]) and not np.allclose(other, m1[0])


def test_retrieved_set_excludes_the_reference_passages_first():
    run = {"q": {"r": 5.0, "a": 4.0, "b": 3.0, "c": 2.0}}
    assert retrieved_set(run, 2) == {"q": ["r", "a"]}
    assert retrieved_set(run, 2, exclude={"q": ["r"]}) == {"q": ["a", "b"]}
    qrels = {"q": {"r": 3}}
    assert fd_docids(qrels, {"s": run}, k=2) == ["r", "a"]
    assert fd_docids(qrels, {"s": run}, k=2, controls=True) == ["r", "a", "b"]


def collection(n_topics=15, n_runs=8, dim=16, seed=0):
    """Run r retrieves the topic's relevant passage with a probability that grows with r, and
    otherwise passages that have nothing to do with it: better nDCG and, by construction, lower FD
    (the shared passage), whatever the vectors."""
    rng = np.random.default_rng(seed)
    ids, qrels, runs = [], {}, {}
    for t in range(n_topics):
        qrels[f"q{t}"] = {f"q{t}-rel": 3}
        ids += [f"q{t}-rel"] + [f"q{t}-d{j}" for j in range(12)]
    vectors = rng.normal(size=(len(ids), dim))
    for r in range(n_runs):
        run = {}
        for t in range(n_topics):
            docs = [f"q{t}-d{j}" for j in rng.permutation(12)]
            if rng.random() < r / n_runs:
                docs.insert(int(rng.integers(0, 3)), f"q{t}-rel")
            run[f"q{t}"] = {d: float(20 - i) for i, d in enumerate(docs)}
        runs[f"run{r}"] = run
    return qrels, runs, PrecomputedEmbeddings(ids, vectors, name="vectors.npy")


def test_controls_beside_the_real_agreement():
    qrels, runs, source = collection()
    report = fd_runs(qrels, runs, source, k=5, controls=True)
    c = report.controls
    assert set(c) == {"random_vectors", "reference_excluded"}
    # random vectors here are as meaningless as the real ones: the agreement is by construction,
    # and it is there in the random-vector control as well; without the shared passage it is gone
    assert report.agreement["kendall_tau_b"] > 0.5
    assert c["random_vectors"]["kendall_tau_b"] > 0.5
    assert c["reference_excluded"]["kendall_tau_b"] < report.agreement["kendall_tau_b"]
    assert c["random_vectors"]["runs"] == len(runs) and len(c["reference_excluded"]["fd"]) == len(runs)
    assert "random" in c["random_vectors"]["description"]
    r = c["random_vectors"]  # the mean over several draws of random vectors, with its range
    assert r["draws"] == 5 and r["kendall_tau_b_min"] <= r["kendall_tau_b"] <= r["kendall_tau_b_max"]
    text = format_fd_report(report)
    assert "controls, Kendall tau-b(ndcg_cut_10, -FD): real vectors" in text
    assert "random vectors" in text and "reference passages excluded from the runs" in text
    assert "(mean of 5 draws, " in text
    assert (
        fd_data(report)["controls"]["random_vectors"]["kendall_tau_b"] == c["random_vectors"]["kendall_tau_b"]
    )
    plain = fd_runs(qrels, runs, source, k=5)
    assert (
        plain.controls == {}
        and "controls" not in fd_data(plain)
        and "controls," not in format_fd_report(plain)
    )


def test_with_urr_the_reference_excluded_control_is_fd_itself():
    qrels, runs, source = collection()
    report = fd_runs(qrels, runs, source, k=5, unjudged_only=True, controls=True)
    assert "kendall_tau_b" not in report.controls["reference_excluded"]
    assert "same as FD" in format_fd_report(report)


@pytest.mark.slow
def test_judge_fd_reports_the_controls_unless_turned_off(tmp_path):

    qrels, runs, source = collection()
    np.save(tmp_path / "v.npy", source.vectors)
    (tmp_path / "v.ids").write_text("\n".join(source.index) + "\n")
    (tmp_path / "qrels.txt").write_text(
        "".join(f"{q} 0 {d} {g}\n" for q, docs in qrels.items() for d, g in docs.items())
    )
    (tmp_path / "runs").mkdir()
    for name, run in runs.items():
        lines = [
            f"{q} Q0 {d} {i + 1} {s} {name}\n"
            for q, docs in run.items()
            for i, (d, s) in enumerate(sorted(docs.items(), key=lambda x: -x[1]))
        ]
        (tmp_path / "runs" / f"{name}.txt").write_text("".join(lines))
    base = ["fd", "--qrels", str(tmp_path / "qrels.txt"), "--runs", str(tmp_path / "runs")]
    base += ["--embeddings", str(tmp_path / "v.npy"), "--k", "5"]
    result = judge(*base, "--out", str(tmp_path / "on"))
    assert result.returncode == 0, result.output
    assert "controls, Kendall tau-b" in result.output
    data = json.loads((tmp_path / "on" / "fd.json").read_text())
    assert (
        data["controls"]["random_vectors"]["kendall_tau_b"] > 0 and "-FD" in data["settings"]["orientation"]
    )
    result = judge(*base, "--no-controls", "--out", str(tmp_path / "off"))
    assert result.returncode == 0, result.output
    assert "controls" not in json.loads((tmp_path / "off" / "fd.json").read_text())
