"""Every code block of the README runs here, in README order, in one working directory — as a
reader who follows the README would run them (a later block uses what an earlier one wrote).

How a block runs:

- bash blocks run under ``bash -e`` with the project's ``judge`` and ``python`` first on the
  PATH, from a working directory holding ``examples/`` and ``bench/`` and with ``../shared``
  pointing at the shared data (blocks that need it are marked ``shared`` and skipped without it);
- hosted and Ollama models go to the project's mock LLM server through the variables the SDKs
  read (``OPENAI_BASE_URL``, ``OLLAMA_HOST``), so ``--model gpt-4o`` runs offline; a block that
  starts its own ``judge mock-server --port N &`` gets a free port instead of N and its server
  is stopped when the block ends; ``examples/sweep-sample.yaml`` points at the session's mock;
- ``pip install`` lines are not run (the environment is installed; CI installs ``.[dev]`` from a
  fresh virtual environment);
- a block that would take minutes is run *reduced*, with the reduction stated in `BLOCKS` next
  to it; a block that needs what this machine cannot have (a real model, a GPU library, a
  download) is skipped with the reason, and names the test that covers its commands.

`BLOCKS` must name every block of the README (a new block without an entry fails here), keyed by
its first line that is not a comment.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from reljudge.testing import MockLLMServer

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
SHARED = Path(os.environ.get("RELJUDGE_DATA_DIR", ROOT.parent / "shared" / "data"))


@dataclass(frozen=True)
class Block:
    """How the test treats one README block (see the module docstring)."""

    key: str  # the start of its first line that is not a comment
    run: bool = True
    reason: str = ""  # why it is not run, or what the reduced run changes
    shared: bool = False  # needs ../shared/data
    slow: bool = False
    #: (old, new) text substitutions of a reduced run
    reduce: tuple[tuple[str, str], ...] = field(default_factory=tuple)
    ok_codes: tuple[int, ...] = (0,)


def skip(key: str, reason: str) -> Block:
    return Block(key, run=False, reason=reason)


BLOCKS: list[Block] = [
    Block("pip install -e .\n"),  # quick start: judge run with gpt-4o (the mock)
    Block("judge evaluate --dataset dl19-sample"),
    Block("judge mock-server --port 8765 &"),
    skip("pip install -e .              #", "installs packages: CI installs '.[dev]' in a fresh venv"),
    skip("python -m pytest -q", "the test suite itself"),
    Block(
        "judge run --method pairwise --model gpt-4o --dataset trec-dl19",
        shared=True,
        slow=True,
        reason="reduced: EXAM on one topic; the third command names your own files (topics.tsv, bm25.run): not run",
        reduce=(
            (
                " --dataset dl19-sample -o mode=graded",
                " --dataset dl19-sample -o mode=graded --topics-limit 1",
            ),
            (
                "judge run --method binary --model openai/Qwen2.5-7B",
                ": judge run --method binary --model openai/Qwen2.5-7B",
            ),
        ),
    ),
    skip("id: my-lab/graded-v1", "a prompt file: tests/prompts/test_example_prompt.py loads and runs it"),
    Block("judge prompts show examples/prompts/my-prompt.yaml"),
    Block(
        'D=../shared/data\njudge evaluate --qrels $D/trec-dl21/qrels.txt --judgments "$D/llm',
        shared=True,
        slow=True,
    ),
    skip(
        "judge fd --qrels qrels.txt --runs runs/",
        "placeholders for your own files and a sentence-transformers model; judge fd runs in "
        "tests/test_fd*.py and tests/analyses/evaluate/test_command.py",
    ),
    Block(
        "judge sweep examples/sweep-sample.yaml --dry-run",
        reduce=(("--only task=binary", "--only task=binary --only prompt=builtin-binary"),),
    ),
    Block("judge report runs/dl19-sample-umbrela-openai-mock"),
    skip(
        "judge run --method umbrela --model gpt-4o --dataset irds:",
        "needs MS MARCO in the ir_datasets cache (a download); tests/io/test_irds.py runs --dataset irds: "
        "on a dataset registered from local files",
    ),
    skip(
        "import pyterrier as pt",
        "a sketch that needs your retriever and index (bm25, dense); tests/test_pyterrier.py runs "
        "LLMJudge and judged_qrels end to end",
    ),
    Block("judge probe --method umbrela --model gpt-4o", ok_codes=(0, 1)),  # the mock's labels may flip
    Block("perturbation     compared", run=False, reason="console output"),
    Block("D=../shared/data/trec-dl21\njudge shallow pool", shared=True, slow=True),
    Block("D=../shared/data/trec-dl21\njudge shallow tournament", shared=True, slow=True),
    Block(
        "D=../shared/data/trec-dl21\njudge shallow btp-pairs",
        shared=True,
        slow=True,
        reason="reduced: the first 200 pairs of the pool (the full run is 20,861 mock calls)",
        reduce=(
            ("--pairs dl21-pool/pairs.txt", "--pairs dl21-pool/pairs.head.txt"),
            (
                "judge mock-server --port",
                "head -200 dl21-pool/pairs.txt > dl21-pool/pairs.head.txt\njudge mock-server --port",
            ),
        ),
    ),
    Block("from reljudge import load_dataset"),
    Block(" inputs (io, datasets)", run=False, reason="a diagram"),
    Block(
        "D=../shared/data\njudge evaluate --qrels $D/trec-dl21/qrels.txt --judgments $D/trec",
        shared=True,
        slow=True,
    ),
    Block("D=../shared/data\nfor ds in dl19 dl20 dl21; do", shared=True, slow=True),
    Block(
        "judge sweep --from-judgments ../shared/data/prompt-sensitivity/judgments.tar.gz --out",
        shared=True,
        slow=True,
    ),
    Block(
        "judge sweep --from-judgments ../shared/data/prompt-sensitivity/judgments.tar.gz \\\n  --runs",
        shared=True,
        slow=True,
    ),
    Block(
        "judge sweep --from-judgments ../shared/data/prompt-sensitivity/judgments.tar.gz \\\n  --preset",
        shared=True,
        slow=True,
    ),
    skip(
        "pip install torch==",
        "installs torch and a model (not available offline here); judge fd with vectors runs in tests/test_fd*.py",
    ),
    skip(
        "judge run --method binary --model openai/gemma",
        "needs a real local model (../shared/tools/local-llm.sh); tests/llm/test_local_llm.py runs it when "
        "RELJUDGE_LOCAL_LLM_URL is set",
    ),
    Block("warning: --scores expected", run=False, reason="console output"),
    Block(
        "mkdir ps && tar xzf",
        shared=True,
        slow=True,
        reason="reduced: one model and one dataset (the full loop is 12 cells, about 3 minutes)",
        reduce=(
            (
                "for m in gpt-4o llama3.2 mistral; do for ds in dl20 dl21;",
                "for m in gpt-4o; do for ds in dl21;",
            ),
        ),
    ),
    skip(
        "judge run --method umbrela --model openai/gemma",
        "needs a real local model; tests/llm/test_local_llm.py runs --scores expected and --samples with one",
    ),
    Block(
        "for ds in dl19 dl20 dl21; do for m in binary umbrela",
        shared=True,
        slow=True,
        reason="reduced: DL21 only",
        reduce=(("for ds in dl19 dl20 dl21; do", "for ds in dl21; do"),),
    ),
    Block("from reljudge.io.runinfo import read_run_info", shared=True),
    Block("D=../shared/data/trec-dl21\njudge histogram", shared=True, slow=True),
    Block("D=../shared/data/trec-dl21\njudge pool-bias", shared=True, slow=True),
    Block("D=../shared/data/trec-dl21\njudge sparsify", shared=True, slow=True),
    skip(
        "judge fd --qrels Q --runs DIR --embeddings V.npy",
        "needs an encoder's vectors of DL21 (no encoder runs here); tests/analyses/fd/test_variants.py runs --variants and --plot",
    ),
    skip(
        "D=../shared/data/trec-dl21\nHF_HUB_OFFLINE=1 judge fd",
        "needs torch and sentence-transformers (about 3 GB, not in the test environment); judge fd --variants "
        "runs on vectors files in tests/analyses/fd/test_variants.py",
    ),
    Block(
        "judge run --method umbrela --model gpt-4o-mini --dataset dl19-sample --batch",
        reason="reduced: one topic, batches polled every 0.05 s",
        reduce=((" --batch", " --topics-limit 1 --batch-poll 0.05 --batch"),),
    ),
    Block(
        "judge run --method umbrela --model litellm/openai/gpt-4o-mini --dataset dl19-sample --batch",
        reason="reduced: one topic, batches polled every 0.05 s, the mock as the server at --base-url",
        reduce=(
            (" --batch", " --topics-limit 1 --batch-poll 0.05 --batch"),
            ("http://host:8000/v1", '"$OPENAI_BASE_URL"'),
        ),
    ),
    Block("from reljudge.io.answers import read_answers, write_answers_tsv, write_rag24"),
    Block("judge generate --model gpt-4o --dataset dl19-sample --dry-run"),
    Block('JOB="--method umbrela --model openai/Qwen2.5-7B-Instruct'),  # batch export/import, vLLM stand-in
    skip(
        'JOB="--method umbrela --model openai/Qwen/Qwen2.5-7B-Instruct',
        "the multi-node recipe needs GPU nodes and vLLM; tests/run/batch/test_files.py runs its commands",
    ),
    Block("judge answers check examples/answers/rag24-example.jsonl"),
    skip(
        "python bench/synthetic_answer_systems.py",
        "needs torch and sentence-transformers for --encoder; tests/analyses/answers/test_similarity_command.py runs the "
        "command on vectors files",
    ),
    Block("judge run --method nuggets --model gpt-4o --dataset dl19-sample --no-progress"),
    Block("python bench/nugget_answer_systems.py ../shared/data/trec-dl19", shared=True, slow=True),
    Block("judge run --method citation-support --model gpt-4o --dataset examples/answers/rag24-collection"),
    skip(
        "python bench/run.py",
        "the benchmarks (minutes, machine-dependent): run by hand, figures in the README",
    ),
    skip(
        "$ judge run --method umbrela --model gpt-4o",
        "console output: dry-runs with litellm's prices, measured",
    ),
    skip(
        "judge sweep sweep.yaml --batch --dry-run",
        "sweep.yaml stands for your own sweep file; tests/sweep/test_batch.py runs these commands on the mock",
    ),
    Block(
        "stopped at the cost cap: $0.001582", run=False, reason="console output (tests/sweep/test_batch.py)"
    ),
    Block(
        "stopped at the cost cap: $0.001138",
        run=False,
        reason="console output (tests/sweep/test_max_cost.py)",
    ),
]


def readme_blocks() -> list[tuple[int, str, str]]:
    """(line, language, text) of every fenced block of the README."""
    text = README.read_text(encoding="utf-8")
    return [
        (text[: m.start()].count("\n") + 1, m.group(1), m.group(2))
        for m in re.finditer(r"^```(\w*)\n(.*?)^```", text, re.S | re.M)
    ]


def key_of(body: str) -> str:
    lines = [line for line in body.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    return "\n".join(lines)


def entry_for(body: str) -> Block | None:
    code = key_of(body)
    found = [b for b in BLOCKS if code.startswith(b.key)]
    return max(found, key=lambda b: len(b.key)) if found else None  # the most specific entry


def test_every_block_has_an_entry_and_every_entry_a_block():
    blocks = readme_blocks()
    missing = [
        f"README.md:{line}: {key_of(body)[:70]!r}" for line, _, body in blocks if entry_for(body) is None
    ]
    assert not missing, "README blocks without an entry in tests/test_readme.py BLOCKS:\n" + "\n".join(
        missing
    )
    used = {id(entry_for(body)) for _, _, body in blocks}
    stale = [b.key for b in BLOCKS if id(b) not in used]
    assert not stale, f"entries for blocks no longer in the README: {stale}"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def session(tmp_path_factory):
    """The working directory and environment every block of one README read-through shares."""
    base = tmp_path_factory.mktemp("readme")
    work = base / "work"
    work.mkdir()
    shutil.copytree(ROOT / "examples", work / "examples")
    (work / "bench").symlink_to(ROOT / "bench")
    if SHARED.is_dir():
        (base / "shared").mkdir()
        (base / "shared" / "data").symlink_to(SHARED)
    with MockLLMServer() as srv:
        sample = work / "examples" / "sweep-sample.yaml"
        sample.write_text(sample.read_text().replace("http://127.0.0.1:8765/v1", srv.openai_url))
        env = {
            **os.environ,
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
            "PYTHONPATH": str(ROOT / "src"),
            "OPENAI_BASE_URL": srv.openai_url,
            "OPENAI_API_KEY": "sk-readme-test",
            "OLLAMA_HOST": srv.ollama_url,
            "RELJUDGE_CACHE": str(base / "cache.sqlite"),
            "HF_HUB_OFFLINE": "1",
            "MPLBACKEND": "Agg",
        }
        env.pop("RELJUDGE_DATA_DIR", None)
        yield work, env, set()


def _script(block: Block, body: str) -> str:
    lines = []
    for line in body.splitlines():
        if line.lstrip().startswith("pip install"):
            lines.append(": # installed already: " + line.replace("'", ""))
        else:
            lines.append(line)
    text = "\n".join(lines) + "\n"
    for old, new in block.reduce:
        assert old in text, f"the reduction {old!r} no longer applies to the block"
        text = text.replace(old, new)
    server = re.search(r"judge mock-server --port (\d+) &", text)
    if server:
        text = "trap 'kill $(jobs -p) 2>/dev/null || true' EXIT\n" + text.replace(
            server.group(1), str(_free_port())
        )
    return text


def _cases() -> list:
    cases = []
    for line, lang, body in readme_blocks():
        block = entry_for(body)
        if block is None or not block.run or lang not in ("bash", "python"):
            continue
        marks = [pytest.mark.shared] if block.shared else []
        cases.append(pytest.param(line, lang, body, block, marks=marks, id=f"README.md:{line}"))
    return cases


def _run_block(work: Path, env: dict[str, str], line: int, lang: str, body: str, block: Block) -> None:
    if lang == "python":
        argv = [sys.executable, "-c", body]
    else:
        argv = ["bash", "-e", "-c", _script(block, body)]
    done = subprocess.run(argv, cwd=work, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode in block.ok_codes, (
        f"README.md:{line} exited {done.returncode}\n--- stdout\n{done.stdout[-3000:]}\n--- stderr\n{done.stderr[-3000:]}"
    )


@pytest.mark.slow  # the whole read-through (about 3 minutes): blocks depend on earlier ones
@pytest.mark.parametrize(("line", "lang", "body", "block"), _cases())
def test_readme_block_runs(session, line, lang, body, block):
    work, env, ran = session
    if block.shared and not SHARED.is_dir():
        pytest.skip(f"needs the shared data at {SHARED}")
    # a reader runs the blocks in order: under pytest-xdist a worker may be handed a later block
    # first, so the earlier blocks this process has not run yet run now, in order, as set-up
    for case in _cases():
        earlier, *rest = case.values
        if earlier >= line:
            break
        if earlier not in ran and not (rest[2].shared and not SHARED.is_dir()):
            _run_block(work, env, earlier, *rest)
            ran.add(earlier)
    _run_block(work, env, line, lang, body, block)
    ran.add(line)
