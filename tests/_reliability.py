"""Support for the reliability tests: a synthetic dataset of any size, the environment of a
`judge` command run in-process (`sandbox`, for `_cli.judge`) or in a subprocess (`env`, `cli`), and
a way to tell which item a mock-server request was about."""

from __future__ import annotations

import os
import re
import select
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from reljudge.io.judgments import read_judgments
from reljudge.testing import MockLLMServer, MockReply, MockRequest

MODEL = "openai/mock-model"
SECRET = "sk-reljudge-FAKE-9f8e7d6c5b4a3210-DO-NOT-LEAK"
_WORDS = (
    "river bank loan interest water flood boat fish money account deposit stream bridge current "
    "mortgage rate town valley rain harbour ship cargo credit card branch teller vault coin"
).split()
_DOCID = re.compile(r"\bdocref (d\d+-\d+)\b")


@dataclass(frozen=True)
class Dataset:
    root: Path
    topics: Path
    qrels: Path
    corpus: Path
    n_items: int

    def args(self) -> list[str]:
        return ["--topics", str(self.topics), "--qrels", str(self.qrels), "--corpus", str(self.corpus)]


def make_dataset(root: Path, n_topics: int, docs_per_topic: int) -> Dataset:
    """Topics ``q0..``, and per topic ``docs_per_topic`` judged passages ``dT-K`` whose text names
    the docid (``docref dT-K``), so that a request can be traced back to its item."""
    root.mkdir(parents=True, exist_ok=True)
    topics, qrels, corpus = [], [], []
    for t in range(n_topics):
        words = [_WORDS[(t * 7 + i * 3) % len(_WORDS)] for i in range(4)]
        topics.append(f"q{t}\twhat is the {' '.join(words)}")
        for k in range(docs_per_topic):
            docid = f"d{t}-{k}"
            body = " ".join(_WORDS[(t + k * 5 + i) % len(_WORDS)] for i in range(12))
            corpus.append(f"{docid}\tPassage docref {docid} about {body}.")
            qrels.append(f"q{t} 0 {docid} {(t + k) % 4}")
    paths = {name: root / f"{name}.tsv" for name in ("topics", "passages")}
    paths["qrels"] = root / "qrels.txt"
    paths["topics"].write_text("\n".join(topics) + "\n")
    paths["qrels"].write_text("\n".join(qrels) + "\n")
    paths["passages"].write_text("\n".join(corpus) + "\n")
    return Dataset(root, paths["topics"], paths["qrels"], paths["passages"], n_topics * docs_per_topic)


def item_of(req: MockRequest) -> str | None:
    """The docid a request judges (from the ``docref`` in its passage)."""
    found = _DOCID.findall(req.prompt)
    return found[-1] if found else None


def judge_cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "reljudge", *args]


def run_args(base_url: str, out: Path, data: Dataset, *extra: str, method: str = "binary") -> list[str]:
    return [
        "run",
        "--method",
        method,
        "--model",
        MODEL,
        "--base-url",
        base_url,
        *data.args(),
        "--output",
        str(out),
        "--no-progress",
        *extra,
    ]


def sandbox(tmp: Path, **more: str) -> dict[str, str | None]:
    """What a reliability test changes in the environment of a `judge` command, as an overlay for
    `_cli.judge`: every ``*_API_KEY`` variable removed (None), a fake key, a private cache and home."""
    unset: dict[str, str | None] = {k: None for k in os.environ if k.endswith("_API_KEY")}
    return {
        **unset,
        "OPENAI_API_KEY": SECRET,
        "RELJUDGE_CACHE": str(tmp / "default-cache.sqlite"),
        "XDG_CACHE_HOME": str(tmp / "xdg-cache"),
        **more,
    }


def env(tmp: Path, **more: str) -> dict[str, str]:
    """The environment of a CLI subprocess: this one with `sandbox` laid over it."""
    overlay = sandbox(tmp, **more)
    base = {k: v for k, v in os.environ.items() if k not in overlay}
    return {**base, **{k: v for k, v in overlay.items() if v is not None}}


def cli(args: Sequence[str], tmp: Path, timeout: float = 300, **more: str) -> subprocess.CompletedProcess:
    """`judge ARGS` in a new interpreter, in ``tmp``, in the `sandbox` environment."""
    # a real process: for what the interpreter's own start does (in-process runs: `_cli.judge`)
    return subprocess.run(
        judge_cmd(*args), env=env(tmp, **more), capture_output=True, text=True, timeout=timeout, cwd=tmp
    )


def wait_until_idle(srv: MockLLMServer, timeout: float = 120) -> None:
    """Wait until ``srv`` has no connection waiting to be accepted and no request handler running,
    so that every request a killed client had sent is registered (or was dropped) before the test
    counts them. Event-driven: a fixed sleep is too short on a busy machine."""
    httpd = srv._httpd
    assert httpd is not None, "the server is not running"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        pending, _, _ = select.select([httpd.socket], [], [], 0)
        handlers = [  # threads of socketserver's ThreadingMixIn, one per connection of this server
            t for t in threading.enumerate() if _handler_of(t) is httpd and t.is_alive()
        ]
        if not pending and not handlers:
            return
        time.sleep(0.01)
    raise AssertionError(f"the mock server was still busy after {timeout} s")


class Gate:
    """A responder that answers the first ``open_for`` requests (by server index) at once and
    holds every later one until `release` (or ``hold_s``): a run stays unfinished for as long as a
    test needs, however slow or fast the machine is."""

    def __init__(self, inner: Callable[[MockRequest], str | MockReply], open_for: int, hold_s: float = 300):
        self.inner = inner
        self.open_for = open_for
        self.hold_s = hold_s
        self._open = threading.Event()

    def __call__(self, req: MockRequest) -> str | MockReply:
        if req.index >= self.open_for:
            self._open.wait(self.hold_s)
        return self.inner(req)

    def release(self) -> None:
        self._open.set()


def _handler_of(thread: threading.Thread) -> object:
    """The server whose request-handler thread ``thread`` is (None for any other thread)."""
    target = getattr(thread, "_target", None)  # set while the thread runs
    if getattr(target, "__name__", "") != "process_request_thread":
        return None
    return getattr(target, "__self__", None)


def final_labels(out: Path) -> dict[tuple, tuple]:
    """{key: (status, label, raw)} of the latest record of each key."""
    latest = {r.key: r for r in read_judgments(out / "judgments.jsonl")}
    return {k: (r.status, r.label, r.raw) for k, r in latest.items()}
