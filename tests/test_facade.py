"""The top-level façade (``import reljudge``): its public names are declared once, in
``reljudge._EXPORTS`` (name -> module), which drives the lazy loading, ``__all__`` and ``dir()``;
the imports under ``TYPE_CHECKING`` repeat it for type checkers and must agree with it; and
``import reljudge`` loads no application module (the names are imported on first use)."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

import reljudge

INIT = Path(reljudge.__file__)


def test_every_public_name_resolves_to_the_object_of_its_module():
    for name, module in reljudge._EXPORTS.items():
        assert getattr(reljudge, name) is getattr(importlib.import_module(module), name), name


def test_all_is_the_table():
    assert reljudge.__all__ == ["__version__", *reljudge._EXPORTS]
    namespace: dict[str, object] = {}
    exec("from reljudge import *", namespace)
    assert set(namespace) - {"__builtins__"} == set(reljudge.__all__)


def test_dir_lists_every_public_name_and_unknown_names_are_errors():
    listed = dir(reljudge)
    assert listed == sorted(listed) and set(reljudge.__all__) <= set(listed)
    with pytest.raises(AttributeError, match="has no attribute 'no_such_name'"):
        _ = reljudge.no_such_name


def _type_checking_imports(tree: ast.Module) -> dict[str, str]:
    block = next(
        node
        for node in tree.body
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"
    )
    found: dict[str, str] = {}
    for node in block.body:
        assert isinstance(node, ast.ImportFrom) and node.module is not None, ast.unparse(node)
        for alias in node.names:
            # "X as X": an explicit re-export, which strict type checkers need (``__all__`` is built)
            assert alias.asname == alias.name, f"import {alias.name} as {alias.name}"
            assert alias.name not in found, f"{alias.name} imported twice"
            found[alias.name] = node.module
    return found


def test_type_checkers_see_the_same_names_from_the_same_modules():
    imported = _type_checking_imports(ast.parse(INIT.read_text(encoding="utf-8")))
    assert imported == reljudge._EXPORTS


def test_the_check_finds_a_name_missing_from_the_type_checking_imports():
    source = (
        "if TYPE_CHECKING:\n"
        "    from reljudge.records import Judgment as Judgment\n"
        "    from reljudge.errors import InputError\n"
    )
    with pytest.raises(AssertionError, match="import InputError as InputError"):
        _type_checking_imports(ast.parse(source))
    found = _type_checking_imports(ast.parse(source.rsplit("\n", 2)[0] + "\n"))
    assert found == {"Judgment": "reljudge.records"} != reljudge._EXPORTS


def test_importing_reljudge_loads_no_application_module():
    code = (
        "import sys, reljudge\nprint('\\n'.join(sorted(m for m in sys.modules if m.startswith('reljudge'))))"
    )
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert loaded.split() == ["reljudge", "reljudge.version"]
