"""Fréchet distance: closed forms, n < p stability, FD@k selection and encoders."""

from __future__ import annotations

import numpy as np
import pytest

from reljudge.analyses.fd.frechet import frechet_distance, frechet_distance_stats, gaussian_stats
from reljudge.analyses.fd.per_run import fd_at_k, fd_runs, relevant_set, retrieved_set
from reljudge.errors import MissingExtraError
from reljudge.vectors.npy import load_embeddings


def sqrtm_reference(x, y):
    from scipy import linalg

    mu1, s1 = gaussian_stats(x)
    mu2, s2 = gaussian_stats(y)
    covmean = linalg.sqrtm(s1 @ s2)
    return float((mu1 - mu2) @ (mu1 - mu2) + np.trace(s1) + np.trace(s2) - 2 * np.trace(covmean).real)


def test_fd_of_a_set_with_itself_is_zero():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(200, 16))
    assert frechet_distance(x, x) == pytest.approx(0.0, abs=1e-9)
    small = rng.normal(size=(20, 64))  # n < p
    assert frechet_distance(small, small) == pytest.approx(0.0, abs=1e-9)


def test_mean_shift_closed_form():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(500, 8))
    delta = rng.normal(size=8)
    assert frechet_distance(x, x + delta) == pytest.approx(float(delta @ delta), rel=1e-9)
    # identity covariances given directly: FD = ||delta||^2
    assert frechet_distance_stats(np.zeros(8), np.eye(8), delta, np.eye(8)) == pytest.approx(
        float(delta @ delta)
    )


def test_one_dimensional_case():
    rng = np.random.default_rng(2)
    a = rng.normal(1.0, 2.0, size=300)
    b = rng.normal(-0.5, 0.5, size=400)
    expected = (a.mean() - b.mean()) ** 2 + (a.std(ddof=1) - b.std(ddof=1)) ** 2
    assert frechet_distance(a, b) == pytest.approx(expected, rel=1e-9)


@pytest.mark.parametrize("n1,n2,p", [(10, 15, 64), (30, 200, 64), (200, 300, 32)])
def test_agrees_with_sqrtm_reference(n1, n2, p):
    rng = np.random.default_rng(n1 + n2)
    x = rng.normal(size=(n1, p))
    y = rng.normal(0.3, 1.2, size=(n2, p))
    assert frechet_distance(x, y) == pytest.approx(sqrtm_reference(x, y), rel=1e-5)


def test_rank_deficient_stays_finite_and_both_routes_agree():
    rng = np.random.default_rng(3)
    x = rng.normal(size=(12, 300))
    y = rng.normal(size=(40, 300))
    gram = frechet_distance(x, y)
    mu1, s1 = gaussian_stats(x)
    mu2, s2 = gaussian_stats(y)
    cov = frechet_distance_stats(mu1, s1, mu2, s2)
    assert np.isfinite(gram) and gram == pytest.approx(cov, rel=1e-6)
    # the pytorch-fid style eps*I shifts the value slightly (sqrt of eps-sized eigenvalues)
    regularised = frechet_distance(x, y, eps=1e-6)
    assert regularised == pytest.approx(gram, rel=1e-3) and regularised != gram


def test_input_errors():
    with pytest.raises(ValueError):
        frechet_distance(np.zeros((5, 3)), np.zeros((5, 4)))
    with pytest.raises(ValueError):
        frechet_distance(np.zeros((1, 3)), np.zeros((5, 3)))
    with pytest.raises(ValueError):
        frechet_distance(np.full((3, 2), np.nan), np.zeros((3, 2)))


QRELS = {"q1": {"r3": 3, "r2a": 2, "r2b": 2, "r1": 1, "n": 0}, "q2": {"s2": 2, "s0": 0}, "q3": {"t1": 1}}
RUN = {"q1": {"n": 5.0, "x": 4.0, "r3": 3.0, "y": 2.0}, "q2": {"s0": 1.0, "z": 1.0}, "q3": {"t1": 1.0}}


def test_relevant_and_retrieved_selection():
    rel = relevant_set(QRELS, min_grade=2)
    assert rel == {"q1": ["r3", "r2a", "r2b"], "q2": ["s2"]}
    capped = relevant_set(QRELS, min_grade=2, max_per_topic=2)
    assert capped["q1"][0] == "r3" and capped["q1"][1] in {"r2a", "r2b"} and len(capped["q1"]) == 2
    assert relevant_set(QRELS, min_grade=1)["q3"] == ["t1"]
    top = retrieved_set(RUN, 2)
    assert top["q1"] == ["n", "x"] and top["q2"] == ["z", "s0"]  # tie by docid descending
    urr = retrieved_set(RUN, 2, qrels=QRELS, unjudged_only=True)
    assert urr["q1"] == ["x", "y"] and urr["q2"] == ["z"] and urr["q3"] == []


def make_embeddings(tmp_path, ids, dim=6, seed=0):
    rng = np.random.default_rng(seed)
    vectors = rng.normal(size=(len(ids), dim)).astype(np.float32)
    np.save(tmp_path / "emb.npy", vectors)
    (tmp_path / "emb.ids").write_text("\n".join(ids) + "\n")
    return load_embeddings(tmp_path / "emb.npy")


def test_fd_at_k_reports_missing_passages(tmp_path):
    source = make_embeddings(tmp_path, ["r3", "r2a", "r2b", "s2", "n", "x", "s0"])
    result = fd_at_k(QRELS, RUN, source, k=3, min_grade=2)
    assert result.topics == ["q1", "q2"]
    assert result.n_reference == 4 and result.n_retrieved == 4  # n, x, r3 + s0 (z missing)
    assert result.missing_retrieved == [("q2", "z")]
    assert np.isfinite(result.fd)
    boot = fd_at_k(QRELS, RUN, source, k=3, n_boot=20, seed=1)
    # the jackknife leaves each of the two topics out: without q1 one reference vector is left,
    # FD is undefined, and no interval is given from a single leave-one-out value
    assert len(boot.replicates) == 2 and np.isnan(boot.replicates[0]) and boot.interval is None


def test_fd_runs_ranking(tmp_path):
    rng = np.random.default_rng(5)
    ids = [f"d{i}" for i in range(400)]
    vectors = rng.normal(size=(400, 8))
    vectors[:100] += 3.0  # d0..d99 are "relevant-looking"
    np.save(tmp_path / "e.npy", vectors)
    (tmp_path / "e.ids").write_text("\n".join(ids))
    source = load_embeddings(tmp_path / "e.npy")
    qrels = {f"q{t}": {f"d{t * 10 + i}": 2 for i in range(10)} for t in range(10)}
    runs = {}
    for quality in range(4):  # more relevant-looking passages -> lower FD, higher nDCG
        run = {}
        for t in range(10):
            good = [f"d{t * 10 + i}" for i in range(quality * 3)]
            bad = [f"d{100 + t * 30 + i}" for i in range(10 - len(good))]
            run[f"q{t}"] = {d: float(20 - r) for r, d in enumerate(good + bad)}
        runs[f"run{quality}"] = run
    report = fd_runs(qrels, runs, source, k=10, n_boot=30)
    fds = [report.runs[f"run{q}"].fd for q in range(4)]
    assert fds == sorted(fds, reverse=True)
    # one orientation for every agreement measure: the measure against -FD, positive = agreement
    assert report.agreement["kendall_tau_b"] == pytest.approx(1.0)
    assert report.agreement["spearman"] == pytest.approx(1.0)
    assert report.agreement["tau_ap"] == pytest.approx(1.0)
    assert "-FD" in report.settings["orientation"] and "positive" in report.settings["orientation"]
    assert report.agreement["kendall_ci_low"] <= report.agreement["kendall_ci_high"]


def test_agreement_is_the_measure_against_minus_fd(tmp_path):
    """Every agreement measure correlates the measure with -FD: τ-b and Spearman equal scipy's on
    (measure, -FD), and τ_AP is positive exactly when they are (one orientation everywhere)."""
    from scipy import stats

    from reljudge.vectors.embedding_source import PrecomputedEmbeddings

    rng = np.random.default_rng(2)
    ids = [f"d{i}" for i in range(300)]
    source = PrecomputedEmbeddings(ids, rng.normal(size=(300, 4)))
    qrels = {f"q{t}": {f"d{t * 5 + i}": 2 for i in range(5)} for t in range(10)}
    runs = {
        f"run{r}": {
            f"q{t}": {f"d{j}": float(-i) for i, j in enumerate(rng.permutation(120)[:10])} for t in range(10)
        }
        for r in range(6)
    }
    report = fd_runs(qrels, runs, source, k=10)
    names = sorted(report.runs)
    human = [report.human_measure[n] for n in names]
    minus_fd = [-report.runs[n].fd for n in names]
    assert report.agreement["kendall_tau_b"] == pytest.approx(stats.kendalltau(human, minus_fd).statistic)
    assert report.agreement["spearman"] == pytest.approx(stats.spearmanr(human, minus_fd).statistic)


def test_embeddings_file_errors(tmp_path):
    from reljudge.errors import InputError

    np.save(tmp_path / "v.npy", np.zeros((3, 2)))
    with pytest.raises(InputError, match="ids file not found"):
        load_embeddings(tmp_path / "v.npy")
    (tmp_path / "v.ids").write_text("a\nb\n")
    with pytest.raises(InputError, match="2 ids for 3 vectors"):
        load_embeddings(tmp_path / "v.npy")


def test_sentence_transformer_missing_extra_names_the_extra():
    try:
        import sentence_transformers  # noqa: F401
    except ImportError:
        from reljudge.vectors.encoders import SentenceTransformerEncoder

        with pytest.raises(MissingExtraError, match=r"reljudge\[embeddings\]"):
            SentenceTransformerEncoder("sentence-transformers/msmarco-distilbert-base-v3")
    else:
        pytest.skip("sentence-transformers is installed; the missing-extra path cannot be exercised")
