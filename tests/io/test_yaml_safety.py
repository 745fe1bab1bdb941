"""YAML from users cannot bloat or crash a run (issue 9, item 10).

A "billion laughs" file (nine levels of nine aliases: a few hundred bytes, 9^9 values when
expanded) and a recursive alias, given to every entry point that reads YAML -- the sweep config,
a sweep's prompt collection, a prompt file, a price file -- end in `InputError` naming
``file:line`` (exit 2 from the CLI), with the peak memory of the process growing by far less
than the expansion would need. Each loader runs in a child process with a capped address space,
so a loader that does expand the bomb fails there quickly instead of filling the machine.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from reljudge.errors import InputError, shown
from reljudge.io import yamlsafe
from reljudge.io.yamlsafe import ALIAS_MESSAGE, load_yaml
from reljudge.llm.pricing import load_prices
from reljudge.prompts import list_prompts
from reljudge.prompts.template import PromptError, PromptTemplate
from reljudge.sweep.config import load_sweep_config
from reljudge.sweep.prompts import resolve_prompts

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
#: peak-RSS growth allowed while refusing a bomb (the expansion would need gigabytes)
MAX_GROWTH_MB = 50


def laughs() -> str:
    """A flow list of nine anchored lists, each holding nine aliases of the one before."""
    levels = "abcdefghi"
    items = ["&a [" + ", ".join(['"lol"'] * 9) + "]"]
    items += [
        f"&{cur} [" + ", ".join([f"*{prev}"] * 9) + "]"
        for prev, cur in zip(levels[:-1], levels[1:], strict=True)
    ]
    return "[" + ", ".join(items) + "]"


# Each bomb sits where the entry point reads a value (not behind an earlier check), so that the
# old loaders expanded it: the sweep walker built a line map of every path, a prompt file's
# `source` was str()-ed, a price was repr()-ed into the error message.
BOMBS = {
    "sweep": ("name: bomb\nmodels: " + laughs() + "\n", 2),
    "collection": ("p1:\n  binary: " + laughs() + "\n", 2),
    "prompt": ("id: bomb\noutput: binary\nsource: {lol: " + laughs() + "}\nuser: '{query} {document}'\n", 3),
    "prices": ("gpt-4o: {input: 1, output: 2}\nm: " + laughs() + "\n", 2),
}
RECURSIVE = {
    "sweep": ("name: loop\nmodels: &a [*a]\n", 2),  # was a RecursionError
    "collection": ("p1: &a {binary: *a}\n", 1),
    "prompt": ("id: loop\noutput: binary\nsource: &a {x: *a}\nuser: '{query} {document}'\n", 3),
    "prices": ("m: &a [*a]\n", 1),
}

_CHILD = r"""
import json, resource, sys
from pathlib import Path

from reljudge.errors import InputError
from reljudge.llm.pricing import load_prices
from reljudge.prompts.template import PromptTemplate
from reljudge.sweep.config import load_sweep_config
from reljudge.sweep.prompts import load_collection

LOAD = {"sweep": load_sweep_config, "collection": load_collection, "prompt": PromptTemplate.from_file,
        "prices": load_prices}
entry, path = sys.argv[1], Path(sys.argv[2])
with open("/proc/self/status") as status:
    vm_kb = next(int(line.split()[1]) for line in status if line.startswith("VmSize:"))
cap = (vm_kb + 512 * 1024) * 1024  # address space now + 512 MiB: an expanding loader dies fast
resource.setrlimit(resource.RLIMIT_AS, (cap, resource.getrlimit(resource.RLIMIT_AS)[1]))
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
try:
    LOAD[entry](path)
    outcome = {"raised": None}
except InputError as err:
    outcome = {"raised": "InputError", "message": str(err)}
except BaseException as err:  # MemoryError, RecursionError, ...: what the test must not see
    outcome = {"raised": type(err).__name__, "message": str(err)[:300]}
outcome["growth_mb"] = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
print(json.dumps(outcome))
"""


def _load_in_child(entry: str, path: Path) -> dict:
    # the timeout only guards against a hang; the bound under test is memory
    proc = subprocess.run(
        [sys.executable, "-c", _CHILD, entry, str(path)], capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc and caps RLIMIT_AS")
@pytest.mark.parametrize("bombs", [BOMBS, RECURSIVE], ids=["billion-laughs", "recursive-alias"])
@pytest.mark.parametrize("entry", ["sweep", "collection", "prompt", "prices"])
@pytest.mark.slow
def test_alias_bomb_is_an_input_error_with_bounded_memory(tmp_path, entry, bombs):
    text, line = bombs[entry]
    path = tmp_path / f"{entry}.yaml"
    path.write_text(text)
    outcome = _load_in_child(entry, path)
    assert outcome["raised"] == "InputError", outcome
    assert outcome["message"] == f"{path}:{line}: {ALIAS_MESSAGE}"
    assert outcome["growth_mb"] < MAX_GROWTH_MB, outcome


def _judge(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    # a real process: should the bomb go off, it exhausts that process's memory, not the test run's
    return subprocess.run(
        [sys.executable, "-m", "reljudge", *args], cwd=cwd, capture_output=True, text=True, timeout=300
    )


@pytest.mark.parametrize("entry", ["sweep", "prompt", "prices"])
@pytest.mark.slow
def test_cli_refuses_an_alias_bomb_with_exit_2(tmp_path, entry):
    text, line = BOMBS[entry]
    path = tmp_path / f"{entry}.yaml"
    path.write_text(text)
    run = ["run", "--method", "binary", "--model", "openai/x", "--dataset", "dl19-sample", "--dry-run"]
    args = {
        "sweep": ["sweep", str(path), "--dry-run"],
        "prompt": [*run, "--prompt", str(path)],
        "prices": [*run, "--prices", str(path)],
    }[entry]
    proc = _judge(*args, cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert proc.stderr.strip().splitlines()[-1] == f"error: {path}:{line}: {ALIAS_MESSAGE}"
    assert "Traceback" not in proc.stderr


# --- the other bounds: nesting, number of values, size, values PyYAML cannot build -----------


@pytest.mark.parametrize(
    "text, line, message",
    [
        ("a: " + "[" * 10_000 + "]" * 10_000 + "\n", 1, f"nested deeper than {yamlsafe.MAX_DEPTH} levels"),
        ("[" + ", ".join(["0"] * (yamlsafe.MAX_NODES + 10)) + "]", 1, "more than"),
        ("n: " + "9" * 5000 + "\n", None, "invalid YAML value"),  # int() refuses > 4300 digits
        ("when: 2001-02-30\n", None, "invalid YAML value"),
        ("a: !!python/object:os.system {}\n", 1, "invalid YAML"),
        ("a: [1, 2\n", 2, "invalid YAML"),
        ("- a\n- &x b\n", 2, ALIAS_MESSAGE),
        ("a: 1\n<<: *m\n", 2, ALIAS_MESSAGE),
    ],
    ids=["deep", "many-values", "huge-int", "bad-date", "python-tag", "syntax", "anchor-only", "merge-key"],
)
@pytest.mark.slow
def test_load_yaml_bounds(text, line, message):
    with pytest.raises(InputError) as info:
        load_yaml(text, "f.yaml")
    assert info.value.path == "f.yaml" and info.value.line == line
    assert message in info.value.message
    assert len(str(info.value)) < 300


def test_a_file_larger_than_the_bound_is_refused_before_parsing(tmp_path, monkeypatch):
    monkeypatch.setattr(yamlsafe, "MAX_BYTES", 1000)
    path = tmp_path / "big.yaml"
    path.write_text("a: " + "x" * 2000 + "\n")
    for load in (load_sweep_config, PromptTemplate.from_file, load_prices):
        with pytest.raises(InputError, match="larger than 1,000 bytes, too large for a YAML file"):
            load(path)
    with pytest.raises(InputError, match="too large"):
        load_yaml(path.read_text(), path)


def test_json_deeply_nested_price_file_is_an_input_error(tmp_path):
    path = tmp_path / "prices.json"
    path.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(InputError, match="not valid JSON"):
        load_prices(path)


def test_a_prompt_file_error_is_still_a_prompt_error(tmp_path):
    path = tmp_path / "p.yaml"
    path.write_text("id: p\noutput: &o binary\nuser: '{query} {document}'\n")
    with pytest.raises(PromptError, match=re.escape(ALIAS_MESSAGE)) as info:
        PromptTemplate.from_file(path)
    assert info.value.line == 2


# --- values from a file appear in messages cut short ------------------------------------------


def test_shown_is_short_and_never_fails():
    assert shown("binary") == "'binary'"
    assert len(shown("x" * 1_000_000)) <= 80
    assert len(shown(list(range(100_000)))) <= 80
    assert "integer" in shown(10**5000)  # repr() of it raises ValueError
    loop: list = []
    loop.append(loop)
    assert len(shown(loop)) <= 80
    assert len(shown({"k": [[[[["deep"]]]]]})) <= 80


@pytest.mark.parametrize(
    "text",
    [
        "m: {input: " + "9" * 400 + ", output: 1}\n",  # float() of it overflows
        "m: {input: -1, output: 1}\n",
        "m: {input: .nan, output: 1}\n",
        "m: [" + ", ".join(["1"] * 5000) + "]\n",
        "m: '" + "x" * 100_000 + "'\n",
    ],
    ids=["overflow", "negative", "nan", "long-list", "long-string"],
)
def test_bad_price_is_a_short_input_error(tmp_path, text):
    path = tmp_path / "prices.yaml"
    path.write_text(text)
    with pytest.raises(InputError, match="price of 'm' must be") as info:
        load_prices(path)
    # the message without the file's name (whose length depends on where pytest puts tmp_path)
    assert len(str(info.value).replace(str(path), "")) < 250


def test_prompt_file_with_huge_or_odd_values_gives_short_errors(tmp_path):
    cases = {
        "long-output": "id: p\noutput: '" + "x" * 100_000 + "'\nuser: '{query} {document}'\n",
        "long-id": "id: '" + "p" * 100_000 + "'\nuser: '{query} {document}'\n",
        "mixed-keys": "id: p\noutput: binary\nuser: '{query} {document}'\n1: x\nzz: y\n",
        "many-keys": "id: p\n" + "".join(f"k{i}: 1\n" for i in range(2000)),
    }
    for name, text in cases.items():
        path = tmp_path / f"{name}.yaml"
        path.write_text(text)
        with pytest.raises(PromptError) as info:
            PromptTemplate.from_file(path)
        assert len(str(info.value)) < 400, name


def test_sweep_errors_cut_long_values(tmp_path):
    path = tmp_path / "sweep.yaml"
    path.write_text(
        "name: '" + "n" * 100_000 + "'\nmodels: [openai/x]\ndatasets: ['" + "d" * 100_000 + "']\n"
    )
    with pytest.raises(InputError) as info:
        load_sweep_config(path)
    assert len(str(info.value)) < 600


def test_collection_with_mixed_key_types_is_an_input_error(tmp_path):
    from reljudge.sweep.prompts import load_collection

    path = tmp_path / "prompts.yaml"
    path.write_text("p1:\n  binary: {user: '{query} {document}'}\n  1: x\n  zz: y\n")
    with pytest.raises(InputError, match="unknown key"):
        load_collection(path)


# --- what reljudge ships still loads ------------------------------------------------------------


def test_shipped_yaml_has_no_aliases_and_still_loads():
    templates = list_prompts()
    assert len(templates) >= 10
    for example in sorted(EXAMPLES.glob("*.yaml")):
        config = load_sweep_config(example)
        if all(not entry.file for entry in config.prompts):
            prompts, skipped = resolve_prompts(config)
            assert prompts and not skipped


def test_user_prompt_file_and_price_file_without_aliases_load(tmp_path):
    prompt = tmp_path / "mine.yaml"
    prompt.write_text(
        "id: mine\noutput: graded:0-3\nsystem: You judge passages.\n"
        "user: 'Query: {query}\\nPassage: {document}\\nGrade 0-3.'\n"
    )
    tpl = PromptTemplate.from_file(prompt)
    assert tpl.id == "mine" and "q?" in tpl.render(query="q?", document="d")[-1]["content"]
    prices = tmp_path / "prices.yaml"
    prices.write_text("my-model: {input: 1.5, output: 3}\nother: [0, 0]\n")
    table = load_prices(prices)
    # (input, output, cached_input): no cached price given
    assert table["my-model"] == (1.5, 3.0, None, None, None) and table["other"] == (
        0.0,
        0.0,
        None,
        None,
        None,
    )


def test_option_value_with_aliases_stays_a_string():
    from reljudge.run import parse_option_value, parse_options

    bomb = laughs()
    # before: a 9^9-value structure of shared lists, expanded when the job identity was serialised
    assert parse_option_value(bomb) == bomb
    assert parse_option_value("&a [*a]") == "&a [*a]"  # before: a list that contains itself
    assert parse_options(["n=3", "xs=[1, 2]", f"p={bomb}"]) == {"n": 3, "xs": [1, 2], "p": bomb}
