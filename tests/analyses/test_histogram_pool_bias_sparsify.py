"""DO/HSA, simulated pooling bias and sparsified qrels, tested from their definitions
(`reljudge.analyses.histogram.do_hsa`, `reljudge.analyses.pool_bias.simulation`,
`reljudge.analyses.sparsify.sparse_qrels`) and the p-values of ranking agreement."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from reljudge.analyses.histogram.do_hsa import (
    distributional_overlap,
    do_hsa,
    do_hsa_runs,
    histogram_slope,
    histograms,
    run_values,
)
from reljudge.analyses.pool_bias.simulation import (
    check_run_info,
    depth_pool,
    estimated_values,
    ranked_lists,
    restrict_qrels,
    simulate,
    split_with_groups,
)
from reljudge.analyses.sparsify.sparse_qrels import sparsified_agreement, sparsify_qrels
from reljudge.errors import InputError
from reljudge.metrics.ranking import agreement_test, ranking_agreement, ranking_agreement_test

# --- DO / HSA ---------------------------------------------------------------------------------


def test_do_of_disjoint_histograms_is_zero_and_hsa_undefined():
    h = do_hsa([0.85, 0.9, 0.95, 1.0], [0.0, 0.05, 0.1, 0.12], bins=10)
    assert h.do == 0.0
    assert h.n_supported == 0
    assert math.isnan(h.hsa)


def test_do_and_hsa_by_hand():
    # 2 bins: relevant [1, 3], non-relevant [4, 1] -> DO = ln 1 + ln 1 = 0; slope of ln(1/4), ln(3/1)
    h = histograms([0.1, 0.6, 0.7, 0.8], [0.1, 0.2, 0.3, 0.4, 0.9], bins=2)
    assert h.relevant.tolist() == [1, 3] and h.nonrelevant.tolist() == [4, 1]
    assert distributional_overlap(h) == pytest.approx(0.0)
    beta, _ = histogram_slope(h)
    assert beta == pytest.approx((math.log(3) - math.log(0.25)) / 0.5)
    h2 = histograms([0.1, 0.1, 0.6], [0.1, 0.1, 0.1, 0.6, 0.6], bins=2)
    assert distributional_overlap(h2) == pytest.approx(math.log(2) + math.log(1))


def test_last_bin_is_closed_and_values_outside_are_refused():
    assert histograms([1.0], [0.0], bins=4).relevant.tolist() == [0, 0, 0, 1]
    with pytest.raises(ValueError):
        histograms([1.2], [0.0])


def _clipped(rng, mean, sd, n):
    return np.clip(rng.normal(mean, sd, n), 0, 1)


def test_separated_scores_have_larger_hsa_and_smaller_do_than_overlapping():
    rng = np.random.default_rng(1)
    separated = do_hsa(_clipped(rng, 0.7, 0.15, 400), _clipped(rng, 0.3, 0.15, 4000))
    overlapping = do_hsa(_clipped(rng, 0.52, 0.15, 400), _clipped(rng, 0.48, 0.15, 4000))
    assert separated.hsa > overlapping.hsa
    assert separated.do < overlapping.do


def test_monotone_transform_within_bins_changes_neither():
    rng = np.random.default_rng(2)
    r, nr = rng.random(300), rng.random(900)
    bins = 20

    def squeeze(v):  # monotone inside each bin: the position within the bin is squared
        lo = np.minimum(np.floor(v * bins), bins - 1) / bins
        return lo + ((v - lo) * bins) ** 2 / bins

    a, b = do_hsa(r, nr, bins), do_hsa(squeeze(r), squeeze(nr), bins)
    assert (a.do, a.hsa) == (pytest.approx(b.do), pytest.approx(b.hsa))


def test_log_base_scales_hsa_only():
    rng = np.random.default_rng(3)
    h = histograms(_clipped(rng, 0.7, 0.2, 300), _clipped(rng, 0.4, 0.2, 900))
    beta, _ = histogram_slope(h)
    s = h.supported
    log2_slope = np.polyfit(h.centres[s], np.log2(h.relevant[s] / h.nonrelevant[s]), 1)[0]
    assert log2_slope == pytest.approx(beta / math.log(2))


QRELS = {"q1": {"a": 2, "b": 0, "c": 3, "x": 1}, "q2": {"d": 2, "e": 0}, "q3": {"f": 0}}
RUN = {"q1": {"a": 3.0, "b": 2.0, "u": 1.5, "c": 1.0, "x": 0.5}, "q2": {"e": 2.0, "d": 1.0}, "q3": {"f": 1.0}}


def test_rank_values_and_non_relevant_sets():
    r, nr, used = run_values(QRELS, RUN, nonrel="judged")
    assert used == ["q1", "q2"]  # q3 has no relevant judgment: skipped
    assert sorted(r) == [0.0, 0.25, 1.0]  # a rank 1 of 5, c rank 4 of 5 (0.25), d rank 2 of 2 (0.0)
    assert sorted(nr) == [0.0, 0.75, 1.0]  # x (judged 1 < 2), b (judged 0), e (rank 1 of 2)
    assert run_values(QRELS, RUN, nonrel="unjudged")[1] == [0.5]  # u
    assert len(run_values(QRELS, RUN, nonrel="all")[1]) == 4
    assert len(run_values(QRELS, RUN, nonrel="sample:1")[1]) == 2  # one per topic
    with pytest.raises(InputError, match="sample:M"):
        run_values(QRELS, RUN, nonrel="sample:x")


def test_score_values_are_min_max_normalised():
    r, nr, _ = run_values(QRELS, RUN, values="score", nonrel="all")
    assert min(r + nr) == 0.0 and max(r + nr) == 1.0


def test_do_hsa_runs_states_topics_without_relevant_documents_and_nan_correlations():
    runs = {"s1": RUN, "s2": {"q1": {"c": 1.0, "a": 0.5, "b": 0.2}, "q2": {"d": 1.0, "e": 0.5}}}
    report = do_hsa_runs(QRELS, runs, measures=["nDCG@10"], bins=4)
    assert report.settings["topics_without_relevant"] == ["q3"]
    assert set(report.systems) == {"s1", "s2"}
    assert all(math.isnan(c["spearman"]) for c in report.correlations)  # two systems: stated NaN


# --- ranking agreement with p-values ----------------------------------------------------------


def test_pearson_and_p_values_match_scipy_and_leave_statistics_unchanged():
    x = {f"s{i}": v for i, v in enumerate([0.1, 0.4, 0.35, 0.8, 0.5, 0.9])}
    y = {f"s{i}": v for i, v in enumerate([0.2, 0.3, 0.5, 0.7, 0.4, 1.0])}
    a, b = np.array(list(x.values())), np.array(list(y.values()))
    for method, test in (
        ("kendall", stats.kendalltau),
        ("spearman", stats.spearmanr),
        ("pearson", stats.pearsonr),
    ):
        value, p = ranking_agreement_test(x, y, method)
        expected = test(a, b)
        assert value == pytest.approx(expected.statistic) and p == pytest.approx(expected.pvalue)
        assert ranking_agreement(x, y, method) == pytest.approx(value)
    assert math.isnan(agreement_test(a, b, "tau_ap")[1])
    assert all(math.isnan(v) for v in agreement_test(a, np.ones(6), "pearson"))


# --- simulated pooling --------------------------------------------------------------------------


def _collection(n_topics=8):
    """Type A runs retrieve the 'a' documents first, type B runs the 'b' documents; both kinds are
    relevant, so a pool without B misses what B finds."""
    rng = np.random.default_rng(0)
    qrels, runs, info = {}, {}, {}
    for q in range(n_topics):
        qid = f"q{q}"
        qrels[qid] = (
            {f"a{i}": 2 for i in range(6)} | {f"b{i}": 2 for i in range(6)} | {f"n{i}": 0 for i in range(6)}
        )
    for kind in ("A", "B"):
        for g in range(3):
            for v in range(2):
                name = f"{kind}{g}{v}"
                info[name] = (f"{kind}g{g}", kind)
                run = {}
                for q in range(n_topics):
                    own = [f"{kind.lower()}{i}" for i in rng.permutation(6)[: 3 + v + g % 2]]
                    noise = [f"n{i}" for i in rng.permutation(6)[:4]] + [f"u{q}{i}" for i in range(3)]
                    order = own + noise
                    rng.shuffle(order)
                    run[f"q{q}"] = {d: float(20 - i) for i, d in enumerate(order)}
                runs[name] = run
    return qrels, runs, info


def test_a_pool_of_all_runs_reproduces_the_actual_values():
    qrels, runs, info = _collection()
    ranked = {n: ranked_lists(r) for n, r in runs.items()}
    measures = ["nDCG@10", "RR(rel=2)@10"]
    report = simulate(qrels, runs, info, measures=measures, reps=1, depth=5)
    estimated = estimated_values(qrels, ranked, runs, list(runs), measures, depth=5)
    for m in measures:
        assert estimated[m] == report.actual[m]
        assert ranking_agreement(report.actual[m], estimated[m]) == pytest.approx(1.0)
    # the pool is the union of the runs' top-depth documents in trec_eval order
    pool = depth_pool(ranked, 2, ["A00"])
    assert all(len(docs) == 2 for docs in pool.values())
    assert restrict_qrels({"q0": {"zz": 2}}, pool) == {}


def test_an_unpooled_type_is_under_estimated():
    qrels, runs, info = _collection()
    report = simulate(qrels, runs, info, measures=["nDCG@10"], reps=4, depth=5)
    err = {(r["pool_type"], r["test"]): r["signed_error_mean"] for r in report.summary}
    assert err[("A", "B")] < 0 and err[("B", "A")] < 0
    assert err[("A", "B")] < err[("A", "A")]  # the type that contributed nothing loses most
    assert err[("B", "A")] < err[("B", "B")]
    found = report.relevant_found
    depth = max(len(d) for r in runs.values() for d in r.values())
    assert len(found["A"]) == depth and found["A"] == sorted(found["A"]) and found["A"][-1] > 0


def test_split_keeps_groups_together_and_pools_at_least_half():
    _, runs, info = _collection()
    for seed in range(5):
        pooled = split_with_groups(list(runs), info, "A", np.random.default_rng(seed))
        assert len(pooled) >= 3 and all(info[r][1] == "A" for r in pooled)
        groups = {info[r][0] for r in pooled}
        assert set(pooled) == {r for r in runs if info[r][0] in groups}


def test_run_type_problems_are_clear_errors_and_few_test_runs_nan():
    qrels, runs, info = _collection()
    partial = {k: v for k, v in info.items() if k != "B00"}
    with pytest.raises(InputError, match="missing from the run-type file: B00"):
        check_run_info(list(runs), partial)
    lonely = dict(info) | {"B00": ("x", "C")}
    with pytest.raises(InputError, match="type 'C' has 1 run"):
        check_run_info(list(runs), lonely)
    with pytest.raises(InputError, match="only one type"):
        check_run_info(list(runs), {k: (g, "A") for k, (g, _) in info.items()})
    small = {k: runs[k] for k in ("A00", "A01", "B00", "B01")}
    report = simulate(qrels, small, info, measures=["nDCG@10"], reps=2)
    assert all(math.isnan(r["tau"]) for r in report.repetitions)  # at most 3 test runs, 1-2 per type
    assert all(r["reps_with_tau"] == 0 for r in report.summary if r["test"] != "all")


# --- sparsified qrels -----------------------------------------------------------------------------


def test_sparsified_qrels_pick_highest_grade_first_and_keep_conventions():
    qrels = {"q": {"a": 3, "b": 2, "c": 2, "d": 1, "e": 0}, "none": {"z": 0}}
    q1 = sparsify_qrels(qrels, 1)
    assert q1 == {"q": {"a": 3}}
    q2 = sparsify_qrels(qrels, 2, keep="nonrelevant")
    assert q2["q"]["a"] == 3 and len([d for d, g in q2["q"].items() if g >= 2]) == 2
    assert {"d", "e"} <= set(q2["q"]) and q2["none"] == {"z": 0}
    with pytest.raises(InputError, match="--keep"):
        sparsify_qrels(qrels, 1, keep="all")


def test_sparsified_with_n_at_least_the_relevant_count_equals_the_original_ranking():
    qrels, runs, _ = _collection()
    report = sparsified_agreement(qrels, runs, ns=[12, 50], keep="nonrelevant", repeats=2)
    assert all(r["tau"] == 1.0 for r in report.repetitions)
    binary = {q: {d: g for d, g in docs.items()} for q, docs in qrels.items()}  # grades 0 and 2 only
    report = sparsified_agreement(binary, runs, ns=[12], keep="none")
    assert report.summary[0]["tau_mean"] == 1.0


def test_sparsify_needs_three_runs():
    qrels, runs, _ = _collection()
    with pytest.raises(InputError, match="at least three runs"):
        sparsified_agreement(qrels, {k: runs[k] for k in ("A00", "B00")})


@pytest.mark.shared
@pytest.mark.slow
def test_dl21_hsa_agrees_with_ndcg(shared_data):
    from reljudge.io.trec import read_qrels, read_runs_dir

    dl21 = shared_data / "trec-dl21"
    report = do_hsa_runs(read_qrels(dl21 / "qrels.txt"), read_runs_dir(dl21 / "runs"), measures=["nDCG@10"])
    row = next(c for c in report.correlations if c["metric"] == "HSA")
    assert row["systems"] == 63 and row["spearman"] > 0.4 and row["spearman_p"] < 0.01


def test_cut_runs_leave_cutoff_measures_unchanged_also_with_tied_scores():
    from reljudge.metrics.measures import cut_runs, system_measures

    qrels, runs, _ = _collection()
    tied = {
        name: {q: {d: float(round(s / 4)) for d, s in docs.items()} for q, docs in run.items()}
        for name, run in runs.items()
    }
    for measures in (["nDCG@5", "RR(rel=2)@3"], ["P(rel=2)@2"]):
        cut = cut_runs(tied, measures)
        assert sum(len(d) for r in cut.values() for d in r.values()) < sum(
            len(d) for r in tied.values() for d in r.values()
        )
        for m in measures:
            assert system_measures(qrels, cut, m) == system_measures(qrels, tied, m)
    assert cut_runs(tied, ["nDCG@10", "AP(rel=2)"]) is tied  # AP looks at the whole list


def test_cut_runs_keep_what_trec_eval_sees_when_scores_tie_only_in_float32():
    import pytrec_eval

    from reljudge.metrics.measures import cut_runs, system_measures, trec_eval_order

    # d10 and d11 tie in float32 (trec_eval's precision) but not in float64: trec_eval puts the
    # greater docid, d11 (relevant), 10th, while a cut at the 10th float64 score dropped it
    low = 0.3
    assert np.float32(np.nextafter(low, 0.0)) == np.float32(low) and np.nextafter(low, 0.0) < low
    docs = {f"d0{i}": 1.0 - i / 20 for i in range(1, 10)}
    docs |= {"d10": low, "d11": float(np.nextafter(low, 0.0)), "d12": 0.1, "d13": 0.05}
    qrels = {"q1": {"d11": 2, "d01": 1, "d12": 3}}
    runs = {"r": {"q1": docs}}
    assert trec_eval_order(docs)[9:11] == ["d11", "d10"]
    cut = cut_runs(runs, ["nDCG@10", "P@10", "RR@10"])
    assert set(cut["r"]["q1"]) == set(docs) - {"d12", "d13"}
    reference = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut_10", "P_10"}).evaluate(runs["r"])["q1"]
    for m, key in (("nDCG@10", "ndcg_cut_10"), ("P@10", "P_10")):
        assert system_measures(qrels, cut, m) == system_measures(qrels, runs, m), m
        assert system_measures(qrels, cut, m)["r"]["q1"] == pytest.approx(reference[key], abs=1e-15), m
    assert system_measures(qrels, cut, "P@10")["r"]["q1"] == pytest.approx(0.2)  # d01 and d11
    assert system_measures(qrels, cut, "RR@10") == system_measures(qrels, runs, "RR@10")
