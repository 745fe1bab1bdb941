"""One convention across the command line (issue 17): every command that writes takes ``--out``
and accepts ``--output`` as the same option; every command that prints a result has ``--json``."""

from __future__ import annotations

from typing import Any

import typer

from _cli import judge
from reljudge.cli import app
from reljudge.cli.deferred import DeferredCommand

#: commands whose output is a result a script may want to read
PRINTS_A_RESULT = {
    "run",
    "probe",
    "evaluate",
    "fd",
    "histogram",
    "pool-bias",
    "sparsify",
    "leaderboard",
    "sweep",
    "datasets",
    "combine",
    "calibrate",
    "answers similarity",
    "assess export",
    "grids",
    "cache stats",
    "prompts list",
    "prompts show",
    "prompts render",
    "shallow btp-pairs",
    "shallow btp",
    "shallow pool",
    "shallow tournament",
    "shallow leaderboard",
}


def commands() -> dict[str, Any]:
    """Every leaf command of `judge`, by its space-separated name (deferred ones built)."""
    found: dict[str, Any] = {}

    def walk(group: Any, prefix: str) -> None:
        for name, command in group.commands.items():
            if isinstance(command, DeferredCommand):
                command = command.load()
            full = f"{prefix}{name}"
            if hasattr(command, "commands"):  # a group (typer ships its own click)
                walk(command, full + " ")
            else:
                found[full] = command

    walk(typer.main.get_command(app), "")
    return found


def test_out_and_output_are_one_option_everywhere():
    writers = []
    for name, command in commands().items():
        for param in command.params:
            names = set(param.opts) | set(getattr(param, "secondary_opts", []))
            if "--out" in names or "--output" in names:
                assert {"--out", "--output"} <= names, f"judge {name}: {sorted(names)}"
                writers.append(name)
    assert {"run", "evaluate", "fd", "sweep", "export", "report", "combine", "shallow pool"} <= set(writers)


def test_every_command_that_prints_a_result_has_json():
    found = commands()
    assert PRINTS_A_RESULT <= set(found), PRINTS_A_RESULT - set(found)
    for name in sorted(PRINTS_A_RESULT):
        opts = {o for p in found[name].params for o in p.opts}
        assert "--json" in opts, f"judge {name} has no --json"


def test_sweep_dry_run_json_is_the_estimate():
    import json
    from pathlib import Path

    example = Path(__file__).resolve().parents[2] / "examples" / "sweep-sample.yaml"
    result = judge("sweep", str(example), "--dry-run", "--json")
    assert result.returncode == 0, result.output
    data = json.loads(result.stdout)
    assert data["cells"] == 6 and data["calls"] > 0 and "per_model" in data


def test_analysis_json_is_the_file_it_writes(tmp_path):
    import json

    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"q{i} 0 d{j} {(3 - j) % 4}\n" for i in range(4) for j in range(6)))
    runs = tmp_path / "runs"
    runs.mkdir()
    for k in range(4):
        lines = [f"q{i} Q0 d{(j + k) % 6} {j + 1} {10 - j} r{k}\n" for i in range(4) for j in range(6)]
        (runs / f"r{k}").write_text("".join(lines))
    out = tmp_path / "sparse"
    argv = [
        "sparsify",
        "--qrels",
        str(qrels),
        "--runs",
        str(runs),
        "--repeats",
        "2",
        "--json",
        "--out",
        str(out),
    ]
    result = judge(*argv)
    assert result.returncode == 0, result.output
    assert json.loads(result.stdout) == json.loads(next(out.glob("*.json")).read_text())
