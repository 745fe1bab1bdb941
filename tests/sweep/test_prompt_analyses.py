"""Prompt analyses of a sweep (spec S9, issue 16): lexical diversity, α within and across prompt
groups, cross-model robustness, the per-prompt bar charts; on small synthetic inputs."""

from __future__ import annotations

import json
import math
import tarfile

import numpy as np
import pytest

from _cli import judge
from reljudge.metrics.agreement import krippendorff_alpha
from reljudge.sweep.analysis import Conventions, analyze, model_robustness
from reljudge.sweep.analysis.alpha import _pairwise_matrix
from reljudge.sweep.analysis.prompt_text import prompt_diversity, terms
from reljudge.sweep.labels import CellLabels


def test_terms_drop_placeholders_and_case():
    assert terms("Query: {query}\nIs {document} RELEVANT? Don't say 2.") == [
        "query",
        "is",
        "relevant",
        "don't",
        "say",
        "2",
    ]


def test_prompt_diversity_by_group_and_message():
    collection = {
        "0": {"binary": {"system": "You judge.", "user": "Query {query} passage {document} relevant?"}},
        "1": {"binary": {"system": "You judge passages carefully.", "user": "{query} {document} yes or no"}},
        "16": {
            "binary": {"system": "You judge.", "user": "Relevant? {query} {document}"},
            "graded": "broken",
        },
        "4": {"binary": {"system": "excluded prompt", "user": "x"}},
    }
    rows, summary = prompt_diversity(collection, lambda p: "human" if int(p) < 16 else "llm", exclude={"4"})
    got = {(r["prompt"], r["message"]): r["unique_terms"] for r in rows}
    assert got == {("0", "system"): 2, ("0", "user"): 3, ("1", "system"): 4, ("1", "user"): 3} | {
        ("16", "system"): 2,
        ("16", "user"): 1,
    }
    s = {(x["group"], x["message"]): x for x in summary}
    assert (
        s[("human", "system")]["mean"] == 3 and s[("human", "system")]["vocabulary"] == 4
    )  # you judge passages carefully
    assert s[("human", "user")]["vocabulary"] == 6  # query passage relevant yes or no
    assert s[("llm", "user")]["texts"] == 1


def test_pairwise_alpha_matrix_equals_krippendorff_on_each_pair():
    rng = np.random.default_rng(7)
    for level in ("nominal", "ordinal", "interval"):
        for _ in range(20):
            data = rng.integers(0, 4, size=(4, 30)).astype(float)
            data[rng.random(data.shape) < 0.3] = np.nan
            present = ~np.isnan(data)
            matrix = _pairwise_matrix(data, present, level)
            for i in range(4):
                for j in range(i + 1, 4):
                    both = present[i] & present[j]
                    ref = krippendorff_alpha(data[[i, j]][:, both], level=level) if both.any() else math.nan
                    assert matrix[i, j] == pytest.approx(ref, abs=1e-12, nan_ok=True)


def _cell(prompt: str, group: str, labels: list[int], model: str = "m") -> CellLabels:
    return CellLabels(
        dataset="d",
        model=model,
        task="binary",
        prompt=prompt,
        group=group,
        qids=["1"] * len(labels),
        docids=[f"x{i}" for i in range(len(labels))],
        values=np.array(labels, dtype=float),
        items=len(labels),
    )


def test_alpha_within_and_across_groups():
    a = [1, 0, 1, 0, 1, 1, 0, 0]
    b = [1, 0, 1, 0, 0, 1, 0, 1]
    cells = [_cell("0", "human", a), _cell("1", "human", a), _cell("16", "llm", b), _cell("17", "llm", b)]
    qrels = {"d": {"1": {f"x{i}": 2 * v for i, v in enumerate(a)}}}
    (result,) = analyze(cells, qrels, Conventions()).alphas
    assert result.by_group == {"human": pytest.approx(1.0), "llm": pytest.approx(1.0)}
    across = krippendorff_alpha(np.array([a, b], dtype=float), level="nominal")
    assert result.pairwise_mean["human"] == pytest.approx(1.0)
    assert result.pairwise_mean["human|llm"] == pytest.approx(across)
    assert result.overall < 1.0


def test_model_robustness_tau_rho_and_top_third():
    from scipy import stats

    rows = []
    values = {
        "a": [0.1, 0.2, 0.3, 0.4, 0.5, 0.6],
        "b": [0.2, 0.1, 0.3, 0.4, 0.6, 0.5],
        "c": [0.6, 0.5, 0.4, 0.3, 0.2, 0.1],
    }
    for model, vals in values.items():
        for p, v in enumerate(vals):
            rows.append(
                {
                    "dataset": "d",
                    "task": "binary",
                    "model": model,
                    "prompt": str(p),
                    "group": "human",
                    "value": v,
                }
            )
    pairs, top = model_robustness(rows)
    got = {(r["model_a"], r["model_b"]): r for r in pairs}
    assert got[("a", "b")]["kendall_tau"] == pytest.approx(
        stats.kendalltau(values["a"], values["b"]).statistic
    )
    assert got[("a", "b")]["spearman_rho"] == pytest.approx(
        stats.spearmanr(values["a"], values["b"]).statistic
    )
    assert got[("a", "c")]["kendall_tau"] == pytest.approx(-1.0)
    assert top == [{"dataset": "d", "task": "binary", "models": 3, "top_third_for_every_model": ""}]
    pairs, top = model_robustness([r for r in rows if r["model"] != "c"])
    assert top[0]["top_third_for_every_model"] == "4 5"


@pytest.mark.slow
def test_published_analysis_writes_prompt_analyses_and_bar_charts(tmp_path):
    pytest.importorskip("matplotlib")
    root = tmp_path / "rel"
    labels = {
        "0": "1 0 a 1\n1 0 b 0\n",
        "1": "1 0 a 1\n1 0 b 1\n",
        "16": "1 0 a 0\n1 0 b 0\n",
        "17": "1 0 a 1\n1 0 b 0\n",
    }
    for model in ("m1", "m2"):
        for pid, text in labels.items():
            f = root / model / "binary" / f"{model}_binary_dl20_{pid}.txt"
            f.parent.mkdir(parents=True, exist_ok=True)
            f.write_text(text)
    tar = tmp_path / "judgments.tar.gz"
    with tarfile.open(tar, "w:gz") as t:
        t.add(root, arcname=".")
    prompts = {
        pid: {
            "participant_name": ("human-" if int(pid) < 16 else "LLM-") + pid,
            "binary": {"system": "s t", "user": "u {query} {document}"},
        }
        for pid in labels
    }
    (tmp_path / "prompts.json").write_text(json.dumps(prompts))
    (tmp_path / "q.txt").write_text("1 0 a 3\n1 0 b 0\n")
    out = tmp_path / "out"
    res = judge(
        "sweep", "--from-judgments", str(tar), "--qrels", f"dl20={tmp_path / 'q.txt'}", "--out", str(out)
    )
    assert res.returncode == 0, res.output
    for name in (
        "alpha.csv",
        "robustness.csv",
        "top_prompts.csv",
        "prompt_diversity.csv",
        "prompt_diversity_summary.csv",
    ):
        assert (out / name).read_text().strip(), name
    assert (out / "plots" / "bars_binary.png").stat().st_size > 1000
    assert (out / "plots" / "prompt_diversity.png").exists()
    report = (out / "report.md").read_text()
    assert (
        "within and across groups" in report
        and "cross-model robustness" in report
        and "bars_binary.png" in report
    )
