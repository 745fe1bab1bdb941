"""The conventions of the sweep analysis as options (issue 16): prompts excluded, datasets pooled,
population or sample variance, the binary threshold, invalid labels dropped or kept as a category,
and the preset ``thesis-table-4.5`` — each on a small synthetic release, plus the published check."""

from __future__ import annotations

import csv
import tarfile
from pathlib import Path

import numpy as np
import pytest

from _cli import judge
from reljudge.errors import InputError
from reljudge.sweep.analysis import Conventions, analyze
from reljudge.sweep.analysis.presets import PRESETS, conventions_with
from reljudge.sweep.published import read_published

# human grades of the one topic: a=3, b=2, c=1, d=0 (both datasets)
QRELS = "1 0 a 3\n1 0 b 2\n1 0 c 1\n1 0 d 0\n"
BINARY = {
    "0": "1 0 a 1\n1 0 b 1\n1 0 c 1\n1 0 d 0\n",  # agrees perfectly at human >= 1, kappa 0.5 at >= 2
    "1": "1 0 a 1\n1 0 b 9\n1 0 c 1\n1 0 d 0\n",  # b invalid
    "7": "1 0 a 1\n1 0 b 0\n1 0 c 0\n1 0 d 0\n",
    "16": "1 0 a 0\n1 0 b 0\n1 0 c 0\n1 0 d 1\n",
    "17": "1 0 a 1\n1 0 b 1\n1 0 c 0\n1 0 d 0\n",
}
PAIRWISE = {
    "0": "1 low_top a d agree\n1 mid_top a b maybe\n",  # one invalid outcome
    "17": "1 low_top a d agree\n1 mid_top a b disagree\n",
}


def release(tmp_path: Path) -> tuple[Path, dict[str, Path]]:
    root = tmp_path / "rel"
    for ds in ("dl20", "dl21"):
        for pid, text in BINARY.items():
            f = root / "m" / "binary" / f"m_binary_{ds}_{pid}.txt"
            f.parent.mkdir(parents=True, exist_ok=True)
            f.write_text(text)
        for pid, text in PAIRWISE.items():
            f = root / "m" / "pairwise" / f"m_pairwise_{ds}_{pid}.txt"
            f.parent.mkdir(parents=True, exist_ok=True)
            f.write_text(text)
    tar = tmp_path / "judgments.tar.gz"
    with tarfile.open(tar, "w:gz") as t:
        t.add(root, arcname=".")
    qrels = {}
    for ds in ("dl20", "dl21"):
        qrels[ds] = tmp_path / f"q.{ds}.txt"
        qrels[ds].write_text(QRELS)
    return tar, qrels


QRELS_DATA = {ds: {"1": {"a": 3, "b": 2, "c": 1, "d": 0}} for ds in ("dl20", "dl21")}


def rows_of(tmp_path: Path, conv: Conventions, exclude=()) -> dict:
    from reljudge.sweep.published import EXCLUDED_BY_AUTHORS

    tar, _ = release(tmp_path)
    cells, _ = read_published(tar, exclude=set(EXCLUDED_BY_AUTHORS) | set(exclude))
    result = analyze(cells, QRELS_DATA, conv, alpha=False)
    return {(r["dataset"], r["task"], r["prompt"]): r for r in result.rows}, result


def test_defaults_stay_todays_defaults():
    conv = Conventions()
    assert (conv.threshold, conv.variance_ddof, conv.pool_datasets, conv.invalid, conv.excluded_prompts) == (
        2,
        1,
        False,
        "drop",
        (),
    )
    assert conventions_with() == conv


def test_threshold_option(tmp_path):
    at2, _ = rows_of(tmp_path, Conventions())
    at1, _ = rows_of(tmp_path, Conventions(threshold=1))
    assert at2[("dl20", "binary", "0")]["kappa"] == pytest.approx(0.5)
    assert at1[("dl20", "binary", "0")]["kappa"] == pytest.approx(1.0)


def test_invalid_labels_dropped_or_own_category(tmp_path):
    drop, _ = rows_of(tmp_path, Conventions(threshold=1))
    cat, _ = rows_of(tmp_path, Conventions(threshold=1, invalid="category"))
    # dropped: a, c, d agree perfectly
    assert drop[("dl20", "binary", "1")]["kappa"] == pytest.approx(1.0)
    # own category: human 1,1,1,0 vs judge 1,invalid,1,0: po = 3/4, pe = 0.75*0.5 + 0.25*0.25
    assert cat[("dl20", "binary", "1")]["kappa"] == pytest.approx((0.75 - 0.4375) / (1 - 0.4375))
    assert cat[("dl20", "binary", "1")]["paired"] == 4 and drop[("dl20", "binary", "1")]["paired"] == 3
    # a prompt without invalid labels is the same under both
    assert cat[("dl20", "binary", "0")]["kappa"] == drop[("dl20", "binary", "0")]["kappa"]
    # pairwise: the invalid outcome counts in the denominator
    assert drop[("dl20", "pairwise", "0")]["agree"] == pytest.approx(1.0)
    assert cat[("dl20", "pairwise", "0")]["agree"] == pytest.approx(0.5)
    assert cat[("dl20", "pairwise", "0")]["pairs"] == 2


def test_excluded_prompts_besides_the_authors(tmp_path):
    rows, _ = rows_of(tmp_path, Conventions(), exclude={"7", "16"})
    assert {p for (_, _, p) in rows} == {"0", "1", "17"}
    tar, _ = release(tmp_path / "again")
    _, notes = read_published(tar, exclude={"7"})
    assert any("7" in n and "excluded by the caller" in n for n in notes)


def test_pooled_summary_and_variance(tmp_path):
    rows, sample = rows_of(tmp_path, Conventions(pool_datasets=True))
    _, population = rows_of(tmp_path, Conventions(pool_datasets=True, variance_ddof=0))
    human = [rows[(ds, "binary", p)]["kappa"] for ds in ("dl20", "dl21") for p in ("0", "1", "7")]
    pooled = {(r["task"], r["group"]): r for r in sample.pooled}
    assert pooled[("binary", "human")]["n_values"] == 6
    assert pooled[("binary", "human")]["mean"] == pytest.approx(np.mean(human))
    assert pooled[("binary", "human")]["var"] == pytest.approx(np.var(human, ddof=1))
    assert {(r["task"], r["group"]): r for r in population.pooled}[("binary", "human")][
        "var"
    ] == pytest.approx(np.var(human))
    # per-dataset summaries follow the variance convention too
    per_ds = {(s["dataset"], s["task"], s["group"]): s for s in population.summary}
    dl20 = [rows[("dl20", "binary", p)]["kappa"] for p in ("0", "1", "7")]
    assert per_ds[("dl20", "binary", "human")]["var"] == pytest.approx(np.var(dl20))
    # not pooled: no pooled summary
    assert rows_of(tmp_path, Conventions())[1].pooled == []


def test_preset_sets_the_five_conventions_and_options_override_it():
    conv = conventions_with("thesis-table-4.5")
    assert conv == Conventions(
        threshold=1, excluded_prompts=("7", "16"), pool_datasets=True, variance_ddof=0, invalid="category"
    )
    assert conventions_with("thesis-table-4.5", variance="sample", invalid="drop").variance_ddof == 1
    assert conventions_with("thesis-table-4.5", excluded_prompts="7").excluded_prompts == ("7",)
    assert set(PRESETS) == {"thesis-table-4.5"}
    with pytest.raises(InputError, match="unknown preset"):
        conventions_with("nope")
    with pytest.raises(InputError, match="--variance"):
        conventions_with(variance="unbiased")
    with pytest.raises(InputError, match="--invalid"):
        conventions_with(invalid="keep")


@pytest.mark.slow
def test_cli_preset_writes_the_pooled_summary(tmp_path):
    tar, qrels = release(tmp_path)
    out = tmp_path / "out"
    args = ["sweep", "--from-judgments", str(tar), "--no-plots"]
    args += [f"--qrels={ds}={p}" for ds, p in qrels.items()]
    res = judge(*args, "--out", str(out), "--preset", "thesis-table-4.5")
    assert res.returncode == 0, res.output
    with (out / "summary_pooled.csv").open() as f:
        table = list(csv.DictReader(f))
    assert list(table[0]) == ["model", "task", "group", "n_values", "mean", "var", "std", "min", "max"]
    got = {(r["task"], r["group"]): r for r in table}
    # prompts 7 and 16 left out: human 0, 1 and llm 17 on two datasets
    assert got[("binary", "human")]["n_values"] == "4" and got[("binary", "llm")]["n_values"] == "2"
    # threshold 1, invalid as category: prompt 0 kappa 1, prompt 1 kappa 5/9 on both datasets
    assert float(got[("binary", "human")]["mean"]) == pytest.approx((1 + 5 / 9) / 2)
    assert float(got[("binary", "human")]["var"]) == pytest.approx(np.var([1, 5 / 9, 1, 5 / 9]))
    md = (out / "summary_pooled.md").read_text()
    assert "| model | crafted by | binary mean |" in md and "| m | Human |" in md
    assert "summary_pooled.csv" in (out / "report.md").read_text()
    # without options: today's analysis, no pooled summary
    plain = tmp_path / "plain"
    res = judge(*args, "--out", str(plain))
    assert res.returncode == 0, res.output
    assert not (plain / "summary_pooled.csv").exists()


def test_cli_rejects_a_bad_convention(tmp_path):
    tar, _ = release(tmp_path)
    out = tmp_path / "o"
    res = judge("sweep", "--from-judgments", tar, "--no-plots", "--variance", "biased", "--out", out)
    assert res.returncode == 2 and "--variance" in res.stderr
    assert not out.exists()


@pytest.mark.shared
@pytest.mark.slow
def test_thesis_table_4_5_conventions_on_the_release(shared_data: Path):
    """Spec S1: under the preset the human-binary variances are 0.098 / 0.041 / 0.051 (gpt-4o, llama3.2,
    mistral); with the sample variance they would be 0.102 / 0.043 / 0.053."""
    from reljudge.io.trec import read_qrels
    from reljudge.sweep.analysis import summarize_pooled

    release_path = shared_data / "prompt-sensitivity" / "judgments.tar.gz"
    conv = conventions_with("thesis-table-4.5")
    cells, _ = read_published(release_path, exclude={"4", "6", "13", "23", "27", "30", "7", "16"})
    binary = [c for c in cells if c.task == "binary"]

    qrels = {ds: read_qrels(shared_data / f"trec-{ds}" / "qrels.txt") for ds in ("dl20", "dl21")}
    rows = analyze(binary, qrels, conv, alpha=False).rows

    for ddof, expected in ((0, (0.098, 0.041, 0.051)), (1, (0.102, 0.043, 0.053))):
        pooled = {(r["model"], r["group"]): r for r in summarize_pooled(rows, ddof)}
        for model, value in zip(("gpt-4o", "llama3.2", "mistral"), expected, strict=True):
            assert pooled[(model, "human")]["n_values"] == 24
            assert round(pooled[(model, "human")]["var"], 3) == value, (model, ddof)


def test_conventions_are_refused_for_a_sweep_directory(tmp_path):
    from reljudge.sweep.execute import INDEX_FILE

    (tmp_path / INDEX_FILE).write_text("{}")
    res = judge("sweep", "--from-judgments", str(tmp_path), "--preset", "thesis-table-4.5")
    assert res.returncode == 2 and "sweep directory" in res.stderr.splitlines()[-1]  # an InputError
