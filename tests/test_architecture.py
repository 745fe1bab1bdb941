"""The shape of the code base, checked: what a judging method is lives in its own module or package;
modules are split by idea (a module over 800 lines is named in a warning, one over 2,000 fails).

Method names: every string literal in ``src/reljudge`` that equals a method's name, one of its
record methods or one of its score-set names must sit in that method's own module or package. The
methods are those of the judge registry (`reljudge.judges.registry`): every built-in judge, with
the names it declares (``label_methods``, ``stage_methods``, ``set_names``). Words that are also
another vocabulary everywhere are not method names: the prompt output types ``binary``,
``pairwise`` and ``answer`` (the prompts' answer contract, which prompts, the custom judge and
sweeps share; also a sweep's tasks and an answer file's field) -- `OTHER_VOCABULARY`. Where a
method's name is used in another sense in one file (the output type ``nuggets``, the command
``judge generate``, the mock server's rule for a published prompt's format), `OTHER_SENSE` lists it
with the reason.
"""

from __future__ import annotations

import ast
import inspect
import warnings
from pathlib import Path

import pytest

from reljudge.judges.registry import registered

SRC = Path(__file__).resolve().parent.parent / "src" / "reljudge"

#: names of methods (or of their records) that are also another vocabulary everywhere, with the reason
OTHER_VOCABULARY: dict[str, str] = {
    "binary": "a prompt output type, an EXAM mode and a sweep task",
    "pairwise": "a prompt output type and a sweep task",
    "answer": "a prompt output type and the field of an answer file",
}


def _home(module: str) -> str:
    """A judge's home under src/reljudge: its module, or the package of a judge in a subpackage."""
    parts = module.split(".")[1:]  # judges, exam, judge
    return "/".join(parts[:2]) if len(parts) > 2 else "/".join(parts) + ".py"


def _declared(cls: type, name: str) -> tuple[str, ...]:
    value = inspect.getattr_static(cls, name, ())
    return tuple(value) if isinstance(value, (tuple, list)) else ()


def _methods() -> dict[str, tuple[str, tuple[str, ...]]]:
    """Method name -> (its home: a module or package under src/reljudge, its other names), for every
    built-in judge of the registry."""
    found = {}
    for name, cls in sorted(registered().items()):
        if not cls.__module__.startswith("reljudge."):
            continue  # an installed plugin: not in this source tree
        others = {
            *_declared(cls, "label_methods"),
            *_declared(cls, "stage_methods"),
            *_declared(cls, "set_names"),
        }
        found[name] = (_home(cls.__module__), tuple(sorted(others - {name} - set(OTHER_VOCABULARY))))
    return found


#: method name -> (its home: a module or package under src/reljudge, its other names)
METHODS: dict[str, tuple[str, tuple[str, ...]]] = _methods()
#: (file, name): a string equal to a method's name used there in another sense, with the reason
OTHER_SENSE: dict[tuple[str, str], str] = {
    ("prompts/output.py", "nuggets"): "an output type: a list of nuggets (the prompts' answer contract)",
    ("autojudge/outputs.py", "nuggets"): "the field of a Nuggetizer nugget bank (AutoJudge's format)",
    ("prompts/template.py", "nuggets"): "a placeholder role of the prompts ({nuggets})",
    ("prompts/parsing/lists.py", "nuggets"): "a JSON key a list answer may be wrapped in",
    ("judges/exam/judge.py", "nuggets"): "an output type the EXAM question prompt may declare",
    ("sweep/published.py", "umbrela"): "the name of a judgment file in the published release",
    ("sweep/published.py", "custom"): "the group of the published release's other prompts",
    ("sweep/prompts.py", "custom"): "the group of a sweep's own prompts",
    (
        "sweep/execute.py",
        "custom",
    ): "a sweep's prompt cells are runs of the custom judge (the method of prompts)",
    ("datasets.py", "custom"): "the name of a dataset directory that names none",
    ("cli/__init__.py", "generate"): "the command judge generate",
    ("cli/generate.py", "generate"): "the command judge generate, which runs the generate method",
    ("run/config.py", "generate"): "the command judge generate (the run options it takes)",
    ("run/options.py", "generate"): "the command judge generate (the run options it takes)",
    ("cli/demo.py", "umbrela"): "judge demo runs the quick start's command, judge run --method umbrela",
    (
        "cli/prompts.py",
        "custom",
    ): "judge prompts list: a prompt no judge takes by default runs with --method custom",
    ("testing/auto.py", "umbrela"): "the mock server's answer rule for the UMBRELA prompt's format",
    ("testing/auto.py", "nugget"): "the mock server's answer rule for the nugget prompts' format",
    (
        "testing/rules_methods.py",
        "citation-support",
    ): "the mock server's answer rule for the support prompt's format",
}


def _strings(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    return [
        (n.lineno, n.value)
        for n in ast.walk(tree)
        if isinstance(n, ast.Constant) and isinstance(n.value, str)
    ]


def _named_method(value: str) -> str | None:
    if value in OTHER_VOCABULARY:
        return None
    for method, (_, others) in METHODS.items():
        if value == method or value in others:
            return method
    return None


def test_the_methods_checked_are_every_built_in_judge_of_the_registry():
    built_in = {n for n, cls in registered().items() if cls.__module__.startswith("reljudge.")}
    assert set(METHODS) == built_in
    assert {"umbrela", "exam", "nuggets", "citation-support", "custom", "generate"} <= set(METHODS)
    assert {"exam-question", "exam-graded-max", "nugget-assignment", "nuggets-vital"} <= {
        o for _, others in METHODS.values() for o in others
    }
    assert METHODS["exam"][0] == "judges/exam" and METHODS["umbrela"][0] == "judges/umbrela.py"
    checked = {v for m, (_, o) in METHODS.items() for v in (m, *o)} - set(OTHER_VOCABULARY)
    assert not {name for _, name in OTHER_SENSE} - checked, "an exception for a name that is not checked"


@pytest.mark.slow
def test_no_module_outside_a_methods_package_names_that_method():
    found = []
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        for line, value in _strings(path):
            method = _named_method(value)
            if method is None or rel.startswith(METHODS[method][0]):
                continue
            if (rel, value) in OTHER_SENSE:
                continue
            found.append(f"{rel}:{line}: {value!r} names the method {method!r}")
    assert not found, "\n".join(found)


def test_the_check_finds_a_method_named_outside_its_package(tmp_path):
    sample = tmp_path / "runner.py"
    sample.write_text('if judge.name == "exam":\n    primary = "exam-graded-max"\n')
    assert [_named_method(v) for _, v in _strings(sample)] == ["exam", "exam"]


#: a module longer than this is worth a look (a warning, not a failure): split a module by idea,
#: never to get under a number; a module of one idea may be long
LONG_MODULE = 800
#: past this a module holds several ideas whatever its contents: the test fails
TOO_LONG = 2000


def test_long_modules_are_named_and_none_is_a_grab_bag():
    lengths = {
        p.relative_to(SRC).as_posix(): p.read_text(encoding="utf-8").count("\n") for p in SRC.rglob("*.py")
    }
    long = sorted((n, path) for path, n in lengths.items() if n > LONG_MODULE)
    for n, path in long:
        warnings.warn(f"{path} has {n} lines: does it hold one idea?", stacklevel=1)
    assert all(n <= TOO_LONG for n, _ in long), [f"{path}: {n} lines" for n, path in long if n > TOO_LONG]
