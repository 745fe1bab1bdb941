"""The shape of the code base, checked: what a judging method is lives in its own module or package;
modules are split by idea (a module over 800 lines is named in a warning, one over 2,000 fails).

Method names: every string literal in ``src/reljudge`` that equals a method's name, one of its
record methods or one of its score-set names must sit in that method's own module or package.
Words that are also another vocabulary are not method names there: the prompt output types
(``binary``, ``graded``, ``pairwise``, ``questions``, ``nuggets``, ``labels``: the prompts' answer
contract, which prompts, the custom judge and sweeps share) and the key ``preferences`` under which
a score set keeps its comparisons. The mock server (`reljudge.testing`) answers the published
prompts in their formats, keyed by prompt, and the published prompt-sensitivity release names its
UMBRELA column: both are data about prompts, listed below with the reason.
"""

from __future__ import annotations

import ast
import warnings
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parent.parent / "src" / "reljudge"

#: method name -> (its home: a module or package under src/reljudge, its other names)
METHODS: dict[str, tuple[str, tuple[str, ...]]] = {
    "umbrela": ("judges/umbrela.py", ()),
    "exam": ("judges/exam", ("exam-question", "exam-binary", "exam-graded-max", "exam-graded-mean")),
    "nuggets": (
        "judges/nuggets",
        ("nugget", "nugget-creation", "nugget-assignment")
        + tuple(
            f"nuggets-{s}"
            for s in ("all", "all-strict", "vital", "vital-strict", "weighted", "weighted-strict")
        ),
    ),
}
#: (file, name): a string equal to a method's name used there in another sense, with the reason
OTHER_SENSE: dict[tuple[str, str], str] = {
    ("prompts/output.py", "nuggets"): "an output type: a list of nuggets (the prompts' answer contract)",
    ("prompts/template.py", "nuggets"): "a placeholder role of the prompts ({nuggets})",
    ("prompts/parsing/lists.py", "nuggets"): "a JSON key a list answer may be wrapped in",
    ("judges/exam/judge.py", "nuggets"): "an output type the EXAM question prompt may declare",
    ("sweep/published.py", "umbrela"): "the name of a judgment file in the published release",
    ("testing/auto.py", "umbrela"): "the mock server's answer rule for the UMBRELA prompt's format",
    ("testing/auto.py", "nugget"): "the mock server's answer rule for the nugget prompts' format",
}


def _strings(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    return [
        (n.lineno, n.value)
        for n in ast.walk(tree)
        if isinstance(n, ast.Constant) and isinstance(n.value, str)
    ]


def _named_method(value: str) -> str | None:
    for method, (_, others) in METHODS.items():
        if value == method or value in others:
            return method
    return None


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
    lengths = {p.relative_to(SRC).as_posix(): p.read_text(encoding="utf-8").count("\n") for p in SRC.rglob("*.py")}
    long = sorted((n, path) for path, n in lengths.items() if n > LONG_MODULE)
    for n, path in long:
        warnings.warn(f"{path} has {n} lines: does it hold one idea?", stacklevel=1)
    assert all(n <= TOO_LONG for n, _ in long), [f"{path}: {n} lines" for n, path in long if n > TOO_LONG]
