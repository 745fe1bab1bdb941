"""``judge demo``: the whole pipeline on the in-process mock, into one folder, and what it refuses."""

from __future__ import annotations

import json

import pytest

from _cli import judge, records


@pytest.mark.slow
def test_demo_runs_the_pipeline_and_says_where_to_look(tmp_path):
    out = tmp_path / "demo"
    ran = judge("demo", "--out", out, "--limit", "30")
    assert ran.returncode == 0, ran.output
    assert len(records(out / "run")) == 30 and all(r.status == "ok" for r in records(out / "run"))
    manifest = json.loads((out / "run" / "manifest.json").read_text())
    assert manifest["finished_at"]
    assert (out / "evaluation" / "evaluation.json").is_file()
    for report in (out / "run" / "report.html", out / "evaluation" / "report.html"):
        assert report.is_file() and str(report) in ran.stdout
    # a second demo into its own folder starts afresh
    again = judge("demo", "--out", out, "--limit", "10")
    assert again.returncode == 0, again.output
    assert len(records(out / "run")) == 10


def test_demo_refuses_a_folder_that_is_not_its_own(tmp_path):
    (tmp_path / "mine.txt").write_text("keep me")
    ran = judge("demo", "--out", tmp_path)
    assert ran.returncode == 2
    assert "not empty and not a demo's" in ran.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mine.txt"]
    (tmp_path / "file").write_text("x")
    assert judge("demo", "--out", tmp_path / "file").returncode == 2
