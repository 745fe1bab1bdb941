"""Ranking stability of a sweep: each prompt's labels as qrels, the runs ranked under them, and
Kendall τ-b to the human ranking and between prompts.

The synthetic fixture (3 runs, 2 topics, 2 prompts) is small enough to check by hand with P@1:

    human grades  q1: a=3 b=0 c=2    q2: a=0 b=2 c=0
    R1 ranks      q1: a b c          q2: b a c       P@1 = (1 + 1) / 2 = 1.0
    R2 ranks      q1: c a b          q2: a b c       P@1 = (1 + 0) / 2 = 0.5
    R3 ranks      q1: b a c          q2: c a b       P@1 = (0 + 0) / 2 = 0.0

    prompt p1 labels = the human grades binarised at 2 -> R1 > R2 > R3, τ to human = 1
    prompt p2 labels q1: a=1 b=0 c=1, q2: a=1 b=0 c=0
        R1 = (1 + 0) / 2 = 0.5, R2 = (1 + 1) / 2 = 1.0, R3 = (0 + 0) / 2 = 0.0 -> R2 > R1 > R3:
        one discordant pair (R1, R2) of three -> τ = (2 - 1) / 3 = 1/3 to human and to p1.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from _cli import judge
from reljudge.sweep.analysis import (
    Conventions,
    analyze,
    evaluation_depth,
    judged_share,
    prepare_runs,
    ranking_stability,
    system_scores,
)
from reljudge.sweep.labels import CellLabels

HUMAN = {"q1": {"a": 3, "b": 0, "c": 2}, "q2": {"a": 0, "b": 2, "c": 0}}
ORDERS = {
    "R1": {"q1": "abc", "q2": "bac"},
    "R2": {"q1": "cab", "q2": "abc"},
    "R3": {"q1": "bac", "q2": "cab"},
}
P1 = {"q1": {"a": 1, "b": 0, "c": 1}, "q2": {"a": 0, "b": 1, "c": 0}}
P2 = {"q1": {"a": 1, "b": 0, "c": 1}, "q2": {"a": 1, "b": 0, "c": 0}}


def _runs() -> dict[str, dict[str, dict[str, float]]]:
    return {
        name: {q: {d: float(10 - i) for i, d in enumerate(order)} for q, order in topics.items()}
        for name, topics in ORDERS.items()
    }


def _cell(prompt: str, labels: dict[str, dict[str, int]], task: str = "binary") -> CellLabels:
    cell = CellLabels(dataset="toy", model="m", task=task, prompt=prompt, group="g")
    for q, docs in labels.items():
        for d in docs:
            cell.qids.append(q)
            cell.docids.append(d)
    cell.values = np.array([labels[q][d] for q, d in zip(cell.qids, cell.docids, strict=True)], float)
    cell.items = len(cell.qids)
    return cell


def test_hand_checked_tau_with_p_at_1():
    conv = Conventions(ranking_measure="P@1")
    (result,) = ranking_stability([_cell("p1", P1), _cell("p2", P2)], {"toy": HUMAN}, {"toy": _runs()}, conv)
    assert result.systems == 3 and result.prompts == ["p1", "p2"]
    assert result.tau_to_human["p1"] == pytest.approx(1.0)
    assert result.tau_to_human["p2"] == pytest.approx(1 / 3)
    assert result.matrix[0, 1] == result.matrix[1, 0] == pytest.approx(1 / 3)
    assert result.judged == {"p1": 1.0, "p2": 1.0}  # both label every retrieved document
    assert result.human_on_items == {"p1": pytest.approx(1.0), "p2": pytest.approx(1.0)}
    summary = result.summary()
    assert summary["tau_mean"] == pytest.approx((1 + 1 / 3) / 2)
    assert summary["tau_std"] == pytest.approx(math.sqrt(2 * (1 / 3) ** 2))  # ddof=1 over two prompts
    assert summary["tau_between_prompts"] == pytest.approx(1 / 3)
    scores = system_scores(P2, _runs(), "P@1")
    assert scores == {"R1": 0.5, "R2": 1.0, "R3": 0.0}


def test_unlabelled_documents_count_as_non_relevant_and_coverage_is_reported():
    # p3 labelled only q1's a and b: c (relevant to humans) is unjudged, so counts as 0
    p3 = {"q1": {"a": 1, "b": 0}, "q2": {"a": 0, "b": 1, "c": 0}}
    conv = Conventions(ranking_measure="P@1")
    (result,) = ranking_stability([_cell("p3", p3)], {"toy": HUMAN}, {"toy": _runs()}, conv)
    # under p3: R1 = 1.0, R2 = (0 + 0) / 2 = 0, R3 = 0 -> a tie; τ-b against R1 > R2 > R3 is 2/sqrt(6)
    assert system_scores(p3, _runs(), "P@1") == {"R1": 1.0, "R2": 0.0, "R3": 0.0}
    assert result.tau_to_human["p3"] == pytest.approx(2 / math.sqrt(6))
    assert result.judged["p3"] == pytest.approx(5 / 6)  # top-1 documents: R2's q1 (c) is unjudged
    # the human labels of the same five items rank the same way (c unjudged there too)
    assert result.human_on_items["p3"] == pytest.approx(2 / math.sqrt(6))


def test_prompts_that_invert_the_labels_give_negative_tau():
    inverted = {q: {d: 1 - v for d, v in docs.items()} for q, docs in P1.items()}
    (result,) = ranking_stability(
        [_cell("p1", P1), _cell("inv", inverted)], {"toy": HUMAN}, {"toy": _runs()}, Conventions()
    )
    assert result.tau_to_human["p1"] == pytest.approx(1.0)
    assert result.tau_to_human["inv"] < 0


def test_default_measure_is_ndcg_at_10_and_graded_labels_work():
    graded = [_cell("same", HUMAN, task="graded"), _cell("p2", P2, task="graded")]
    (result,) = ranking_stability(graded, {"toy": HUMAN}, {"toy": _runs()}, Conventions())
    assert result.measure == "nDCG@10" and result.task == "graded"
    assert result.tau_to_human["same"] == pytest.approx(1.0)  # the human grades themselves
    assert -1.0 <= result.tau_to_human["p2"] <= 1.0


def test_cutting_runs_to_the_measure_depth_changes_no_value():
    """Ties in score are broken by docid descending (trec_eval), also across the cut."""
    rng = np.random.default_rng(7)
    docs = [f"d{i:02d}" for i in range(40)]
    qrels = {q: {d: int(rng.integers(0, 4)) for d in docs[::2]} for q in ("q1", "q2", "q3")}
    runs = {
        f"r{k}": {q: {d: float(rng.integers(0, 5)) for d in docs} for q in ("q1", "q2", "q3")}
        for k in range(6)
    }
    for measure in ("nDCG@10", "P@5", "AP@10", "R@10", "Success@3"):
        depth = evaluation_depth(measure)
        assert depth is not None
        full = system_scores(qrels, prepare_runs(runs, set(qrels), None), measure)
        cut = system_scores(qrels, prepare_runs(runs, set(qrels), depth), measure)
        assert full == cut, measure
    assert evaluation_depth("AP") is None and evaluation_depth("nDCG") is None
    # ir_measures computes RR@k elsewhere, ordering ties by docid ascending: never cut
    assert evaluation_depth("RR@10") is None
    assert evaluation_depth("nDCG@10") == 10
    cut = prepare_runs({"r": {"q": {"x": 1.0, "y": 1.0, "z": 0.5}}}, {"q"}, 1)
    assert cut == {"r": {"q": {"y": 1.0}}}  # the tie goes to the larger docid, as in trec_eval


def test_judged_share_counts_labelled_top_documents():
    runs = prepare_runs(_runs(), {"q1", "q2"}, 2)
    assert judged_share({"q1": {"a": 1, "b": 0, "c": 1}}, runs) == 1.0  # q2 is not labelled: not counted
    assert judged_share({"q1": {"a": 1}}, runs) == pytest.approx((1 / 2 + 1 / 2 + 1 / 2) / 3)


def _published_dir(root: Path) -> Path:
    """A tiny release in the published layout, with the fixture's two prompts."""
    for prompt, labels in (("0", P1), ("1", P2)):
        folder = root / "judgments" / "m" / "binary"
        folder.mkdir(parents=True, exist_ok=True)
        lines = [f"{q} 0 {d} {v}" for q, docs in labels.items() for d, v in docs.items()]
        (folder / f"m_binary_dl99_{prompt}.txt").write_text("\n".join(lines) + "\n")
    (root / "qrels.txt").write_text(
        "".join(f"{q} 0 {d} {g}\n" for q, docs in HUMAN.items() for d, g in docs.items())
    )
    runs = root / "runs"
    runs.mkdir()
    for name, topics in ORDERS.items():
        (runs / f"{name}.run").write_text(
            "".join(
                f"{q} Q0 {d} {i + 1} {10 - i} {name}\n"
                for q, order in topics.items()
                for i, d in enumerate(order)
            )
        )
    return root / "judgments"


def test_cli_from_published_layout_with_runs_writes_the_tau_table(tmp_path):
    release = _published_dir(tmp_path)
    result = judge(
        "sweep",
        "--from-judgments",
        str(release),
        "--qrels",
        f"dl99={tmp_path / 'qrels.txt'}",
        "--runs",
        f"dl99={tmp_path / 'runs'}",
        "--out",
        str(tmp_path / "out"),
        "--no-plots",
    )
    assert result.returncode == 0, result.output
    (entry,) = json.loads((tmp_path / "out" / "ranking.json").read_text())
    assert entry["systems"] == 3 and entry["measure"] == "nDCG@10"
    assert entry["tau_to_human"]["0"] == pytest.approx(1.0)
    assert set(entry) >= {"tau_mean", "tau_std", "tau_between_prompts", "judged", "tau_matrix"}
    assert "mean τ to human" in result.output
    report = (tmp_path / "out" / "report.md").read_text()
    assert "Stability of the system ranking" in report and "non-relevant" in report


def test_analyze_without_runs_has_no_ranking():
    analysis = analyze([_cell("p1", P1)], {"toy": HUMAN})
    assert analysis.rankings == []


# --- on the shared data: the published DL21 judgments and the TREC DL 2021 runs -------------------


@pytest.fixture(scope="module")
def dl21(shared_data: Path):
    shared = shared_data
    tarball = shared / "prompt-sensitivity" / "judgments.tar.gz"
    if not tarball.is_file() or not (shared / "trec-dl21" / "runs").is_dir():
        pytest.skip(f"{shared} (prompt-sensitivity judgments, trec-dl21 runs) is not available")
    from reljudge.io.trec import read_qrels, read_run
    from reljudge.sweep.published import read_published

    cells, _ = read_published(tarball, datasets={"dl21"})
    keep = {("mistral", "binary", "0"), ("mistral", "binary", "10"), ("mistral", "graded", "0")}
    keep |= {("gpt-4o", "graded", "0"), ("gpt-4o", "graded", "16")}
    cells = [c for c in cells if (c.model, c.task, c.prompt) in keep]
    files = sorted((shared / "trec-dl21" / "runs").iterdir())[::3]  # 21 of the 63 runs
    runs = {f.name: read_run(f) for f in files}
    return cells, read_qrels(shared / "trec-dl21" / "qrels.txt"), runs


@pytest.mark.shared
@pytest.mark.slow
def test_shared_dl21_subset_tau_is_sensible_and_matches_an_independent_computation(dl21):
    from scipy.stats import kendalltau

    from reljudge.metrics.measures import mean_measure

    cells, qrels, runs = dl21
    results = {
        (r.model, r.task): r for r in ranking_stability(cells, {"dl21": qrels}, {"dl21": runs}, Conventions())
    }
    assert set(results) == {("mistral", "binary"), ("mistral", "graded"), ("gpt-4o", "graded")}
    binary = results[("mistral", "binary")]
    assert binary.systems == len(runs)
    assert binary.tau_to_human["0"] > 0.6  # a working prompt ranks the systems much like humans
    assert binary.tau_to_human["10"] < -0.5  # prompt 10 asks for 0 = relevant: the ranking flips
    assert results[("mistral", "graded")].tau_to_human["0"] > 0.6
    assert binary.judged["0"] > 0.95  # mistral labelled every judged pair
    gpt = results[("gpt-4o", "graded")]
    assert gpt.judged["0"] < 0.5  # gpt-4o labelled the stratified sample only
    assert gpt.human_on_items["0"] < 0.97  # so even human labels of those items lose some τ
    # independently: full (uncut) runs, one ir_measures call per run, scipy's τ-b
    cell = next(c for c in cells if (c.model, c.task, c.prompt) == ("mistral", "graded", "0"))
    labels = {q: {d: int(v) for d, v in docs.items()} for q, docs in cell.scores.items() if q in qrels}
    names = sorted(runs)
    human = [mean_measure(qrels, runs[n], "nDCG@10") for n in names]
    llm = [mean_measure(labels, runs[n], "nDCG@10") for n in names]
    expected = kendalltau([round(v, 12) for v in human], [round(v, 12) for v in llm]).statistic
    assert results[("mistral", "graded")].tau_to_human["0"] == pytest.approx(expected, abs=1e-12)
