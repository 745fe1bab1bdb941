"""Finding a Python with TREC AutoJudge's packages (autojudge-base 1.0.0, autojudge-evaluate
1.1.0), for the tests that run them for real.

They are not in ``.[dev]`` (a ~3-minute install of pandas, tira, docker, gitpython, nltk, ...), so
the tests use, in this order: the interpreter named by ``RELJUDGE_AUTOJUDGE_PYTHON`` (a separate
virtualenv: ``pip install 'reljudge[autojudge]'`` there), or the running interpreter when it can
import them; otherwise they skip and say so.

autojudge-base runs ``nltk.data.find('tokenizers/punkt')`` and ``stopwords.words('english')`` in
a class body at import and ``nltk.download``s what is missing, which fails offline. Nothing on
the paths used here calls the tokenizer or the stopwords (only its near-duplicate helper, never
called by ``auto-judge run`` or ``meta-evaluate``), so `nltk_stub` makes a data folder holding an
empty ``tokenizers/punkt/`` and an empty ``corpora/stopwords/english``: the import then needs no
network. An ``NLTK_DATA`` already set is kept.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ENV_VAR = "RELJUDGE_AUTOJUDGE_PYTHON"
MODULES = ("autojudge_base", "autojudge_evaluate")


def nltk_stub(folder: Path) -> Path:
    """An NLTK data folder that lets ``import autojudge_base`` run offline (module docstring)."""
    (folder / "tokenizers" / "punkt").mkdir(parents=True, exist_ok=True)
    (folder / "corpora" / "stopwords").mkdir(parents=True, exist_ok=True)
    (folder / "corpora" / "stopwords" / "english").touch()
    return folder


def autojudge_python(tmp_root: Path) -> tuple[str, dict[str, str]]:
    """The interpreter to run AutoJudge's packages with and its environment (this worktree's
    ``src`` first on the path, an offline NLTK folder, no network for NLTK); skips the test with
    the reason when there is none."""
    named = os.environ.get(ENV_VAR)
    if named:
        python = named
    elif all(importlib.util.find_spec(m) is not None for m in MODULES):
        python = sys.executable
    else:
        pytest.skip(
            f"autojudge-base/autojudge-evaluate are not importable here and {ENV_VAR} is not set "
            f"(make a venv with `pip install -e '.[autojudge]'` and point {ENV_VAR} at its python)"
        )
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env.setdefault("NLTK_DATA", str(nltk_stub(tmp_root / "nltk_data")))
    probe = subprocess.run(
        [python, "-c", "import autojudge_base, autojudge_evaluate"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    if probe.returncode != 0:
        tail = (probe.stderr.strip().splitlines() or ["?"])[-1]
        pytest.skip(f"{python} cannot import autojudge-base/autojudge-evaluate: {tail}")
    return python, env


def console_script(python: str, name: str) -> str:
    """A console script (``auto-judge``, ``auto-judge-evaluate``) installed next to ``python``."""
    return str(Path(python).parent / name)
