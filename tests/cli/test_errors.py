"""How the CLI reports what is wrong: option ranges, validation errors naming the real option,
judge options checked by name, a missing optional extra (matplotlib) as one line and exit 2 --
and a sweep that still writes its analysis without matplotlib."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from _cli import judge
from reljudge.errors import EXIT_BAD_INPUT, InputError, input_error_from_validation
from reljudge.testing import MockLLMServer

MODEL = "openai/mock-model"
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
ENV = {"OPENAI_API_KEY": "test-key"}


def judge_without(module: str, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    """`judge ARGS` in a subprocess in which ``import MODULE`` fails, as when it is not installed."""
    # a real process: what is tested is a module missing from the start (and main's one line)
    code = (
        f"import sys; sys.modules[{module!r}] = None; sys.argv = ['judge', *sys.argv[1:]]; "
        "from reljudge.cli import main; main()"
    )
    return subprocess.run(
        [sys.executable, "-c", code, *args], cwd=cwd, capture_output=True, text=True, timeout=120
    )


# --- one conversion of pydantic errors ------------------------------------------------------------


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")
    timeout_s: float = Field(60.0, gt=0)
    name: str


def _error(**data) -> ValidationError:
    with pytest.raises(ValidationError) as info:
        _Model(**data)
    return info.value


def test_validation_error_names_the_option_not_the_field():
    err = input_error_from_validation(_error(name="x", timeout_s=0), flags={"timeout_s": "--timeout"})
    assert isinstance(err, InputError)
    assert str(err) == "--timeout: Input should be greater than 0 (got 0)"


def test_validation_error_in_a_file_has_path_line_and_a_count_of_the_rest():
    err = input_error_from_validation(
        _error(timeout_s=-1, bogus=1), path="cfg.yaml", line=lambda loc: {("timeout_s",): 7}.get(loc)
    )
    assert (err.path, err.line) == ("cfg.yaml", 7)
    assert err.message.startswith("timeout_s: Input should be greater than 0")
    assert "(and 2 more problem(s))" in err.message  # the missing name and the unknown key
    unknown = input_error_from_validation(
        _error(name="x", bogus=1), path="r.jsonl", line=3, what="bad record"
    )
    assert str(unknown) == "r.jsonl:3: bad record: unknown key 'bogus'"
    missing = input_error_from_validation(_error(), flags={})
    assert str(missing) == "missing required option name"


@pytest.mark.parametrize("command", ["run", "probe"])
@pytest.mark.parametrize(
    ("option", "value", "flag"),
    [("--timeout", "0", "--timeout"), ("--rpm", "0", "--rpm"), ("--tpm", "0", "--tpm")],
)
def test_run_and_probe_name_the_option_of_a_bad_value(command, option, value, flag):
    result = judge(
        command, "--method", "binary", "--model", MODEL, "--dataset", "dl19-sample", option, value, env=ENV
    )
    assert result.returncode == EXIT_BAD_INPUT, result.output
    assert result.output.startswith(f"error: {flag}: Input should be greater than 0"), result.output
    assert "validation error" not in result.output and "--timeout-s" not in result.output


def test_probe_takes_tpm_param_and_prices_like_run(tmp_path):
    prices = tmp_path / "prices.yaml"
    prices.write_text("openai/mock-model: {input: 1.0, output: 2.0}\n")
    with MockLLMServer() as srv:
        result = judge(
            "probe", "--method", "binary", "--model", MODEL, "--base-url", srv.openai_url,
            "--dataset", "dl19-sample", "--sample", "2", "--perturbation", "instruction", "--no-cache",
            "--tpm", "100000", "--param", "grammar=root ::= [01]", "--prices", str(prices), "--json", env=ENV,
        )  # fmt: skip
        assert result.returncode == 0, result.output
        assert srv.calls == 4
        assert all(r.body["grammar"] == "root ::= [01]" for r in srv.requests)
    result = judge(
        "probe", "--method", "binary", "--model", MODEL, "--dataset", "dl19-sample",
        "--prices", str(tmp_path / "nope.yaml"), env=ENV,
    )  # fmt: skip
    assert result.returncode == EXIT_BAD_INPUT and "nope.yaml" in result.output, result.output


def test_run_and_probe_build_their_config_in_one_place():
    from reljudge.cli.options import run_config

    common = dict(method="binary", model=MODEL, dataset="dl19-sample", timeout=5.0, no_cache=True, cache=None)
    config = run_config("run", dict(option=["pairs=sampler"], param=["top_k=3"], rpm=10.0, **common))
    assert config.timeout_s == 5.0 and config.use_cache is False and config.rpm == 10.0
    assert config.options == {"pairs": "sampler"} and config.params == {"top_k": 3}
    with pytest.raises(InputError, match=r"^--float 'up': expected round, scale or keep$"):
        run_config("run", dict(option=None, param=None, float="up", **common))


# --- judge options checked by name --------------------------------------------------------------


def test_an_unknown_judge_option_lists_the_judges_options():
    result = judge(
        "run", "--method", "umbrela", "--model", MODEL, "--dataset", "dl19-sample", "--dry-run",
        "-o", "few_shot=true", env=ENV,
    )  # fmt: skip
    assert result.returncode == EXIT_BAD_INPUT
    assert result.stdout == ""
    assert (
        result.stderr
        == "error: method 'umbrela' has no option 'few_shot'; its options: prompt, max_tokens, constrain\n"
    )


def test_the_help_example_of_option_works_and_few_shot_umbrela_is_a_prompt(tmp_path):
    result = judge("run", "--help", env=ENV)
    assert result.returncode == 0 and "pairs=sampler" in result.output and "few_shot" not in result.output
    assert "umbrela/bing-fewshot" in result.output
    for extra in (
        ("--method", "pairwise", "-o", "pairs=sampler"),
        ("--method", "umbrela", "--prompt", "umbrela/bing-fewshot"),
    ):
        result = judge(
            "run", "--model", MODEL, "--dataset", "dl19-sample", "--dry-run", "--limit", "4", *extra, env=ENV
        )
        assert result.returncode == 0, result.output


def test_get_judge_reports_value_checks_and_lets_bugs_through(monkeypatch):
    from reljudge.judges import registry as base
    from reljudge.judges.registry import get_judge

    base._load_all()

    class Buggy:
        def __init__(self, size: int = 3) -> None:
            self.half = len(size)  # a bug: TypeError raised by Python, not by the judge on purpose

    class Strict:
        def __init__(self, size: int = 3, *, needed: str) -> None:
            if size < 1:
                raise TypeError(f"size must be a positive integer, got {size!r}")

    monkeypatch.setitem(base._REGISTRY, "buggy", Buggy)
    monkeypatch.setitem(base._REGISTRY, "strict", Strict)
    with pytest.raises(TypeError, match="has no len"):
        get_judge("buggy")
    with pytest.raises(InputError, match=r"^method 'strict': size must be a positive integer, got 0$"):
        get_judge("strict", size=0, needed="x")
    with pytest.raises(
        InputError, match=r"^method 'strict' needs option\(s\) 'needed'; its options: size, needed$"
    ):
        get_judge("strict")
    with pytest.raises(InputError, match=r"has no options 'a', 'b'; its options: size, needed$"):
        get_judge("strict", a=1, b=2, needed="x")
    # the built-in judges' own value checks are still user errors
    with pytest.raises(InputError, match="p must be a positive integer"):
        get_judge("pairwise", p=0)


# --- option ranges ------------------------------------------------------------------------------


@pytest.fixture
def eval_files(tmp_path: Path) -> Path:
    (tmp_path / "qrels.txt").write_text("q1 0 a 3\nq1 0 b 2\nq1 0 c 0\nq2 0 e 2\nq2 0 f 0\n")
    (tmp_path / "judge.qrels").write_text("q1 0 a 3\nq1 0 b 1\nq1 0 c 0\nq2 0 e 3\nq2 0 f 1\n")
    runs = tmp_path / "runs"
    runs.mkdir()
    for name, order in {"r1": ["a", "b", "c"], "r2": ["c", "b", "a"]}.items():
        lines = [f"q1 Q0 {d} {i + 1} {9 - i} {name}" for i, d in enumerate(order)]
        lines += [f"q2 Q0 {d} {i + 1} {9 - i} {name}" for i, d in enumerate(["e", "f"])]
        (runs / f"{name}.run").write_text("\n".join(lines) + "\n")
    return tmp_path


@pytest.mark.parametrize(
    ("command", "bad"),
    [
        ("fd", ("--k", "0")),
        ("fd", ("--bootstrap", "-1")),
        ("fd", ("--max-rel", "0")),
        ("fd", ("--batch-size", "0")),
        ("evaluate", ("--depth", "0")),
        ("evaluate", ("--bootstrap", "-5")),
    ],
)
def test_out_of_range_numbers_are_refused(eval_files, command, bad):
    f = eval_files
    args = {
        "fd": ["--qrels", str(f / "qrels.txt"), "--runs", str(f / "runs"), "--embeddings", str(f / "e.npy")],
        "evaluate": [
            "--qrels",
            str(f / "qrels.txt"),
            "--judgments",
            str(f / "judge.qrels"),
            "--out",
            str(f / "o"),
        ],
    }[command]
    result = judge(command, *args, *bad, env=ENV)
    assert result.returncode == 2, result.output
    assert bad[0] in result.output
    assert not (f / "o").exists()


def test_fd_with_no_vector_for_any_passage_is_bad_input(eval_files):
    f = eval_files
    np.save(f / "e.npy", np.random.default_rng(0).normal(size=(3, 4)))
    (f / "e.ids").write_text("x1\nx2\nx3\n")  # none of the docids of the qrels and runs
    result = judge(
        "fd", "--qrels", str(f / "qrels.txt"), "--runs", str(f / "runs"), "--embeddings", str(f / "e.npy"),
        "--min-grade", "1", "--k", "2", "--out", str(f / "fd"), env=ENV,
    )  # fmt: skip
    assert result.returncode == EXIT_BAD_INPUT
    assert "none of the" in result.output and "passages FD needs has a vector" in result.output
    assert not (f / "fd").exists()
    # one passage with a vector is coverage (FD itself may be NaN; the table says so)
    (f / "e.ids").write_text("a\nx2\nx3\n")
    result = judge(
        "fd", "--qrels", str(f / "qrels.txt"), "--runs", str(f / "runs"), "--embeddings", str(f / "e.npy"),
        "--min-grade", "1", "--k", "2", env=ENV,
    )  # fmt: skip
    assert result.returncode == 0, result.output


# --- a missing optional extra (matplotlib) --------------------------------------------------------


@pytest.mark.slow
def test_evaluate_plot_without_matplotlib_is_one_line_and_exit_2(eval_files):
    f = eval_files
    proc = judge_without(
        "matplotlib",
        "evaluate", "--qrels", str(f / "qrels.txt"), "--judgments", str(f / "judge.qrels"),
        "--out", str(f / "o"), "--plot",
        cwd=f,
    )  # fmt: skip
    assert proc.returncode == 2, proc.stderr
    assert (
        proc.stderr.strip() == "error: plots need matplotlib; install it with: pip install 'reljudge[plot]'"
    )
    assert not (f / "o").exists()  # said before the work, not after it


def _tiny_sweep(tmp: Path, url: str) -> Path:
    cfg = tmp / "sweep.yaml"
    cfg.write_text(
        f"""
name: tiny
output: out
cache: cache.sqlite
datasets: [dl19-sample]
models:
  - {{name: mock, model: openai/mock-model, base_url: "{url}"}}
methods: [binary]
prompts:
  - builtin: binary/trec-assessor
    id: builtin
  - id: terse
    binary: {{user: "Query: {{query}}\\nPassage: {{document}}\\nAnswer 1 for relevant or 0 for not relevant."}}
sampling: {{topics: 1, per_grade: 2}}
"""
    )
    return cfg


@pytest.mark.slow  # a whole sweep (plan, estimate, 2 cells, analysis): about 1.1 s with warm imports
def test_sweep_without_matplotlib_writes_the_analysis_and_says_so(tmp_path, monkeypatch):
    with MockLLMServer() as srv:
        cfg = _tiny_sweep(tmp_path, srv.openai_url)
        monkeypatch.setitem(sys.modules, "matplotlib", None)
        monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
        result = judge("sweep", cfg, env={"OPENAI_API_KEY": "k"})  # an exception would be raised here
    assert result.returncode == 0, result.output
    assert "plots need matplotlib" in result.output  # the warning, before the run
    analysis = tmp_path / "out" / "analysis"
    report = (analysis / "report.md").read_text()
    assert "Not written: plots need matplotlib" in report
    assert json.loads((analysis / "cells.json").read_text())
    assert not list(analysis.rglob("*.png"))


@pytest.mark.slow
def test_sweep_plots_are_written_through_the_shared_atomic_writer(tmp_path, monkeypatch):
    pytest.importorskip("matplotlib", reason="matplotlib is an optional extra (reljudge[plot])")
    from reljudge.io import figures as metric_plots
    from reljudge.sweep import api
    from reljudge.sweep.report import write_report

    with MockLLMServer() as srv:
        cfg = _tiny_sweep(tmp_path, srv.openai_url)
        result = judge("sweep", cfg, "--no-plots", env={"OPENAI_API_KEY": "k"})
    assert result.returncode == 0, result.output
    saved: list[Path] = []
    original = metric_plots.save_figure

    def spy(fig, path, **kwargs):
        saved.append(Path(path))
        return original(fig, path, **kwargs)

    monkeypatch.setattr(metric_plots, "save_figure", spy)
    written = write_report(api.analyze_sweep_dir(tmp_path / "out"), tmp_path / "report")
    pngs = sorted(p for p in written if p.suffix == ".png")
    assert pngs and sorted(saved) == pngs
    assert all(p.read_bytes().startswith(b"\x89PNG") for p in pngs)


# --- help texts, the sample sweep, question banks -------------------------------------------------


def test_run_help_gives_the_interrupt_exit_code():
    result = judge("run", "--help", env=ENV)
    assert result.returncode == 0
    assert "130 interrupted" in " ".join(result.output.split())


@pytest.mark.slow
def test_the_sample_sweep_is_self_contained_and_runs_on_the_mock(tmp_path):
    from reljudge.sweep.config import load_sweep_config

    text = (EXAMPLES / "sweep-sample.yaml").read_text()
    cfg = load_sweep_config(EXAMPLES / "sweep-sample.yaml")
    assert [d.name for d in cfg.datasets] == ["dl19-sample"]
    assert all(p.file is None for p in cfg.prompts)  # built-in and inline prompts only
    (model,) = cfg.models
    assert (model.model, model.base_url) == ("openai/mock", "http://127.0.0.1:8765/v1")
    assert "judge mock-server --port 8765 &" in text
    with MockLLMServer() as srv:
        copy = tmp_path / "sweep-sample.yaml"
        copy.write_text(
            text.replace("http://127.0.0.1:8765/v1", srv.openai_url).replace(
                "../runs/sweep-dl19-sample", "out/dl19-sample"
            )
        )
        result = judge("sweep", copy, "--no-plots", env={"RELJUDGE_CACHE": str(tmp_path / "c.sqlite")})
        assert result.returncode == 0, result.output
        assert srv.calls > 0
    rows = json.loads((tmp_path / "out" / "dl19-sample" / "analysis" / "cells.json").read_text())
    assert {r["task"] for r in rows} == {"binary", "graded", "pairwise"}
    assert all(r["invalid_rate"] == 0 for r in rows), rows  # the mock answers every prompt's format


def test_a_bad_question_id_keeps_file_and_line(tmp_path):
    from reljudge.judges.exam.question_files import read_exam_questions

    bank = tmp_path / "bank.tsv"
    bank.write_text("q1_1\tWhat is it?\n\nq1_2\tWhy?\nbad-id\tHow?\n")
    with pytest.raises(InputError) as info:
        read_exam_questions(bank)
    assert str(info.value) == f"{bank}:4: question id 'bad-id' is not '<qid>_<n>'"
