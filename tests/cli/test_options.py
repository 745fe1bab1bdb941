"""The options of ``judge run``, ``judge probe`` and ``judge generate`` are `RunConfig`'s Flags, declared once.

Every field carrying a `Flag` is an option of each command in its ``commands`` (name, short form,
help text and bounds from the field); the commands have no other option but the few each
declares itself; and ``judge --help`` lists both commands without importing pydantic or the run
package (their options are made when one of them is used).
"""

from __future__ import annotations

import re
import subprocess
import sys
from typing import Any

import pytest
import typer
import typer.main

from reljudge.cli import app
from reljudge.cli.deferred import DeferredCommand
from reljudge.cli.options import run_config, signature, with_run_options
from reljudge.errors import InputError
from reljudge.run import RunConfig
from reljudge.run.options import RUN_COMMANDS

#: the options each command declares itself, besides its Flags
OWN_OPTIONS: dict[str, set[str]] = {
    "run": {"--json", "--yes", "-y", "--confirm-above"},
    "probe": {"--sample", "--seed", "--perturbation", "--out", "--output", "--max-flip-rate", "--json"},
    "generate": {"--name", "--answers", "--json"},
}


def command(name: str) -> Any:
    """The full click command of ``judge NAME``, as `JudgeGroup` builds it when it is used."""
    deferred = typer.main.get_command(app).commands[name]  # type: ignore[attr-defined]
    assert isinstance(deferred, DeferredCommand)
    return deferred.load()


def options(name: str) -> dict[str, Any]:
    """Option string (``--seed``, ``-o``) -> the click option of ``judge NAME``."""
    return {opt: p for p in command(name).params for opt in p.opts if opt != "--help"}


def test_the_commands_taking_run_options_are_run_probe_and_generate():
    assert set(RUN_COMMANDS) == set(OWN_OPTIONS)


@pytest.mark.parametrize("name", RUN_COMMANDS)
def test_every_flag_is_an_option_of_its_commands(name):
    found = options(name)
    flags = RunConfig.flags(name)
    assert flags
    for field, flag in flags.items():
        assert flag.name in found, f"{field}: {flag.name} is not an option of judge {name}"
        option = found[flag.name]
        assert option.help == flag.help_text
        assert option.name == flag.param
        if flag.short:
            assert found[flag.short] is option
        for alias in flag.aliases:
            assert found[alias] is option


@pytest.mark.parametrize("name", RUN_COMMANDS)
def test_no_option_without_a_flag_but_the_commands_own(name):
    flagged = set()
    for flag in RunConfig.flags(name).values():
        flagged |= {flag.name, *flag.aliases} | ({flag.short} if flag.short else set())
    assert set(options(name)) == flagged | OWN_OPTIONS[name]
    assert not flagged & OWN_OPTIONS[name]


def test_a_flag_left_out_of_a_command_is_not_its_option():
    run_only = [f.name for f in RunConfig.flags("run").values() if "probe" not in f.commands]
    assert "--pairs" in run_only and "--dry-run" in run_only
    assert not set(run_only) & set(options("probe")) - OWN_OPTIONS["probe"]
    # probe's own --out (the report file) is not the run directory of `judge run`
    assert options("probe")["--out"].help != options("run")["--out"].help
    run_options = options("run")
    assert run_options["--out"] is run_options["--output"]  # one option, two names


def test_type_default_and_bounds_come_from_the_field():
    run = options("run")
    assert run["--max-attempts"].default == 6 and run["--max-attempts"].min == 1
    assert run["--concurrency"].default == "8"  # the Flag's own type: N or fixed:N
    assert run["--timeout"].default == 60.0 and run["--timeout"].min == 0.0  # gt=0: validated
    assert isinstance(run["--timeout"].min, float) and run["--timeout"].max is None
    assert (run["--max-failure-rate"].min, run["--max-failure-rate"].max) == (0.0, 1.0)
    assert run["--warn-passage-chars"].default == 20_000 and run["--warn-passage-chars"].min == 0
    assert run["--method"].required and run["--model"].required
    assert run["--seed"].default == 42 and run["--pool"].default == "qrels"
    assert run["--no-cache"].default is False  # the Flag's own type and default (use_cache=True)


def test_a_variant_renames_the_option_for_one_command():
    probe = options("probe")
    assert probe["--model-seed"].name == "model_seed" and probe["--model-seed"].default == 42
    assert probe["--seed"].default == 0  # the seed of the sample, probe's own
    config = run_config("probe", {"method": "binary", "model": "m", "model_seed": 7})
    assert config.seed == 7


def test_run_config_parses_values_and_names_the_option_of_a_bad_one():
    values = {"method": "binary", "model": "m", "no_cache": True, "no_progress": True, "option": ["p=5"]}
    config = run_config("run", values, command=["judge", "run"])
    assert config.use_cache is False and config.progress is False and config.options == {"p": 5}
    assert config.command == ["judge", "run"]
    with pytest.raises(InputError, match=r"^--max-attempts: Input should be greater than or equal to 1"):
        run_config("run", {**values, "max_attempts": 0})


def test_a_command_option_that_collides_with_a_flag_is_refused():
    @with_run_options("run")
    def clash(sample_seed: int = typer.Option(0, "--seed"), **run_options: Any) -> None:
        """A command whose own --seed would shadow the Flag of the model's seed."""

    with pytest.raises(TypeError, match="--seed is declared twice"):
        signature(clash)

    @with_run_options("run")
    def same_name(seed: int = typer.Option(0, "--sample-seed"), **run_options: Any) -> None:
        """A command whose own parameter has the name of a Flag's."""

    with pytest.raises(TypeError, match="seed is declared twice"):
        signature(same_name)

    @with_run_options("run", after={"json_output": "no_such_field"})
    def misplaced(json_output: bool = typer.Option(False, "--json"), **run_options: Any) -> None:
        """A command placing its option after a field that does not exist."""

    with pytest.raises(TypeError, match="no_such_field"):
        signature(misplaced)


def test_help_lists_run_and_probe_without_loading_pydantic_or_the_run_package():
    code = (
        "import sys\n"
        "sys.argv = ['judge', '--help']\n"
        "from reljudge.cli import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "print('loaded:', sorted(m for m in sys.modules if m.split('.')[0] == 'pydantic' "
        "or m.startswith('reljudge.run')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "loaded: []" in out.stdout, out.stdout
    # the column width follows the longest command name
    assert re.search(r"\n  run +Judge a pool of \(topic, passage\) items", out.stdout), out.stdout
    assert re.search(r"\n  probe +Re-judge a sample with the passages altered", out.stdout), out.stdout
