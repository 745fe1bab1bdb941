"""FD variants in one pass (τ matrix with p-values), the human measure's bootstrap interval and
``judge fd --variants / --plot`` on a synthetic collection with precomputed vectors."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from _cli import judge
from reljudge.analyses.fd.variants import PAPER_VARIANTS, measure_intervals, parse_variants, tau_matrix
from reljudge.errors import InputError

ROOT = Path(__file__).resolve().parents[3]


def test_parse_variants():
    assert parse_variants("k=1,k=1:urr, k=10") == [(1, False), (1, True), (10, False)]
    assert parse_variants("paper") == list(PAPER_VARIANTS)
    for bad in ("k=0", "k=x", "n=1", "k=1:all", "k=1,k=1", ""):
        with pytest.raises(InputError):
            parse_variants(bad)


def test_tau_matrix_matches_scipy_and_is_nan_for_few_runs():
    cols = {"m": {"a": 0.1, "b": 0.5, "c": 0.3, "d": 0.9}, "fd": {"a": 4.0, "b": 1.0, "c": 3.0, "d": 2.0}}
    rows = {(r["a"], r["b"]): r for r in tau_matrix(cols)}
    expected = stats.kendalltau([0.1, 0.5, 0.3, 0.9], [4.0, 1.0, 3.0, 2.0])
    assert rows[("m", "fd")]["tau_b"] == pytest.approx(expected.statistic)
    assert rows[("m", "fd")]["p_value"] == pytest.approx(expected.pvalue)
    assert rows[("fd", "fd")]["tau_b"] == pytest.approx(1.0)
    few = tau_matrix({"m": {"a": 1.0, "b": 2.0}, "fd": {"a": 1.0, "b": 0.0}})
    assert all(math.isnan(r["tau_b"]) for r in few)


def test_measure_intervals_cover_the_mean_and_count_missing_topics_as_zero():
    rng = np.random.default_rng(0)
    per_topic = {"r": {f"q{i}": float(v) for i, v in enumerate(rng.random(40))}}
    topics = {"r": [f"q{i}" for i in range(40)], "s": ["q0", "q1"]}
    out = measure_intervals(per_topic, topics, n_boot=500, seed=1)
    r = out["r"]
    assert r["measure_ci_low"] < r["measure"] < r["measure_ci_high"]
    assert r["measure"] == pytest.approx(np.mean(list(per_topic["r"].values())))
    assert out["s"] == {"measure": 0.0, "measure_ci_low": 0.0, "measure_ci_high": 0.0}
    assert math.isnan(measure_intervals(per_topic, topics, n_boot=0)["r"]["measure_ci_low"])


@pytest.fixture()
def collection(tmp_path: Path) -> Path:
    """Relevant passages sit near one point; run s retrieves more of them the smaller s is."""
    rng = np.random.default_rng(0)
    ids, vectors, qrels = [], [], []
    for q in range(8):
        for i in range(6):
            ids.append(f"rel{q}_{i}")
            vectors.append(rng.normal(0.0, 1.0, 4))
            qrels.append(f"q{q} 0 rel{q}_{i} 2")
        for i in range(12):
            ids.append(f"non{q}_{i}")
            vectors.append(rng.normal(3.0, 1.0, 4))
            if i < 4:
                qrels.append(f"q{q} 0 non{q}_{i} 0")
    np.save(tmp_path / "emb.npy", np.array(vectors, np.float32))
    (tmp_path / "emb.ids").write_text("\n".join(ids) + "\n")
    (tmp_path / "qrels.txt").write_text("\n".join(qrels) + "\n")
    runs = tmp_path / "runs"
    runs.mkdir()
    for s in range(5):
        lines = []
        for q in range(8):
            order = [f"rel{q}_{i}" for i in range(6 - s)] + [f"non{q}_{i}" for i in range(12)]
            lines += [f"q{q} Q0 {d} {i + 1} {30 - i} run{s}" for i, d in enumerate(order[:12])]
        (runs / f"run{s}.txt").write_text("\n".join(lines) + "\n")
    return tmp_path


@pytest.mark.slow
def test_fd_variants_in_one_pass(collection: Path):
    proc = judge(
        "fd",
        "--qrels",
        "qrels.txt",
        "--runs",
        "runs",
        "--embeddings",
        "emb.npy",
        "--variants",
        "k=1,k=3,k=3:urr",
        "--bootstrap",
        "50",
        "--out",
        "out",
        cwd=collection,
    )
    assert proc.returncode == 0, proc.stderr
    matrix = list(csv.DictReader((collection / "out" / "fd_matrix.csv").open()))
    labels = {r["a"] for r in matrix}
    assert labels == {"ndcg_cut_10", "FD@1", "FD@3", "FD@3-URR"} and len(matrix) == 16
    cell = next(r for r in matrix if (r["a"], r["b"]) == ("ndcg_cut_10", "FD@3"))
    assert float(cell["tau_b"]) > 0 and 0 < float(cell["p_value"]) <= 1  # better runs: lower FD, as -FD
    rows = list(csv.DictReader((collection / "out" / "fd_variants.csv").open()))
    assert [r["run"] for r in rows] == [f"run{s}" for s in range(5)]  # by the official measure
    assert all(
        float(r["measure_ci_low"]) <= float(r["measure_fd_topics"]) <= float(r["measure_ci_high"])
        for r in rows
    )
    assert "FD@3-URR_ci_low" in rows[0]
    data = json.loads((collection / "out" / "fd_variants.json").read_text())
    assert (
        data["settings"]["variants"] == ["FD@1", "FD@3", "FD@3-URR"]
        and data["settings"]["encoder"] == "emb.npy"
    )


@pytest.mark.slow
def test_plot_is_the_two_panel_figure_and_needs_out(collection: Path):
    proc = judge(
        "fd",
        "--qrels",
        "qrels.txt",
        "--runs",
        "runs",
        "--embeddings",
        "emb.npy",
        "--k",
        "3",
        "--plot",
        cwd=collection,
    )
    assert proc.returncode == 2 and "--plot needs --out" in proc.stderr
    proc = judge(
        "fd",
        "--qrels",
        "qrels.txt",
        "--runs",
        "runs",
        "--embeddings",
        "emb.npy",
        "--k",
        "3",
        "--bootstrap",
        "30",
        "--plot",
        "--out",
        "o",
        cwd=collection,
    )
    assert proc.returncode == 0, proc.stderr
    assert {"fd_bootstrap.png", "fd.json", "fd.csv", "fd_variants.csv"} <= {
        p.name for p in (collection / "o").iterdir()
    }
    proc = judge(
        "fd",
        "--qrels",
        "qrels.txt",
        "--runs",
        "runs",
        "--embeddings",
        "emb.npy",
        "--variants",
        "k=1:x",
        cwd=collection,
    )
    assert proc.returncode == 2 and "k=N or k=N:urr" in proc.stderr


@pytest.mark.slow
def test_figure_draws_an_fd_point_outside_its_bootstrap_interval(tmp_path: Path):
    """FD is biased under resampling: its point value can lie below the whole percentile interval
    (seen on DL21 with --max-rel 1); the figure must still be drawn."""
    pytest.importorskip("matplotlib")
    from reljudge.analyses.fd.files import write_fd_variants
    from reljudge.analyses.fd.per_run import FDReport, FDResult
    from reljudge.analyses.fd.variants import FDVariantsReport
    from reljudge.metrics.ranking import Interval

    runs = {
        f"r{i}": FDResult(1.0 + i, 10, 10, ["q"], interval=Interval(1.0 + i, 2.0 + i, 3.0 + i, 10))
        for i in range(3)
    }
    human = {f"r{i}": 0.5 - 0.1 * i for i in range(3)}
    fd = FDReport(runs, "nDCG@10", human, {}, {"k": 10})
    intervals = {
        r: {"measure": v, "measure_ci_low": v - 0.1, "measure_ci_high": v + 0.1} for r, v in human.items()
    }
    report = FDVariantsReport({"FD@10": fd}, "nDCG@10", human, intervals, [], {"level": 0.95, "n_boot": 10})
    written = write_fd_variants(report, tmp_path, plot=True)
    assert (tmp_path / "fd_bootstrap.png") in written and (tmp_path / "fd_bootstrap.png").stat().st_size > 0
