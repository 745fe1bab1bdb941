"""System-level metrics: Clarke's RBO and compatibility, ranking agreement, trec measures."""

from __future__ import annotations

import numpy as np
import pytest

from reljudge.metrics import (
    Compatibility,
    bootstrap_ranking_agreement,
    compatibility,
    ideal_ranking,
    kendall_tau_b_batch,
    mean_measure,
    per_topic_measure,
    ranking_agreement,
    rbo_clarke,
    self_rbo,
    tau_ap,
    topic_compatibility,
)


def test_self_rbo_reference_values():
    # thesis-reference-code.md §3: p=0.9 -> 0.256 (|I|=1), 0.523 (3), 0.856 (10), 0.9992 (50)
    assert self_rbo(1, 0.9) == pytest.approx(0.2558, abs=1e-4)
    assert self_rbo(3, 0.9) == pytest.approx(0.523, abs=1e-3)
    assert self_rbo(10, 0.9) == pytest.approx(0.856, abs=1e-3)
    assert self_rbo(50, 0.9) == pytest.approx(0.9992, abs=1e-4)
    assert rbo_clarke(list("abc"), list("abc"), 0.9) == pytest.approx(self_rbo(3, 0.9))


def test_rbo_reference_examples():
    # thesis-reference-code.md §4: S=[1..8,0,9], T=[1..8,9,0] -> Clarke's RBO 0.8508
    s = [str(x) for x in [1, 2, 3, 4, 5, 6, 7, 8, 0, 9]]
    t = [str(x) for x in [1, 2, 3, 4, 5, 6, 7, 8, 9, 0]]
    assert rbo_clarke(s, t, 0.9) == pytest.approx(0.8508, abs=1e-4)
    # uneven lists 'abcdefg' vs 'abc': 0.5225, normalised by the ideal's self-RBO: 1.0
    assert rbo_clarke(list("abcdefg"), list("abc"), 0.9) == pytest.approx(0.5225, abs=1e-4)
    assert topic_compatibility(list("abcdefg"), {"a": 1, "b": 1, "c": 1}) == pytest.approx(1.0)


def test_rbo_package_semantics_differ():
    import rbo

    s = [1, 2, 3, 4, 5, 6, 7, 8, 0, 9]
    t = [1, 2, 3, 4, 5, 6, 7, 8, 9, 0]
    assert rbo.RankingSimilarity(s, t).rbo(p=0.9) == pytest.approx(0.6465, abs=1e-4)
    assert rbo.RankingSimilarity(s, t).rbo_ext(p=0.9) == pytest.approx(0.9952, abs=1e-4)


def test_ideal_ranking_ties_follow_run_then_judgment_order():
    judged = {"x": 2, "y": 2, "z": 2, "w": 3, "n": 0, "u": 1}
    assert ideal_ranking(["z", "q", "y"], judged) == ["w", "z", "y", "x", "u"]


def test_fast_compatibility_equals_explicit_construction():
    rng = np.random.default_rng(3)
    for _ in range(30):
        docs = [f"d{i}" for i in range(60)]
        judged = {d: float(rng.choice([0, 0, 1, 2, 3, 0.5])) for d in rng.choice(docs, 40, replace=False)}
        run = {d: float(rng.integers(0, 20)) for d in rng.choice(docs, 30, replace=False)}
        result = compatibility({"q": run}, {"q": judged}, p=0.8, depth=25)
        from reljudge.metrics.compatibility import run_order

        explicit = topic_compatibility(run_order(run), judged, p=0.8, depth=25)
        if explicit is None:
            assert result.per_topic == {}
        else:
            assert result.per_topic["q"] == pytest.approx(explicit, abs=1e-12)


def test_compatibility_topics_and_tie_break():
    run = {"q1": {"a": 1.0, "b": 1.0}, "q2": {"a": 1.0}, "q3": {"c": 2.0}}
    judged = {"q1": {"b": 1}, "q2": {"a": 0}}
    res = compatibility(run, judged)
    assert set(res.per_topic) == {"q1"}  # q2 has no positive judgment, q3 none at all
    # Clarke: ties by docid ascending -> a, b ; trec_eval: b, a (b at rank 1 -> perfect)
    assert compatibility(run, judged, tie_break="trec_eval").per_topic["q1"] == pytest.approx(1.0)
    assert res.per_topic["q1"] < 1.0
    assert Compatibility(judged).topics == ["q1"]
    with pytest.raises(ValueError):
        compatibility(run, judged, p=1.0)


def test_kendall_batch_matches_scipy_and_tau_ap():
    from scipy.stats import kendalltau

    rng = np.random.default_rng(0)
    x = rng.integers(0, 5, (12, 20)).astype(float)
    y = x + rng.normal(0, 1.5, x.shape)
    y[3] = y[4]  # ties in y
    batch = kendall_tau_b_batch(x, y)
    for b in range(20):
        assert batch[b] == pytest.approx(kendalltau(x[:, b], y[:, b]).statistic, abs=1e-12)
    assert tau_ap([3, 2, 1], [3, 2, 1]) == pytest.approx(1.0)
    assert tau_ap([3, 2, 1], [1, 2, 3]) == pytest.approx(-1.0)
    # one swap at the top costs more than one at the bottom
    assert tau_ap([4, 3, 2, 1], [3, 4, 2, 1]) < tau_ap([4, 3, 2, 1], [4, 3, 1, 2])


def test_fd_paper_table_kendall_values():
    # evaluation-methods.md §4.8: Table 3.5 with the stated tie-breaks reproduces Table 3.8
    mrr = [0.187, 0.242, 0.276, 0.297, 0.330, 0.333, 0.335, 0.344, 0.351, 0.368, 0.353, 0.368]
    fd10 = [4.410, 2.354, 2.050, 1.223, 0.995, 1.008, 0.980, 0.982, 0.980, 0.964, 0.973, 0.998]
    names = [str(i) for i in range(12)]
    mrr = list(mrr)
    fd10 = list(fd10)
    mrr[9] += 1e-4  # SPLADE > ColBERTv2-H
    fd10[6] += 1e-4  # ColBERT > UniCOIL
    tau = ranking_agreement(
        dict(zip(names, mrr, strict=True)), dict(zip(names, fd10, strict=True)), "kendall"
    )
    assert round(tau, 3) == -0.788


def test_ranking_agreement_methods_and_bootstrap():
    x = {f"s{i}": float(i) for i in range(10)}
    y = {f"s{i}": float(i) + (0.5 if i == 3 else 0.0) for i in range(10)}
    assert ranking_agreement(x, x, "kendall") == pytest.approx(1.0)
    assert ranking_agreement(x, x, "spearman") == pytest.approx(1.0)
    assert ranking_agreement(x, x, "rbo") == pytest.approx(1.0)
    assert ranking_agreement(x, {k: -v for k, v in x.items()}, "kendall") == pytest.approx(-1.0)
    with pytest.raises(ValueError):
        ranking_agreement(x, y, "cosine")  # type: ignore[arg-type]
    rng = np.random.default_rng(2)
    per_x = {s: {f"t{t}": v + rng.normal(0, 2) for t in range(30)} for s, v in x.items()}
    per_y = {s: {t: v + rng.normal(0, 1) for t, v in topics.items()} for s, topics in per_x.items()}
    iv = bootstrap_ranking_agreement(per_x, per_y, n_boot=200, seed=1)
    assert -1 <= iv.low <= iv.high <= 1 and iv.n_boot == 200
    assert iv == bootstrap_ranking_agreement(per_x, per_y, n_boot=200, seed=1)


def test_trec_measure_conventions():
    qrels = {"q": {"a": 2, "b": 0, "c": 1}}
    # ties by docid descending (trec_eval): c before a
    run = {"q": {"a": 1.0, "c": 1.0, "b": 2.0}}
    import math

    ideal = 2 / math.log2(2) + 1 / math.log2(3)
    got = (0 + 1 / math.log2(3) + 2 / math.log2(4)) / ideal  # gains = grades, order b, c, a
    assert per_topic_measure(qrels, run, "ndcg_cut_10")["q"] == pytest.approx(got)
    assert mean_measure(qrels, run, "nDCG@10") == pytest.approx(got)
