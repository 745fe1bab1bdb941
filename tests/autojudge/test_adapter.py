"""The ``auto-judge run`` adapter (`reljudge.autojudge.adapter`) without autojudge-base: what each
protocol call judges (`spec_for`: filebase, environment, settings), what it refuses, the shipped
workflow files, and that nothing of reljudge imports autojudge-base until a protocol runs.
tests/autojudge/test_auto_judge_run.py runs the real runner."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from reljudge.autojudge import adapter
from reljudge.autojudge.adapter import METHODS, spec_for, workflow_path

KIDDIE = Path(__file__).resolve().parent.parent / "io" / "autojudge_kiddie"
SECRET = "sk-adapter-test-secret-987654321"


class Topic:
    """What the adapter uses of autojudge-base's `Request`: ``model_dump``."""

    def __init__(self, **fields):
        self.fields = fields

    def model_dump(self, mode: str = "python", exclude_none: bool = False):
        return {k: v for k, v in self.fields.items() if v is not None or not exclude_none}


def _reports(files: list[Path]) -> list[SimpleNamespace]:
    """What the adapter uses of autojudge-base's `Report`: the file it was read from."""
    return [
        SimpleNamespace(path=f.resolve())
        for f in files
        for line in f.read_text().splitlines()
        if line.strip()
    ]


RUN_FILES = sorted((KIDDIE / "runs").glob("*.jsonl"))
TOPICS = [
    Topic(request_id="leaf", title="Why leaves change colour", problem_statement=None, background="kids")
]
LLM = SimpleNamespace(model="gpt-4o", base_url="http://127.0.0.1:9/v1", api_key=SECRET, cache_dir=Path("."))


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch):
    for name in ("CACHE_DIR", "LLM_CACHE_DIR", "RELJUDGE_CACHE_ONLY", "RELJUDGE_MAX_COST", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)


def test_the_phases_name_the_same_files_whether_or_not_filebase_holds_the_out_dir(tmp_path):
    out = tmp_path / "out"
    nugget_phase = spec_for("nuggets", _reports(RUN_FILES), TOPICS, LLM, {"filebase": "rj", "outdir": out})
    judge_phase = spec_for(
        "nuggets", _reports(RUN_FILES), TOPICS, LLM, {"filebase": str(out / "rj"), "outdir": out}
    )
    assert nugget_phase == judge_phase
    assert judge_phase.filebase_path == out / "rj" and judge_phase.run_dir == out / "rj.reljudge"
    assert list(judge_phase.responses) == [f.resolve() for f in RUN_FILES]
    assert judge_phase.model == "gpt-4o" and judge_phase.base_url == "http://127.0.0.1:9/v1"


def test_the_topics_are_written_once_byte_stable_with_the_fields_they_hold(tmp_path):
    spec = spec_for("umbrela", _reports(RUN_FILES), TOPICS, LLM, {"filebase": "rj", "outdir": tmp_path})
    assert spec.topics == tmp_path / "rj.topics.jsonl"
    text = spec.topics.read_bytes()
    assert json.loads(text) == {
        "request_id": "leaf",
        "title": "Why leaves change colour",
        "background": "kids",
    }
    mtime = spec.topics.stat().st_mtime_ns
    spec_for("umbrela", _reports(RUN_FILES), TOPICS, LLM, {"filebase": "rj", "outdir": tmp_path})
    assert spec.topics.read_bytes() == text and spec.topics.stat().st_mtime_ns == mtime


def test_cache_dir_cache_only_and_max_cost_come_from_the_environment(tmp_path, monkeypatch):
    spec = spec_for("umbrela", _reports(RUN_FILES), TOPICS, LLM, {"filebase": "rj", "outdir": tmp_path})
    # autojudge-base reads an unset CACHE_DIR as Path("") == Path("."): that is no cache dir
    assert spec.cache_dir is None and not spec.cache_only and spec.max_cost is None
    monkeypatch.setenv("CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("RELJUDGE_CACHE_ONLY", "1")
    monkeypatch.setenv("RELJUDGE_MAX_COST", "2.5")
    spec = spec_for("umbrela", _reports(RUN_FILES), TOPICS, LLM, {"filebase": "rj", "outdir": tmp_path})
    assert spec.cache_dir == tmp_path / "cache" and spec.cache_only and spec.max_cost == 2.5
    # the workflow's settings win over the environment for the cost cap
    spec = spec_for(
        "umbrela", _reports(RUN_FILES), TOPICS, LLM, {"filebase": "rj", "outdir": tmp_path, "max_cost": 1}
    )
    assert spec.max_cost == 1.0


def test_the_api_key_is_named_never_carried(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    spec = spec_for("umbrela", _reports(RUN_FILES), TOPICS, LLM, {"filebase": "rj", "outdir": tmp_path})
    assert spec.api_key_env == "OPENAI_API_KEY"
    assert SECRET not in repr(spec)
    assert not [p for p in tmp_path.rglob("*") if p.is_file() and SECRET.encode() in p.read_bytes()]


def test_settings_reach_the_spec_and_a_misspelt_one_is_refused(tmp_path, capsys):
    settings = {
        "filebase": "rj",
        "outdir": tmp_path,
        "privacy": "true",
        "track": "kiddie",
        "options": {"temperature": 0},
    }
    spec = spec_for("citation-support", _reports(RUN_FILES), TOPICS, LLM, settings)
    assert spec.privacy and spec.track == "kiddie" and dict(spec.options) == {"temperature": 0}
    with pytest.raises(SystemExit) as stop:
        spec_for("umbrela", _reports(RUN_FILES), TOPICS, LLM, {"filebase": "rj", "max_cots": 3})
    assert stop.value.code == 2
    assert "error: unknown workflow setting(s) max_cots" in capsys.readouterr().err


def test_a_subset_of_the_response_files_is_refused_not_widened(tmp_path, capsys):
    reports = _reports(RUN_FILES)[:-1]  # what --limit-topics or --runs would leave
    with pytest.raises(SystemExit) as stop:
        spec_for("umbrela", reports, TOPICS, LLM, {"filebase": "rj", "outdir": tmp_path})
    assert stop.value.code == 2
    assert f"the runner gave {len(reports)} of the {len(reports) + 1} responses" in capsys.readouterr().err


def test_no_model_is_an_error_that_says_which_variable(tmp_path, capsys):
    with pytest.raises(SystemExit):
        spec_for("umbrela", _reports(RUN_FILES), TOPICS, SimpleNamespace(model=""), {"filebase": "rj"})
    assert "OPENAI_MODEL" in capsys.readouterr().err


@pytest.mark.parametrize("method", METHODS)
def test_each_shipped_workflow_names_the_adapter_class_of_its_method(method):
    flow = yaml.safe_load(workflow_path(method).read_text())
    for key in ("nugget_class", "qrels_class", "judge_class"):
        module, _, name = flow[key].partition(":")
        assert module == "reljudge.autojudge.adapter"
        assert getattr(adapter, name).METHOD == method
    assert flow["judge"] is True and flow["settings"]["filebase"] == f"reljudge-{method}"
    # the runner's nugget phase refuses an empty bank: reljudge writes its own (module docstring)
    assert flow["create_nuggets"] is False
    assert flow["variants"]["replay"]["settings"]["cache_only"] is True


def test_the_workflow_files_are_package_data():
    pyproject = (Path(__file__).resolve().parents[2] / "pyproject.toml").read_text()
    assert '"autojudge/workflows/*.yml"' in pyproject
    assert 'autojudge = ["autojudge-base==1.0.0", "autojudge-evaluate==1.1.0"]' in pyproject


def test_python_m_adapter_prints_the_workflow_paths(capsys):
    assert adapter.main([]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split("\t")[0] for line in lines] == list(METHODS)
    assert all(Path(line.split("\t")[1]).is_file() for line in lines)
    assert adapter.main(["nuggets"]) == 0 and capsys.readouterr().out.strip() == str(workflow_path("nuggets"))
    assert adapter.main(["bogus"]) == 2


@pytest.mark.slow  # a fresh interpreter importing the judges: about 1-2 s
def test_importing_the_adapter_imports_no_autojudge_package():
    code = "import sys, reljudge.autojudge.adapter; print(sorted(m for m in sys.modules if m.startswith('autojudge')))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
