"""Every code block of the README and of the documentation site (``docs/``) runs here, as a
reader who follows a page would run it.

How a block runs:

- each page has a working directory of its own, holding ``examples/`` and ``bench/`` and with
  ``../shared`` pointing at the shared data (blocks that need it are marked ``shared`` and are
  skipped without it);
- a block that uses what another block made says so (``needs``: blocks of the same page by key,
  or ``"docs/page.md::key"``); what it needs runs first, in its working directory, once. Nothing
  depends on the order blocks appear in, or on the order pytest (or pytest-xdist) runs them in;
- bash blocks run under ``bash -e`` with the project's ``judge`` and ``python`` first on the
  PATH; python blocks run as a script, or, when they ``await`` at the top level as in a notebook,
  inside a running event loop;
- hosted and Ollama models go to the project's mock LLM server through the variables the SDKs
  read (``OPENAI_BASE_URL``, ``OLLAMA_HOST``), so ``--model gpt-4o`` runs offline; a block that
  starts its own ``judge mock-server --port N &`` gets a free port instead of N and its server
  is stopped when the block ends; ``examples/sweep-sample.yaml`` points at the session's mock;
- ``pip install`` lines are not run (the environment is installed; CI installs ``.[dev]`` from a
  fresh virtual environment);
- a block that would take minutes is run *reduced*, with the reduction stated in `BLOCKS` next
  to it; a block that needs what this machine cannot have (a real model, a GPU library, a
  download) is skipped with the reason, and names the test that covers its commands.

`BLOCKS` must name every block of every page (a new block without an entry fails here), keyed by
its first line that is not a comment. A block that needs a ``shared`` block is ``shared`` itself,
so a clone without the shared data skips it instead of failing
(`test_a_block_that_needs_shared_data_says_so`).
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
SHARED = Path(os.environ.get("RELJUDGE_DATA_DIR", ROOT.parent / "shared" / "data"))
#: as tests/conftest.py decides it: the shared data is there when its README is
HAVE_SHARED = (SHARED / "README.md").exists()
#: the pages whose blocks run: the README and every page of the documentation site
PAGES = ["README.md", *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "docs").rglob("*.md"))]


@dataclass(frozen=True)
class Block:
    """How the test treats one block (see the module docstring)."""

    key: str  # the start of its first line that is not a comment
    run: bool = True
    reason: str = ""  # why it is not run, or what the reduced run changes
    shared: bool = False  # needs ../shared/data
    slow: bool = False
    #: (old, new) text substitutions of a reduced run
    reduce: tuple[tuple[str, str], ...] = field(default_factory=tuple)
    ok_codes: tuple[int, ...] = (0,)
    #: the blocks whose output this one reads: keys on the same page, or "page::key"
    needs: tuple[str, ...] = ()


def skip(key: str, reason: str) -> Block:
    return Block(key, run=False, reason=reason)


MOCK_QUICK_START = "judge mock-server --port 8765 &\njudge run --method umbrela --model openai/mock"
PROVIDER_QUICK_START = "export OPENAI_API_KEY=sk-...\njudge doctor --model gpt-4o"
INSTALL = skip("pip install -e .              #", "installs packages: CI installs '.[dev]' in a fresh venv")

BLOCKS: dict[str, list[Block]] = {
    "README.md": [
        INSTALL,
        Block("judge demo"),
        Block(MOCK_QUICK_START),
        Block(PROVIDER_QUICK_START),
        Block("from reljudge import RunConfig, run_job, load_dataset"),
        skip("pip install -e '.[dev]'\npython -m pytest", "the test suite itself"),
    ],
    "docs/getting-started.md": [
        INSTALL,
        Block("judge demo"),
        Block(MOCK_QUICK_START),
        Block(PROVIDER_QUICK_START),
    ],
    "docs/index.md": [],
    "docs/concepts.md": [],
    "docs/data.md": [],
    "docs/changelog.md": [],
    "docs/benchmarks.md": [
        skip(
            "python bench/run.py",
            "the benchmarks (minutes, machine-dependent): run by hand, figures on this page",
        ),
    ],
    "docs/contributing/architecture.md": [Block(" inputs (io, datasets)", run=False, reason="a diagram")],
    "docs/contributing/extending.md": [],
    "docs/contributing/testing.md": [
        skip("python -m pytest -q", "the test suite itself"),
        skip(
            "python3 -m venv ../venv-ray",
            "installs Ray Data into a venv of its own and runs tests/run/batch/test_ray.py there",
        ),
    ],
    "docs/reference/cli.md": [],
    "docs/reference/api.md": [],
    "docs/reference/commands.md": [],
    "docs/reference/formats.md": [],
    "docs/methods/index.md": [],
    "docs/methods/binary.md": [
        Block("judge run --method binary --model gpt-4o --dataset dl19-sample --limit 20")
    ],
    "docs/methods/umbrela.md": [
        Block("judge run --method umbrela --model gpt-4o --dataset dl19-sample --prompt umbrela/bing-fewshot")
    ],
    "docs/methods/pairwise.md": [
        Block("judge run --method pairwise --model gpt-4o --dataset dl19-sample -o pairs=sampler --dry-run")
    ],
    "docs/methods/exam.md": [
        Block("judge run --method exam --model gpt-4o --dataset dl19-sample --question-bank dataset")
    ],
    "docs/methods/custom.md": [
        skip("id: my-lab/graded-v1", "a prompt file: tests/prompts/test_example_prompt.py loads and runs it"),
        Block("judge prompts show examples/prompts/my-prompt.yaml"),
    ],
    "docs/methods/nuggets.md": [
        Block(
            "judge run --method nuggets --model gpt-4o --dataset dl19-sample --no-progress",
            needs=(
                "docs/guides/generated-answers.md::judge generate --model gpt-4o --dataset dl19-sample --dry-run",
            ),
        ),
        Block("python bench/nugget_answer_systems.py ../shared/data/trec-dl19", shared=True, slow=True),
    ],
    "docs/methods/citation-support.md": [
        Block(
            "judge run --method citation-support --model gpt-4o --dataset examples/answers/rag24-collection"
        ),
    ],
    "docs/guides/judging.md": [
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
    ],
    "docs/guides/providers.md": [
        Block("export OPENAI_API_KEY=sk-...\njudge run --method umbrela --model gpt-4o-mini"),
        skip(
            "vllm serve Qwen/Qwen2.5-7B-Instruct",
            "needs vLLM and a GPU; the openai backend against an OpenAI-compatible server runs in tests/llm/test_client.py",
        ),
        skip(
            "ollama pull llama3.2",
            "needs Ollama; the ollama backend runs against the mock in tests/llm/test_client.py",
        ),
        skip(
            "export AZURE_API_KEY=",
            "needs Azure and Anthropic accounts; LiteLLM routes run against the mock in tests/llm/test_litellm.py",
        ),
    ],
    "docs/guides/costs.md": [
        skip(
            "$ judge run --method umbrela --model gpt-4o",
            "console output: dry-runs with litellm's prices, measured",
        ),
        Block(
            "stopped at the cost cap: $0.001138",
            run=False,
            reason="console output (tests/sweep/test_max_cost.py)",
        ),
    ],
    "docs/guides/batch.md": [
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
        skip(
            "judge sweep sweep.yaml --batch --dry-run",
            "sweep.yaml stands for your own sweep file; tests/sweep/test_batch.py runs these commands on the mock",
        ),
        Block(
            "stopped at the cost cap: $0.001582",
            run=False,
            reason="console output (tests/sweep/test_batch.py)",
        ),
    ],
    "docs/guides/own-gpus.md": [
        Block(
            'JOB="--method umbrela --model openai/Qwen2.5-7B-Instruct'
        ),  # batch export/import, vLLM stand-in
        skip(
            'JOB="--method umbrela --model openai/Qwen/Qwen2.5-7B-Instruct',
            "the multi-node recipe needs GPU nodes and vLLM; tests/run/batch/test_files.py runs its commands",
        ),
        skip(
            "ray start --head",
            "a Ray cluster of GPU nodes behind a vLLM server; tests/run/batch/test_ray.py runs its "
            "commands on a local Ray cluster against the mock server",
        ),
        skip(
            "python -c \"import sys; sys.path.insert(0, 'bench')",
            "needs Ray Data ('.[ray]'), which cannot share the dev venv (rbo pins numpy below 2); "
            "tests/run/batch/test_ray.py runs this job where Ray is installed",
        ),
    ],
    "docs/guides/evaluate.md": [
        Block(
            'D=../shared/data\njudge evaluate --qrels $D/trec-dl21/qrels.txt --judgments "$D/llm',
            shared=True,
            slow=True,
        ),
        skip(
            "judge fd --qrels qrels.txt --runs runs/",
            "placeholders for your own files and a sentence-transformers model; judge fd runs in "
            "tests/analyses/fd/ and tests/analyses/evaluate/test_command.py",
        ),
    ],
    "docs/guides/sweep.md": [
        Block(
            "judge sweep examples/sweep-sample.yaml --dry-run",
            reduce=(("--only task=binary", "--only task=binary --only prompt=builtin-binary"),),
        ),
    ],
    "docs/guides/better-labels.md": [
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
    ],
    "docs/guides/sparse-labels.md": [
        Block("from reljudge.io.runinfo import read_run_info", shared=True),
        Block("D=../shared/data/trec-dl21\njudge histogram", shared=True, slow=True),
        Block("D=../shared/data/trec-dl21\njudge pool-bias", shared=True, slow=True),
        Block("D=../shared/data/trec-dl21\njudge sparsify", shared=True, slow=True),
        skip(
            "judge fd --qrels Q --runs DIR --embeddings V.npy",
            "needs an encoder's vectors of DL21 (no encoder runs here); tests/analyses/fd/test_variants.py runs "
            "--variants and --plot",
        ),
        skip(
            "D=../shared/data/trec-dl21\nHF_HUB_OFFLINE=1 judge fd",
            "needs torch and sentence-transformers (about 3 GB, not in the test environment); judge fd --variants "
            "runs on vectors files in tests/analyses/fd/test_variants.py",
        ),
    ],
    "docs/guides/shallow.md": [
        Block("D=../shared/data/trec-dl21\njudge shallow pool", shared=True, slow=True),
        Block(
            "D=../shared/data/trec-dl21\njudge shallow tournament",
            shared=True,
            slow=True,
            needs=("D=../shared/data/trec-dl21\njudge shallow pool",),
        ),
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
            needs=("D=../shared/data/trec-dl21\njudge shallow pool",),
        ),
    ],
    "docs/guides/leaderboard.md": [Block("judge leaderboard --judge examples/leaderboards/judge.eval.txt")],
    "docs/guides/autojudge.md": [
        Block("judge autojudge --method umbrela --model gpt-4o --out runs/autojudge --filebase umbrela"),
        Block(
            "judge autojudge --method umbrela --model gpt-4o --out runs/autojudge-replay --filebase umbrela",
            needs=(
                "judge autojudge --method umbrela --model gpt-4o --out runs/autojudge --filebase umbrela",
            ),
        ),
        Block("from pathlib import Path"),
        skip("pip install 'reljudge[autojudge]'", "installs packages: CI installs '.[dev]' in a fresh venv"),
        Block("python -m reljudge.autojudge.adapter"),
        skip(
            "export OPENAI_BASE_URL=http://localhost:8000/v1 OPENAI_MODEL=gpt-4o",
            "needs autojudge-base, not in .[dev]: tests/autojudge/test_auto_judge_run.py runs these commands",
        ),
        skip(
            "RELJUDGE_CACHE_ONLY=1 auto-judge run",
            "needs autojudge-base, not in .[dev]: tests/autojudge/test_auto_judge_run.py runs the replay",
        ),
        skip(
            "auto-judge-evaluate meta-evaluate",
            "needs autojudge-evaluate, not in .[dev]: tests/autojudge/test_auto_judge_run.py runs it",
        ),
        skip("python3 -m venv /tmp/aj", "installs packages and runs tests: the tests named on the page"),
    ],
    "docs/guides/probe.md": [
        Block("judge probe --method umbrela --model gpt-4o", ok_codes=(0, 1)),  # the mock's labels may flip
        Block("perturbation     compared", run=False, reason="console output"),
    ],
    "docs/guides/generated-answers.md": [
        Block("from reljudge.io.answers import read_answers, write_answers_tsv, write_rag24"),
        Block("judge answers check examples/answers/rag24-example.jsonl"),
        Block("judge generate --model gpt-4o --dataset dl19-sample --dry-run"),
    ],
    "docs/guides/answer-similarity.md": [
        skip(
            "python bench/synthetic_answer_systems.py",
            "needs torch and sentence-transformers for --encoder; tests/analyses/answers/test_similarity_command.py "
            "runs the command on vectors files",
        ),
    ],
    "docs/guides/image-grids.md": [
        skip(
            "judge grids grids.tsv --encoder clip-ViT-B-32",
            "needs sentence-transformers, Pillow and CLIP weights; tests/vectors/test_images.py reads image files "
            "with a stand-in encoder and tests/analyses/grids/test_command.py runs the command on vectors files",
        ),
        Block("python examples/grids/synthetic.py grids-example", slow=True),
        Block("system  prompts  relevance", run=False, reason="console output"),
        Block("set          measure", run=False, reason="console output"),
        Block("import numpy as np\nfrom reljudge.analyses.grids import", slow=True),
    ],
    "docs/guides/humans.md": [
        Block(
            "D=../shared/data\njudge select $D/llm-judgments/gpt-4o/umbrela.dl21.qrels --budget 300 --dry-run",
            shared=True,
        ),
        skip("strategy stratified, seed 0, budget 300:", "the output of the block above"),
        Block(
            "D=../shared/data\njudge select $D/llm-judgments/gpt-4o/umbrela.dl21.qrels --budget 300 --seed 1",
            shared=True,
        ),
        Block(
            "import json\nfrom reljudge.io.trec import read_qrels",
            shared=True,
            needs=(
                "D=../shared/data\njudge select $D/llm-judgments/gpt-4o/umbrela.dl21.qrels --budget 300 --seed 1",
            ),
        ),
        Block(
            "D=../shared/data\njudge estimate task.jsonl --assessments people.jsonl",
            shared=True,
            slow=True,
            needs=("import json\nfrom reljudge.io.trec import read_qrels",),
        ),
        skip("300 items labelled by people", "the output of the block above"),
        skip("interval width by number of people's labels", "an output of judge estimate (the block above)"),
    ],
    "docs/guides/reports.md": [
        Block(
            "judge report runs/dl19-sample-umbrela-openai-mock",
            needs=(
                f"docs/getting-started.md::{MOCK_QUICK_START}",
                "docs/guides/sweep.md::judge sweep examples/sweep-sample.yaml --dry-run",
            ),
        ),
    ],
    "docs/guides/assessing.md": [
        skip(
            "judge assess task.jsonl --assessor ann --mode post-edit",
            "starts a server that waits for a person: tests/analyses/assess/test_page.py drives the page in "
            "headless Chromium",
        ),
        skip(
            '{"reljudge_task": 1,',
            "a task file's lines: tests/analyses/assess/test_files.py reads such files",
        ),
        skip(
            '{"item": "87452\\t8152227"',
            "an assessment line: tests/analyses/assess/test_files.py reads such lines",
        ),
        Block("judge assess export examples/assess/task.jsonl --qrels human.qrels --records human.jsonl"),
        Block("task items: 8;", run=False, reason="console output of judge assess export"),
        skip(
            "judge evaluate --judgments runs/dl19-umbrela --qrels human.qrels",
            "needs a run of your own: tests/analyses/assess/test_files.py runs evaluate, combine and calibrate "
            "on an export",
        ),
    ],
    "docs/guides/python-api.md": [
        Block("from reljudge import load_dataset, load_judgments, RunConfig, run_job"),
        Block("from reljudge import RunConfig, run_job_async"),
    ],
    "docs/guides/vision-judging.md": [
        Block("import struct, zlib"),
        Block("judge mock-server --port 8771 &", needs=("import struct, zlib",)),
    ],
    "docs/guides/using-judgments.md": [
        Block(
            "judge run --method umbrela --model gpt-4o --dataset dl19-sample --limit 60 --out runs/elsewhere"
        ),
        skip(
            "trec_eval -m ndcg_cut.10",
            "trec_eval is not installed here and my-system.run stands for your run; the ir_measures block below "
            "computes the same measures (trec_eval's conventions), and tests/io/test_trec.py checks the qrels format",
        ),
        Block(
            "import ir_measures",
            needs=(
                "judge run --method umbrela --model gpt-4o --dataset dl19-sample --limit 60 --out runs/elsewhere",
            ),
        ),
        Block(
            "from reljudge import load_judgments, to_dataframe",
            needs=(
                "judge run --method umbrela --model gpt-4o --dataset dl19-sample --limit 60 --out runs/elsewhere",
            ),
        ),
        skip(
            "judge run --method umbrela --model gpt-4o --dataset irds:",
            "needs MS MARCO in the ir_datasets cache (a download); tests/io/test_irds.py runs --dataset irds: "
            "on a dataset registered from local files",
        ),
        skip(
            "import pyterrier as pt",
            "needs an index of MS MARCO and Java; tests/test_pyterrier.py runs LLMJudge and judged_qrels end to end",
        ),
    ],
    "docs/results.md": [
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
            needs=("judge sweep --from-judgments ../shared/data/prompt-sensitivity/judgments.tar.gz --out",),
        ),
        Block(
            "judge sweep --from-judgments ../shared/data/prompt-sensitivity/judgments.tar.gz \\\n  --preset",
            shared=True,
            slow=True,
        ),
        skip(
            "pip install torch==",
            "installs torch and a model (not available offline here); judge fd with vectors runs in tests/analyses/fd/",
        ),
        skip(
            "judge run --method binary --model openai/gemma",
            "needs a real local model (../shared/tools/local-llm.sh); tests/llm/test_local_llm.py runs it when "
            "RELJUDGE_LOCAL_LLM_URL is set",
        ),
    ],
}


@dataclass(frozen=True)
class Found:
    """One fenced block of a page, with its entry."""

    page: str
    line: int
    lang: str
    body: str
    block: Block | None

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"


def page_blocks(page: str) -> list[tuple[int, str, str]]:
    """(line, language, text) of every fenced block of a page."""
    text = (ROOT / page).read_text(encoding="utf-8")
    return [
        (text[: m.start()].count("\n") + 1, m.group(1), m.group(2))
        for m in re.finditer(r"^```(\w*)\n(.*?)^```", text, re.S | re.M)
    ]


def key_of(body: str) -> str:
    lines = [line for line in body.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    return "\n".join(lines)


def entry_for(page: str, body: str) -> Block | None:
    code = key_of(body)
    found = [b for b in BLOCKS.get(page, []) if code.startswith(b.key)]
    return max(found, key=lambda b: len(b.key)) if found else None  # the most specific entry


def all_blocks() -> list[Found]:
    return [
        Found(page, line, lang, body, entry_for(page, body))
        for page in PAGES
        for line, lang, body in page_blocks(page)
    ]


def resolve(page: str, need: str) -> Found:
    """The block a ``needs`` entry names (``key`` on ``page``, or ``other-page::key``)."""
    other, _, key = need.rpartition("::")
    other = other or page
    found = [f for f in all_blocks() if f.page == other and f.block is not None and f.block.key == key]
    assert len(found) == 1, f"{page}: needs {need!r}, which names {len(found)} blocks"
    return found[0]


def needs_shared(found: Found, seen: frozenset[str] = frozenset()) -> bool:
    """Whether the block, or anything it needs, reads the shared data."""
    assert found.block is not None and found.where not in seen, f"a circle of needs at {found.where}"
    return found.block.shared or any(
        needs_shared(resolve(found.page, need), seen | {found.where}) for need in found.block.needs
    )


def test_every_block_has_an_entry_and_every_entry_a_block():
    assert sorted(BLOCKS) == sorted(PAGES), "BLOCKS must list every page of the README and docs/"
    blocks = all_blocks()
    missing = [f"{f.where}: {key_of(f.body)[:70]!r}" for f in blocks if f.block is None]
    assert not missing, "blocks without an entry in tests/test_readme.py BLOCKS:\n" + "\n".join(missing)
    used = {id(f.block) for f in blocks}
    stale = [f"{page}: {b.key}" for page, entries in BLOCKS.items() for b in entries if id(b) not in used]
    assert not stale, f"entries for blocks no longer on their page: {stale}"


def test_a_block_that_needs_shared_data_says_so():
    """The fresh-clone promise: without ../shared every block that would read it is skipped, so a
    block may not lean on a shared one without being marked shared itself."""
    for found in all_blocks():
        if found.block is not None and found.block.run:
            for need in found.block.needs:
                resolve(found.page, need)  # names exactly one block
            assert needs_shared(found) == found.block.shared, (
                f"{found.where}: needs a block that reads the shared data; mark it shared=True"
            )


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Reader:
    """The working directories (one per page) and the environment of one read-through."""

    def __init__(self, base: Path, env: dict[str, str], mock_url: str) -> None:
        self.base, self.env, self.mock_url = base, env, mock_url
        self.ran: dict[str, set[str]] = {}  # page -> the blocks run in its directory

    def workdir(self, page: str) -> Path:
        work = self.base / re.sub(r"[^A-Za-z0-9]+", "-", page) / "work"
        if not work.exists():
            work.mkdir(parents=True)
            shutil.copytree(ROOT / "examples", work / "examples")
            (work / "bench").symlink_to(ROOT / "bench")
            if HAVE_SHARED:
                (work.parent / "shared").mkdir()
                (work.parent / "shared" / "data").symlink_to(SHARED)
            sample = work / "examples" / "sweep-sample.yaml"
            sample.write_text(sample.read_text().replace("http://127.0.0.1:8765/v1", self.mock_url))
        return work

    def run(self, page: str, found: Found) -> None:
        """Run ``found`` in ``page``'s directory, after what it needs (each once)."""
        done = self.ran.setdefault(page, set())
        if found.where in done:
            return
        assert found.block is not None
        for need in found.block.needs:
            self.run(page, resolve(found.page, need))
        _run_block(self.workdir(page), self.env, found)
        done.add(found.where)


@pytest.fixture(scope="module")
def reader(tmp_path_factory):
    base = tmp_path_factory.mktemp("readme")
    # the hosted models the pages name are served (judge doctor checks that the model is listed)
    with MockLLMServer(models=("mock-model", "gpt-4o", "gpt-4o-mini", "llama3.2")) as srv:
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
        yield Reader(base, env, srv.openai_url)


def _script(block: Block, body: str) -> str:
    lines = []
    for line in body.splitlines():
        if line.lstrip().startswith("pip install"):
            lines.append(": # installed already: " + line.replace("'", ""))
        elif line.startswith("export OPENAI_API_KEY="):
            lines.append(": # the test's key is set already: " + line.replace("'", ""))
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


#: runs a python block that awaits at the top level (a notebook cell) inside a running event loop
_AWAITING = (
    "import ast, asyncio, sys\n"
    "code = compile(sys.argv[1], '<block>', 'exec', flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)\n"
    "result = eval(code, {'__name__': '__main__'})\n"
    "if asyncio.iscoroutine(result):\n"
    "    asyncio.run(result)\n"
)


def _run_block(work: Path, env: dict[str, str], found: Found) -> None:
    assert found.block is not None
    if found.lang == "python":
        awaits = re.search(r"^(\w+ = )?await ", found.body, re.M) is not None
        argv = [sys.executable, "-c", _AWAITING, found.body] if awaits else [sys.executable, "-c", found.body]
    else:
        argv = ["bash", "-e", "-c", _script(found.block, found.body)]
    done = subprocess.run(argv, cwd=work, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode in found.block.ok_codes, (
        f"{found.where} exited {done.returncode}\n--- stdout\n{done.stdout[-3000:]}\n--- stderr\n{done.stderr[-3000:]}"
    )


def _cases() -> list:
    cases = []
    for found in all_blocks():
        block = found.block
        if block is None or not block.run or found.lang not in ("bash", "python"):
            continue
        marks = [pytest.mark.shared] if block.shared else []
        cases.append(pytest.param(found, marks=marks, id=found.where))
    return cases


@pytest.mark.slow  # the whole read-through (minutes)
@pytest.mark.parametrize("found", _cases())
def test_block_runs(reader, found):
    assert found.block is not None
    if found.block.shared and not HAVE_SHARED:
        pytest.skip(f"needs the shared data at {SHARED}")
    reader.run(found.page, found)
