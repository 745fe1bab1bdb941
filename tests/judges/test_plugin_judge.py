"""A judge from a plugin package, with its own per-item records and its own score set, runs end to
end through ``judge run``, ``judge evaluate`` and ``judge export`` -- and an edited prompt of
it is never mixed into a resumed run -- with nothing outside the plugin knowing the method.

A pointwise judge is one module and one template (``demo-grade``: `reljudge_demo_facts.grade` and
its ``demo-grade.yaml``): it runs through ``judge run`` (also ``--batch``, against the mock
server's Batch API), ``judge evaluate``, ``judge export`` and ``judge sweep``, and the ``--method``
help lists it (the lists of methods come from the registry).

The plugin (`tests/plugins/reljudge_demo_facts`) is installed the way pip installs one: a
``*.dist-info`` directory with an ``entry_points.txt`` in the ``reljudge.judges`` group, on the
path of the ``judge`` subprocesses.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from _reliability import cli
from reljudge.io.judgments import read_judgments
from reljudge.testing import MockLLMServer

PLUGIN = Path(__file__).resolve().parents[1] / "plugins" / "reljudge_demo_facts"
SAMPLE = ("--dataset", "dl19-sample", "--topics-limit", "2", "--limit", "6")


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """A directory holding the plugin package and its distribution metadata."""
    root = tmp_path_factory.mktemp("site")
    shutil.copytree(PLUGIN, root / PLUGIN.name)
    info = root / "reljudge_demo_facts-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: reljudge-demo-facts\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(
        "[reljudge.judges]\ndemo-facts = reljudge_demo_facts:DemoFactsJudge\n"
        "demo-grade = reljudge_demo_facts.grade:DemoGradeJudge\n"
    )
    return root


def judge(site: Path, tmp: Path, *args: str, **env: str):
    """``judge ARGS`` in a subprocess that finds the plugin (before the path it was given)."""
    path = os.pathsep.join(p for p in (str(site), os.environ.get("PYTHONPATH", "")) if p)
    return cli(list(args), tmp, PYTHONPATH=path, **env)


@pytest.mark.slow
def test_a_plugin_judge_runs_evaluates_and_exports_end_to_end(site, tmp_path):
    with MockLLMServer() as srv:
        out = tmp_path / "run"
        base = ("run", "--method", "demo-facts", "--model", "openai/mock-model", "--base-url", srv.openai_url)
        done = judge(site, tmp_path, *base, *SAMPLE, "-o", "facts=3", "--output", str(out), "--no-progress")
        assert done.returncode == 0, done.stderr
        records = read_judgments(out / "judgments.jsonl")
        assert records and all(r.method == "demo-fact" and r.item_id and r.docid for r in records)
        assert len(records) == 6 * 3 and srv.calls == 18
        assert all(r.status == "ok" for r in records)
        # its own score set is the run's qrels: a share of 3 facts per passage
        qrels = [line.split() for line in (out / "qrels.txt").read_text().splitlines()]
        assert len(qrels) == 6 and {int(g) for *_, g in qrels} <= {0, 1}  # shares rounded (float policy)
        manifest = json.loads((out / "manifest.json").read_text())
        assert manifest["extra"]["identity"]["prompt_sha256"]["prompt"]

        # the same command again: resumed, nothing asked twice
        again = judge(site, tmp_path, *base, *SAMPLE, "-o", "facts=3", "--output", str(out), "--no-progress")
        assert again.returncode == 0 and srv.calls == 18, again.stderr
        # an edited prompt of the plugin is refused, not mixed in
        edited = judge(
            site, tmp_path, *base, *SAMPLE, "-o", "facts=3", "-o", "wording=Is the fact stated?",
            "--output", str(out), "--no-progress",
        )  # fmt: skip
        assert edited.returncode == 2 and "refusing to mix" in edited.stderr, edited.stderr
        assert srv.calls == 18

    # judge evaluate finds the method's own score set in the run directory
    evaluation = tmp_path / "evaluation"
    evaluated = judge(site, tmp_path, "evaluate", "--dataset", "dl19-sample", "--judgments", str(out),
                      "--out", str(evaluation), "--bootstrap", "0")  # fmt: skip
    assert evaluated.returncode == 0, evaluated.stderr
    report = json.loads((evaluation / "evaluation.json").read_text())
    (evaluated_set,) = report["sets"]  # the run's one score set: its document scores against humans
    assert evaluated_set["labels"] == 6 and evaluated_set["alignment"]

    # judge export writes the set as qrels, by the method's default or by its name
    for extra in ((), ("--set", "demo-facts-share")):
        path = tmp_path / f"export{len(extra)}.qrels"
        exported = judge(site, tmp_path, "export", "--judgments", str(out), "--to", "qrels",
                         "--out", str(path), "--float", "scale", *extra)  # fmt: skip
        assert exported.returncode == 0, exported.stderr
        scores = {int(line.split()[3]) for line in path.read_text().splitlines()}
        assert scores <= {0, 33, 67, 100}


def method_help(text: str) -> str:
    """The help of ``--method`` in a command's help, without its spaces and line breaks."""
    start = text.index("--method")
    end = text.index("\n  -", start)
    return "".join(text[start:end].split())


@pytest.mark.slow
def test_a_pointwise_plugin_judge_is_one_module_and_one_template(site, tmp_path):
    method = method_help(judge(site, tmp_path, "run", "--help").stdout)
    assert "demo-grade" in method and "demo-facts" in method and "citation-support" in method
    method = method_help(judge(site, tmp_path, "probe", "--help").stdout)
    assert "demo-grade" in method and "demo-facts" not in method  # the pointwise judges only
    with MockLLMServer() as srv:
        base = ("run", "--method", "demo-grade", "--model", "openai/mock-model", "--base-url", srv.openai_url,
                *SAMPLE, "--no-progress")  # fmt: skip
        out = tmp_path / "run"
        done = judge(site, tmp_path, *base, "--output", str(out))
        assert done.returncode == 0, done.stderr
        records = read_judgments(out / "judgments.jsonl")
        assert len(records) == 6 and srv.calls == 6
        assert all(r.method == "demo-grade" and r.status == "ok" and r.label in (0, 1, 2, 3) for r in records)
        assert {r.provenance.prompt_id for r in records} == {"demo-grade/usefulness"}
        qrels = (out / "qrels.txt").read_text().splitlines()
        assert sorted(qrels) == sorted(f"{r.qid} 0 {r.docid} {int(r.label)}" for r in records)

        # the same judge through the Batch API: the same labels, each request sent once
        batched = tmp_path / "batched"
        sent = judge(site, tmp_path, *base, "--output", str(batched), "--cache", str(tmp_path / "batch.sqlite"),
                     "--batch", "--batch-poll", "0.02")  # fmt: skip
        assert sent.returncode == 0, sent.stderr
        assert sorted((batched / "qrels.txt").read_text().splitlines()) == sorted(qrels)
        assert sum(srv.batches.submissions.values()) == 6 and srv.batches.resubmitted == 0
        assert srv.calls == 6  # the batch run made no synchronous call

    evaluation = tmp_path / "evaluation"
    evaluated = judge(site, tmp_path, "evaluate", "--dataset", "dl19-sample", "--judgments", str(out),
                      "--out", str(evaluation), "--bootstrap", "0")  # fmt: skip
    assert evaluated.returncode == 0, evaluated.stderr
    (evaluated_set,) = json.loads((evaluation / "evaluation.json").read_text())["sets"]
    assert evaluated_set["labels"] == 6 and evaluated_set["alignment"]
    exported = judge(site, tmp_path, "export", "--judgments", str(out), "--to", "qrels",
                     "--out", str(tmp_path / "export.qrels"))  # fmt: skip
    assert exported.returncode == 0, exported.stderr
    assert sorted((tmp_path / "export.qrels").read_text().splitlines()) == sorted(qrels)


@pytest.mark.slow
def test_without_the_plugin_its_records_are_a_clear_error(site, tmp_path):
    with MockLLMServer() as srv:
        out = tmp_path / "run"
        base = ("run", "--method", "demo-facts", "--model", "openai/mock-model", "--base-url", srv.openai_url)
        assert judge(site, tmp_path, *base, *SAMPLE, "--output", str(out), "--no-progress").returncode == 0
    exported = cli(
        ["export", "--judgments", str(out), "--to", "qrels", "--out", str(tmp_path / "q")], tmp_path
    )
    assert exported.returncode == 2
    assert "no judge declares that method" in exported.stderr


@pytest.mark.slow
def test_plugin_judges_run_through_a_sweep_beside_a_built_in_judge(site, tmp_path):
    with MockLLMServer() as srv:
        config = tmp_path / "sweep.yaml"
        config.write_text(
            f"""
output: out
cache: cache.sqlite
datasets: [dl19-sample]
models:
  - {{name: mock, model: openai/mock-model, base_url: "{srv.openai_url}"}}
judges:
  - {{method: demo-facts, options: {{facts: 2}}, scale: binary}}
  - {{method: demo-grade, scale: graded}}
  - umbrela
sampling: {{topics: 2, per_grade: 1}}
analysis: {{plots: false}}
""",
            encoding="utf-8",
        )
        done = judge(site, tmp_path, "sweep", str(config))
        assert done.returncode == 0, done.stderr
        calls = srv.calls
        index = json.loads((tmp_path / "out" / "sweep.json").read_text())
        cells = {(c["task"], c["prompt"]): c for c in index["cells"]}
        assert set(cells) == {("binary", "demo-facts"), ("graded", "demo-grade"), ("graded", "umbrela")}
        assert {c["judge"] for c in cells.values()} == {"demo-facts", "demo-grade", "umbrela"}
        pooled = index["datasets"]["dl19-sample"]["items"]["pointwise"]
        facts = read_judgments(tmp_path / "out" / cells[("binary", "demo-facts")]["dir"] / "judgments.jsonl")
        assert len(facts) == 2 * pooled and {r.method for r in facts} == {"demo-fact"}
        grades = read_judgments(tmp_path / "out" / cells[("graded", "demo-grade")]["dir"] / "judgments.jsonl")
        assert len(grades) == pooled and {r.method for r in grades} == {"demo-grade"}
        assert calls == 4 * pooled  # two facts, one demo grade and one UMBRELA grade per sampled passage
        rows = {
            r["prompt"]: r for r in json.loads((tmp_path / "out" / "analysis" / "cells.json").read_text())
        }
        # each judge's document scores (its qrels.txt) are its labels, compared with the humans
        assert rows["demo-facts"]["items"] == pooled and rows["demo-facts"]["invalid"] == 0
        assert rows["demo-facts"]["paired"] == pooled and 0 <= rows["demo-facts"]["positive_rate"] <= 1
        assert rows["umbrela"]["labelled"] == pooled and rows["umbrela"]["group"] == "judge"
        assert rows["demo-grade"]["labelled"] == pooled and rows["demo-grade"]["group"] == "judge"
        # the same sweep again: every cell resumed, nothing asked twice
        again = judge(site, tmp_path, "sweep", str(config))
        assert again.returncode == 0 and srv.calls == calls, again.stderr

    # an option the plugin does not take is bad input at its line, before anything runs
    config.write_text(config.read_text().replace("facts: 2", "fact: 2"), encoding="utf-8")
    bad = judge(site, tmp_path, "sweep", str(config))
    assert bad.returncode == 2 and f"{config}:8:" in bad.stderr and "'fact'" in bad.stderr, bad.stderr
