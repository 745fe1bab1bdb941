"""Sweep files: validation with file:line, prompt collections, grid, published reader, analysis."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from _cli import judge
from reljudge.errors import InputError
from reljudge.sweep.analysis import Conventions, analyze
from reljudge.sweep.config import load_sweep_config
from reljudge.sweep.grid import expand_grid, parse_only
from reljudge.sweep.prompts import load_collection, resolve_prompts
from reljudge.sweep.published import read_published

GOOD = """\
name: t
datasets: [dl19-sample]
models:
  - {name: m, model: openai/x}
prompts:
  - id: p1
    binary: {user: "Q: {query} P: {document}"}
    pairwise: {user: "Q: {query} A: {documentA} B: {documentB}"}
"""


def _cfg(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "s.yaml"
    p.write_text(text, encoding="utf-8")
    return p


def test_good_config_expands_to_cells(tmp_path):
    cfg = load_sweep_config(_cfg(tmp_path, GOOD))
    prompts, skipped = resolve_prompts(cfg)
    cells = expand_grid(cfg, prompts)
    assert [c.id for c in cells] == ["dl19-sample/m/binary/p1", "dl19-sample/m/pairwise/p1"]
    assert [c.id for c in expand_grid(cfg, prompts, parse_only(["task=pair*"]))] == [
        "dl19-sample/m/pairwise/p1"
    ]
    assert not skipped


@pytest.mark.parametrize(
    ("text", "line", "needle"),
    [
        (GOOD.replace("name: t", "name: t\nbogus: 1"), 2, "unknown key 'bogus'"),
        (
            GOOD.replace("{name: m, model: openai/x}", "{name: m, model: openai/x, temp: 0}"),
            4,
            "unknown key 'temp'",
        ),
        (GOOD.replace('"Q: {query} P: {document}"', '"Q: {query} P: {Document}"'), 7, "missing {document}"),
        (GOOD.replace("A: {documentA}", "A:"), 8, "missing {documentA}"),
        (GOOD + "  - id: p1\n    binary: {user: '{query} {document}'}\n", None, "defined twice"),
        ("name: [unclosed\n", 2, "invalid YAML"),
        (GOOD.replace("name: t\n", "name: t\nname: u\n"), 2, "duplicate key"),
        (GOOD.replace("models:\n  - {name: m, model: openai/x}\n", ""), None, "models"),
        (
            GOOD.replace("{name: m, model: openai/x}", "{name: m, model: openai/x, api_key: sk-1}"),
            4,
            "api_key_env",
        ),
    ],
)
def test_bad_configs_name_file_and_line(tmp_path, text, line, needle):
    path = _cfg(tmp_path, text)
    with pytest.raises(InputError) as info:
        cfg = load_sweep_config(path)
        resolve_prompts(cfg)
    assert needle in str(info.value)
    assert info.value.path == str(path)
    if line is not None:
        assert info.value.line == line


def test_cli_bad_config_exit_2(tmp_path):
    path = _cfg(tmp_path, GOOD.replace("name: t", "name: t\nbogus: 1"))
    import sys

    from reljudge.cli import main

    argv = sys.argv
    sys.argv = ["judge", "sweep", str(path), "--dry-run"]
    try:
        with pytest.raises(SystemExit) as info:
            main()
    finally:
        sys.argv = argv
    assert info.value.code == 2


def test_collection_with_bad_prompt_errors_with_json_line(tmp_path):
    data = {
        "0": {"participant_name": "human-0", "binary": {"system": "s", "user": "{query} {document}"}},
        "1": {"participant_name": "LLM-X", "binary": {"system": "s", "user": "{query} {Document}"}},
    }
    path = tmp_path / "p.json"
    path.write_text(json.dumps(data, indent=1), encoding="utf-8")
    with pytest.raises(InputError) as info:
        load_collection(path)
    assert info.value.line is not None and "{Document}" in path.read_text().splitlines()[info.value.line - 1]
    prompts, skipped = load_collection(path, invalid="skip")
    assert [(p.id, p.group) for p in prompts] == [("0", "human")]
    assert [(s.id, s.task) for s in skipped] == [("1", "binary")]


def _tarball(tmp_path: Path) -> Path:
    import tarfile

    root = tmp_path / "rel"
    files = {
        "m/binary/m_binary_dl20_0.txt": "1 0 a 1\n1 0 b 0\n1 0 c 9\n",  # 9 is invalid
        "m/binary/m_binary_dl20_16.txt": "1 0 a 1\n1 0 b 1\n1 0 c 0\n",
        "m/binary/m_binary_dl20_4.txt": "1 0 a 1\n",  # excluded by the authors
        "m/pairwise/m_pairwise_dl20_0.txt": "1 low_top a c agree\n1 mid_top a b tie\n",
        "m/pairwise/m_pairwise_dl20_16.txt": "1 low_top a c disagree\n1 mid_top b a agree\n",
    }
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    tar = tmp_path / "judgments.tar.gz"
    with tarfile.open(tar, "w:gz") as t:
        t.add(root, arcname=".")
    return tar


def test_published_reader_and_analysis(tmp_path):
    tar = _tarball(tmp_path)
    cells, notes = read_published(tar)
    assert [c.key for c in cells] == [
        ("dl20", "m", "binary", "0"),
        ("dl20", "m", "binary", "16"),
        ("dl20", "m", "pairwise", "0"),
        ("dl20", "m", "pairwise", "16"),
    ]
    assert "4" in notes[0]
    assert cells[0].items == 3 and cells[0].invalid == 1
    qrels = {"dl20": {"1": {"a": 3, "b": 2, "c": 0}}}
    result = analyze(cells, qrels, Conventions(threshold=3))
    rows = {(r["task"], r["prompt"]): r for r in result.rows}
    # prompt 0 binary: human (>=3) a=1 b=0; judge a=1 b=0 -> perfect agreement on 2 items
    assert rows[("binary", "0")]["kappa"] == pytest.approx(1.0)
    assert rows[("pairwise", "0")]["agree"] == pytest.approx(0.5)
    assert rows[("pairwise", "16")]["disagree"] == pytest.approx(0.5)
    summary = {(s["task"], s["group"]): s for s in result.summary}
    assert summary[("pairwise", "human")]["mean"] == pytest.approx(0.5)
    assert summary[("pairwise", "llm")]["mean"] == pytest.approx(0.5)
    alpha = {a.task: a for a in result.alphas}
    assert alpha["binary"].matrix.shape == (2, 2)
    assert np.isfinite(alpha["binary"].overall)
    # the same analysis from the extracted directory and through the CLI
    out = tmp_path / "a"
    res = judge(
        "sweep",
        "--from-judgments",
        str(tar),
        "--qrels",
        f"dl20={_qrels(tmp_path)}",
        "--out",
        str(out),
        "--no-plots",
    )
    assert res.returncode == 0, res.output
    assert (out / "summary.csv").exists() and (out / "report.md").exists()


def _qrels(tmp_path: Path) -> Path:
    p = tmp_path / "q.txt"
    p.write_text("1 0 a 3\n1 0 b 2\n1 0 c 0\n")
    return p


@pytest.mark.shared
@pytest.mark.slow
def test_published_numbers_match_reference(shared_data: Path):
    """κ values re-computed in thesis-reference-code.md §2.5 (DL20, threshold 2)."""
    from reljudge.io.trec import read_qrels

    tarball = shared_data / "prompt-sensitivity" / "judgments.tar.gz"
    if not tarball.exists():
        pytest.skip(f"published judgments not available ({tarball})")
    cells, _ = read_published(tarball, datasets={"dl20"})
    keep = [c for c in cells if c.prompt in ("0", "16") and c.task != "pairwise"]
    qrels = {"dl20": read_qrels(shared_data / "trec-dl20" / "qrels.txt")}
    rows = {(r["model"], r["task"], r["prompt"]): r for r in analyze(keep, qrels, alpha=False).rows}
    assert rows[("gpt-4o", "binary", "0")]["kappa"] == pytest.approx(0.482, abs=5e-4)
    assert rows[("gpt-4o", "binary", "16")]["kappa"] == pytest.approx(0.518, abs=5e-4)
    assert rows[("gpt-4o", "graded", "0")]["kappa"] == pytest.approx(0.341, abs=5e-4)
    assert rows[("llama3.2", "binary", "0")]["kappa"] == pytest.approx(0.291, abs=5e-4)
    assert rows[("llama3.2", "graded", "0")]["kappa"] == pytest.approx(0.181, abs=5e-4)
