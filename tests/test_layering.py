"""The layering of the packages: no module imports from a floor above it, no import circle
between any two modules of reljudge, and the pure modules (`reljudge.metrics`, what an embedding
source is, and every computation module of an analysis folder) stay pure: no file I/O, no
application module.

The floors, lowest first: records/errors/version < io < datasets/llm/prompts < aggregation,
vectors < judges < metrics < the applications (run, export, the analyses, probe, sweep) < cli. `MAY_IMPORT`
has a row for every package and top-level module: the reljudge packages its modules may import
(its own is always allowed); every import counts, also one inside a function or under ``if
TYPE_CHECKING``. The root ``reljudge`` (the typed façade) may import anything but the command
line, and nothing below it imports the root.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parent.parent / "src"

BASE = frozenset({"reljudge.records", "reljudge.errors", "reljudge.version"})
#: the package root: its lazy façade (an entry that allows only itself)
ROOT = "reljudge"
#: every package and module of reljudge, and the root
EVERYTHING = frozenset(
    {ROOT}
    | {
        f"reljudge.{p.stem}"
        for p in (SRC / "reljudge").iterdir()
        if (p.suffix == ".py" and p.stem != "__init__") or (p / "__init__.py").exists()
    }
)
#: the data flow's layers, lowest first: the records, the formats (io), the model client (llm),
#: the prompts, the aggregation of labels, the judges, the pure metrics; then the applications
#: (run, the analyses, export, sweep, probe) and, on top, the command line
IO = BASE | {"reljudge.io"}
#: package or module -> the reljudge packages (or modules) it may import, besides itself
MAY_IMPORT: dict[str, frozenset[str]] = {
    "reljudge.records": frozenset({"reljudge.errors"}),
    "reljudge.errors": frozenset(),
    "reljudge.version": frozenset(),
    "reljudge.interrupts": frozenset(),
    "reljudge.progress": BASE,
    # what every command prints (JSON, the files written); the commands live in their packages
    "reljudge.console": BASE | {"reljudge.io"},
    "reljudge.io": BASE,
    "reljudge.datasets": IO,  # the bundled and on-disk datasets: readers of io's formats
    "reljudge.llm": IO,
    "reljudge.prompts": IO,
    "reljudge.aggregation": BASE,
    "reljudge.metrics": BASE,  # pure: numpy/scipy/ir_measures/rbo and the records, nothing else
    # passage vectors for the analyses: .npy files, encoders (an embeddings endpoint through the
    # LLM client), the on-disk embedding cache
    "reljudge.vectors": IO | {"reljudge.llm"},
    # judges render, ask and parse; the readers of the resources a judge declares (an EXAM
    # question bank), which the run calls for it, read through io
    "reljudge.judges": IO | {"reljudge.llm", "reljudge.prompts", "reljudge.aggregation"},
    "reljudge.testing": frozenset(),  # the mock LLM server stands alone
    "reljudge.export": IO | {"reljudge.judges", "reljudge.aggregation"},
    # one folder per analysis (``judge evaluate``, ``judge fd``, ...): anything below the
    # applications; its pure modules are held to more by `test_pure_modules_of_analyses`
    "reljudge.analyses": EVERYTHING
    - {
        ROOT,
        "reljudge.cli",
        "reljudge.__main__",
        "reljudge.run",
        "reljudge.sweep",
        "reljudge.probe",
        "reljudge.report",
        "reljudge.pyterrier",
        "reljudge.export",
    },
    # the pipeline of `judge run`: anything below the applications and the command line
    "reljudge.run": EVERYTHING
    - {ROOT, "reljudge.cli", "reljudge.analyses", "reljudge.sweep", "reljudge.probe", "reljudge.autojudge"},
    "reljudge.probe": EVERYTHING - {ROOT, "reljudge.cli", "reljudge.analyses", "reljudge.sweep"},
    # TREC AutoJudge: judges AutoJudge responses through the run machinery, writes its files
    "reljudge.autojudge": EVERYTHING
    - {ROOT, "reljudge.cli", "reljudge.__main__", "reljudge.analyses", "reljudge.sweep", "reljudge.probe"}
    - {"reljudge.report", "reljudge.pyterrier", "reljudge.export"},
    "reljudge.sweep": EVERYTHING - {ROOT, "reljudge.cli", "reljudge.probe"},
    # the PyTerrier bridge runs jobs (and reads their scores) for a transformer
    "reljudge.pyterrier": EVERYTHING
    - {ROOT, "reljudge.cli", "reljudge.probe", "reljudge.sweep", "reljudge.report"},
    # the HTML report reads what the applications wrote (and rebuilds a run's judge for its prompts)
    "reljudge.report": EVERYTHING - {ROOT, "reljudge.cli", "reljudge.probe", "reljudge.sweep"},
    "reljudge.cli": EVERYTHING,
    "reljudge.__main__": frozenset({"reljudge.cli"}),
    # the typed façade (``from reljudge import run_job, LLMClient``): anything but the command line
    ROOT: EVERYTHING - {"reljudge.cli", "reljudge.__main__"},
}
#: module-level imports of these are file or process I/O, which `reljudge.metrics` never does
IO_MODULES = frozenset({"os", "pathlib", "io", "shutil", "tempfile", "glob", "tarfile", "gzip", "subprocess"})
IO_CALLS = frozenset({"open", "read_text", "write_text", "read_bytes", "write_bytes", "mkdir", "unlink"})


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def package_files(package: str) -> list[Path]:
    """The source files of a package (every module below it), a module, or the root's ``__init__``."""
    if package == ROOT:
        return [SRC / "reljudge" / "__init__.py"]
    base = SRC / package.replace(".", "/")
    return sorted(base.rglob("*.py")) if base.is_dir() else [base.with_suffix(".py")]


def imported_modules(path: Path, name: str | None = None) -> set[str]:
    """Every module ``path`` (the module ``name``) imports, absolute names (relative imports resolved)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    me = name or module_name(path)
    package = me if path.name == "__init__.py" else me.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            found.add(target)
            # `from reljudge.metrics import ranking` imports the submodule reljudge.metrics.ranking
            for alias in node.names:
                candidate = f"{target}.{alias.name}"
                if (SRC / candidate.replace(".", "/")).with_suffix(".py").exists():
                    found.add(candidate)
    return found


def allowed(target: str, package: str) -> bool:
    if not target.startswith("reljudge.") and target != "reljudge":
        return True  # third-party and standard library
    ok = {package, *MAY_IMPORT[package]}
    return target in ok or any(target.startswith(p + ".") for p in ok if p != ROOT)


@pytest.mark.parametrize("package", sorted(MAY_IMPORT))
@pytest.mark.slow
def test_no_import_from_a_floor_above(package: str):
    files = package_files(package)
    assert files, package
    wrong = [
        f"{module_name(f)} imports {target}"
        for f in files
        for target in sorted(imported_modules(f))
        if not allowed(target, package)
    ]
    assert not wrong, "\n".join(wrong)


def test_the_checker_catches_an_upward_import(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text(
        "from typing import TYPE_CHECKING\n"
        "from . import ranking\n"
        "if TYPE_CHECKING:\n    from reljudge.judges.base import Judge\n"
        "def f():\n    from ..io import trec\n    import reljudge.analyses\n"
    )
    found = imported_modules(bad, "reljudge.metrics.bad")
    assert "reljudge.metrics.ranking" in found
    assert {t for t in found if not allowed(t, "reljudge.metrics")} == {
        "reljudge.judges.base",
        "reljudge.io",
        "reljudge.io.trec",
        "reljudge.analyses",
    }


def test_the_rows_of_the_pipeline_and_the_command_line():
    assert not allowed("reljudge.cli.options", "reljudge.run")
    assert not allowed("reljudge.sweep.execute", "reljudge.run")
    assert not allowed("reljudge.analyses.evaluate", "reljudge.run")
    assert allowed("reljudge.judges.registry", "reljudge.run")
    assert allowed("reljudge.llm.pricing", "reljudge.run")
    # the root is the façade: nothing below it imports it (``reljudge.version`` holds the version)
    assert not allowed("reljudge", "reljudge.run") and not allowed("reljudge", "reljudge.metrics")
    assert allowed("reljudge.version", "reljudge.io") and not allowed("reljudge.llm", "reljudge.io")


#: the modules that may import the command line: its own, and ``python -m reljudge``
CLI = "reljudge.cli"
ENTRY_POINTS = frozenset({CLI, "reljudge.__main__"})


def command_line_imports(files: list[Path], names: list[str] | None = None) -> list[str]:
    """``MODULE imports reljudge.cli...`` for each module of ``files`` outside `ENTRY_POINTS`
    (and below them) that imports the command line."""
    found = []
    for i, path in enumerate(files):
        me = names[i] if names else module_name(path)
        if me in ENTRY_POINTS or me.startswith(CLI + "."):
            continue
        found += [
            f"{me} imports {t}"
            for t in sorted(imported_modules(path, me))
            if t == CLI or t.startswith(CLI + ".")
        ]
    return found


@pytest.mark.slow
def test_nothing_but_the_entry_points_imports_the_command_line():
    assert MAY_IMPORT[CLI] == EVERYTHING  # the command line may import anything
    wrong = command_line_imports(sorted((SRC / "reljudge").rglob("*.py")))
    assert not wrong, "\n".join(wrong)


def test_the_check_finds_an_import_of_the_command_line(tmp_path):
    files = [tmp_path / name for name in ("config.py", "options.py", "__main__.py")]
    for path in files:
        path.write_text("def f():\n    from reljudge.cli.options import run_config\n")
    names = ["reljudge.run.config", "reljudge.cli.options", "reljudge.__main__"]
    assert command_line_imports(files, names) == ["reljudge.run.config imports reljudge.cli.options"]


def test_every_package_and_module_has_a_row():
    assert set(MAY_IMPORT) == EVERYTHING


def test_the_version_is_the_package_metadata_version():
    import tomllib

    from reljudge.version import __version__

    project = tomllib.loads((SRC.parent / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert __version__ == project["version"]


def _graph() -> dict[str, set[str]]:
    modules = {module_name(f): f for p in MAY_IMPORT for f in package_files(p)}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        graph[name] = {t for t in imported_modules(path) if t in modules and t != name}
    return graph


@pytest.mark.slow
def test_no_import_circle():
    graph = _graph()
    # a package's __init__ imports its own modules; a module importing its package's __init__
    # would close a circle, so it is counted like any other edge
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt) :] + [nxt]
            if nxt not in state:
                cycle = visit(nxt)
                if cycle:
                    return cycle
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            cycle = visit(node)
            assert cycle is None, " -> ".join(cycle)


#: the modules of an analysis folder that may do I/O, by role (`reljudge.analyses`); every other
#: module of an analysis folder is pure computation
ANALYSIS_ROLES = frozenset({"__init__", "files", "plots", "pipeline", "command", "server"})


#: pure modules below the analyses, outside `reljudge.metrics`, that a pure module may import:
#: what an embedding source is (FD and the answer analyses compute over any source)
SHARED_PURE = frozenset({"reljudge.vectors.embedding_source"})


def pure_modules() -> list[Path]:
    """`reljudge.metrics`, `SHARED_PURE` and the computation modules of every analysis folder."""
    analyses = SRC / "reljudge" / "analyses"
    computing = [
        f
        for folder in sorted(p for p in analyses.iterdir() if (p / "__init__.py").exists())
        for f in sorted(folder.rglob("*.py"))
        if f.stem not in ANALYSIS_ROLES
    ]
    shared = [f for name in sorted(SHARED_PURE) for f in package_files(name)]
    return package_files("reljudge.metrics") + shared + computing


def is_pure(target: str) -> bool:
    """Whether ``target`` is a module a pure module may import from reljudge."""
    if target in BASE | SHARED_PURE or target == "reljudge.metrics" or target.startswith("reljudge.metrics."):
        return True
    parts = target.split(".")
    # an analysis package itself (``from reljudge.analyses.fd import frechet``), or a pure module of one
    return len(parts) >= 3 and parts[1] == "analyses" and parts[-1] not in ANALYSIS_ROLES


def impurities(path: Path, name: str | None = None) -> list[str]:
    """What makes the module at ``path`` impure: file or process I/O, or an import of
    application code."""
    me = name or module_name(path)
    tree = ast.parse(path.read_text(encoding="utf-8"))
    wrong = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            wrong += [f"{me} imports {n}" for n in names if n.split(".")[0] in IO_MODULES]
        elif isinstance(node, ast.Call):
            fn = node.func
            called = fn.id if isinstance(fn, ast.Name) else fn.attr if isinstance(fn, ast.Attribute) else ""
            if called in IO_CALLS:
                wrong.append(f"{me}:{node.lineno} calls {called}")
    wrong += [
        f"{me} imports {t}"
        for t in sorted(imported_modules(path, me))
        if (t == ROOT or t.startswith("reljudge.")) and not is_pure(t)
    ]
    return wrong


@pytest.mark.slow
def test_pure_modules_do_no_io_and_import_no_application_code():
    wrong = [w for f in pure_modules() for w in impurities(f)]
    assert not wrong, "\n".join(wrong)


def test_the_purity_check_catches_io_and_application_imports(tmp_path):
    bad = tmp_path / "compute.py"
    bad.write_text(
        "import os\nfrom reljudge.metrics import ranking\nfrom reljudge.analyses.fd import frechet\n"
        "def f(p):\n    from reljudge.io import trec\n"
        "    from reljudge.analyses.fd.files import write\n    return p.read_text()\n"
    )
    found = impurities(bad, "reljudge.analyses.x.compute")
    assert found == [
        "reljudge.analyses.x.compute imports os",
        "reljudge.analyses.x.compute:7 calls read_text",
        "reljudge.analyses.x.compute imports reljudge.analyses.fd.files",
        "reljudge.analyses.x.compute imports reljudge.io",
        "reljudge.analyses.x.compute imports reljudge.io.trec",
    ], found


#: judge packages held to "the judge opens no file": the run's input stage reads what they get
#: (their resources' readers live in reljudge.io). Other judge packages define their resources'
#: readers beside the judge (an EXAM question bank), which the run calls for them.
NO_FILE_IO_JUDGES = ("reljudge.judges.vision",)


def file_io(path: Path, name: str | None = None) -> list[str]:
    """What in the module at ``path`` touches files: an import of a file or process I/O module,
    a call of `IO_CALLS`, or a call of a reader imported from ``reljudge.io`` (``read_*``,
    ``describe_*``, ``load_*``; naming one as a resource's reader is not a call)."""
    me = name or module_name(path)
    tree = ast.parse(path.read_text(encoding="utf-8"))
    readers: set[str] = set()
    wrong = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("reljudge.io"):
            readers.update(
                a.asname or a.name for a in node.names if a.name.startswith(("read", "describe", "load"))
            )
        if isinstance(node, ast.Import | ast.ImportFrom):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            wrong += [f"{me} imports {n}" for n in names if n.split(".")[0] in IO_MODULES]
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            fn = node.func
            called = fn.id if isinstance(fn, ast.Name) else fn.attr if isinstance(fn, ast.Attribute) else ""
            if called in IO_CALLS or called in readers:
                wrong.append(f"{me}:{node.lineno} calls {called}")
    return wrong


@pytest.mark.parametrize("package", NO_FILE_IO_JUDGES)
def test_these_judges_open_no_file(package: str):
    wrong = [w for f in package_files(package) for w in file_io(f)]
    assert not wrong, "\n".join(wrong)


def test_the_file_io_check_catches_open_readers_and_io_modules(tmp_path):
    bad = tmp_path / "inputs.py"
    bad.write_text(
        "from pathlib import Path\nfrom reljudge.io.image_table import read_image_table\n"
        "from reljudge.judges.base import Resource\nR = Resource('images', read=read_image_table)\n"
        "def f(p):\n    from reljudge.io.image_files import read_image_file as r\n"
        "    from reljudge.io.lines import read_lines\n"
        "    return r(p), open(p), Path(p).read_bytes(), list(read_lines(p))\n"
    )
    assert file_io(bad, "reljudge.judges.vision.inputs") == [
        "reljudge.judges.vision.inputs imports pathlib",
        "reljudge.judges.vision.inputs:8 calls r",
        "reljudge.judges.vision.inputs:8 calls open",
        "reljudge.judges.vision.inputs:8 calls read_bytes",
        "reljudge.judges.vision.inputs:8 calls read_lines",
    ]


def test_importing_metrics_loads_no_application_module():
    code = (
        "import sys, reljudge.metrics, reljudge.metrics.registry\n"
        "print('\\n'.join(sorted(m for m in sys.modules if m.startswith('reljudge'))))"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split()
    assert loaded and all(allowed(m, "reljudge.metrics") or m == "reljudge" for m in loaded), loaded
