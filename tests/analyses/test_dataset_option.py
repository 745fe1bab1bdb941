"""``--dataset`` wherever human qrels and runs are read (``judge fd``, ``histogram``,
``pool-bias``, ``sparsify``): a dataset directory gives the same results as its ``--qrels`` and
``--runs`` files, resolved by the one helper ``judge evaluate`` uses; the help names ``irds:<id>``."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from _cli import judge


@pytest.fixture()
def collection(tmp_path: Path) -> Path:
    """A dataset directory: topics.tsv, qrels.txt, runs/, passages.tsv; embeddings and run types beside."""
    data = tmp_path / "data"
    runs = data / "runs"
    runs.mkdir(parents=True)
    qrels, docids = [], set()
    for q in range(6):
        qrels += [f"q{q} 0 r{i} {2 if i < 4 else 0}" for i in range(8)]
    for s in range(6):
        lines = []
        for q in range(6):
            order = [f"r{(i + s + q) % 8}" for i in range(8)] + [f"u{s}{i}" for i in range(3)]
            docids.update(order)
            lines += [f"q{q} Q0 {d} {i + 1} {20 - i} sys{s}" for i, d in enumerate(order)]
        (runs / f"sys{s}.run").write_text("\n".join(lines) + "\n")
    (data / "qrels.txt").write_text("\n".join(qrels) + "\n")
    (data / "topics.tsv").write_text("".join(f"q{q}\tquery {q}\n" for q in range(6)))
    (data / "passages.tsv").write_text("".join(f"{d}\ttext of {d}\n" for d in sorted(docids)))
    ids = sorted(docids)
    np.save(tmp_path / "emb.npy", np.random.default_rng(0).normal(size=(len(ids), 4)).astype("float32"))
    (tmp_path / "emb.ids").write_text("\n".join(ids) + "\n")
    info = [f"sys{s}\tg{s // 2}\t{'neural' if s % 2 else 'trad'}" for s in range(6)]
    (tmp_path / "types.tsv").write_text("\n".join(info) + "\n")
    return tmp_path


COMMANDS = {
    "histogram": ["--bins", "5"],
    "pool-bias": ["--run-info", "types.tsv", "--reps", "2"],
    "sparsify": ["--n", "1,2", "--repeats", "2"],
    "fd": ["--embeddings", "emb.npy", "--k", "3", "--bootstrap", "0"],
}


@pytest.mark.slow
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_dataset_gives_what_its_qrels_and_runs_give(collection: Path, command: str):
    extra = COMMANDS[command]
    files = judge(
        command, "--qrels", "data/qrels.txt", "--runs", "data/runs", *extra, "--json", cwd=collection
    )
    assert files.returncode == 0, files.output
    named = judge(command, "--dataset", "data", *extra, "--json", cwd=collection)
    assert named.returncode == 0, named.output
    assert json.loads(named.stdout) == json.loads(files.stdout)


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_dataset_help_and_errors(collection: Path, command: str):
    assert "irds:<id>" in " ".join(judge(command, "--help").stdout.split())
    both = judge(
        command, "--qrels", "data/qrels.txt", "--dataset", "data", *COMMANDS[command], cwd=collection
    )
    assert both.returncode == 2 and "exactly one of --qrels FILE or --dataset NAME" in both.stderr
    if command != "histogram":  # histogram takes --scores instead of runs
        no_runs = judge(command, "--dataset", "dl19-sample", *COMMANDS[command], cwd=collection)
        assert no_runs.returncode == 2
        assert (
            "give the runs with --runs DIR (dataset 'dl19-sample' has no runs/ directory)" in no_runs.stderr
        )


def test_every_dataset_option_mentions_irds():
    for command in (["run"], ["evaluate"], ["calibrate"], ["combine"], ["pairs", "sample"]):
        text = " ".join(judge(*command, "--help").stdout.split())
        assert "irds:<id>" in text, command
