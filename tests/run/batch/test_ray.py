"""``judge batch ray`` (`reljudge.run.batch.ray_send`) on a real local Ray cluster: a 2,000-request
UMBRELA job exported in 4 shards, answered by a Ray Data pipeline of 2 workers against the mock
server, imported -- the records of a synchronous run; and the same job with a worker killed
mid-way (Ray restarts it) and then the whole pipeline killed and run again: every request has
exactly one output line and its record, and the server was asked a request again only when its
first answer was never written.

"Answered twice" means a custom_id with two output lines: in the journal (``OUT/parts/``), in
the output files, or among the answers `judge batch import` ingests; none may have two. The
server may see a request a second time only when the first answer was never written: the
requests in flight when a worker or the pipeline was killed (at most ``concurrency`` per worker
killed).

Needs Ray Data (``pip install 'reljudge[ray]'``), which cannot share a virtualenv with the dev
extra (``rbo`` pins numpy below 2, Ray Data needs numpy 2): the test skips without it. Run it as
docs/contributing/testing.md says (a venv with ``.[ray]``, e.g. /work/venv-ray).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

import pytest

try:
    import ray  # noqa: F401
    import ray.data  # noqa: F401
except Exception as err:  # ImportError, or a Ray that cannot load here
    pytest.skip(
        f"Ray Data is not importable ({type(err).__name__}: {err}); install '.[ray]' in a venv of its own "
        "(docs/contributing/testing.md)",
        allow_module_level=True,
    )

from _cli import judge
from reljudge.io.judgments import read_judgments
from reljudge.testing import AutoResponder, MockLLMServer, MockRequest

pytestmark = pytest.mark.slow

TOPICS, DOCS = 40, 50  # 2,000 (topic, passage) pairs: 2,000 UMBRELA requests
SHARDS, WORKERS, CONCURRENCY = 4, 2, 8
SECRET = "sk-ray-test-0123456789abcdef-SECRET"
ROOT = Path(__file__).resolve().parents[3]


def dataset(root: Path) -> list[str]:
    root.mkdir(parents=True, exist_ok=True)
    topics, qrels, corpus = [], [], []
    for i in range(TOPICS):
        topics.append(f"q{i}\twhat does topic number {i} of the ray test ask about\n")
        for k in range(DOCS):
            qrels.append(f"q{i} 0 d{i}-{k} {k % 4}\n")
            corpus.append(f"d{i}-{k}\tPassage {k} of topic {i}: a short text on the subject, word {i * k}.\n")
    (root / "topics.tsv").write_text("".join(topics))
    (root / "qrels.txt").write_text("".join(qrels))
    (root / "passages.tsv").write_text("".join(corpus))
    return ["--topics", str(root / "topics.tsv"), "--qrels", str(root / "qrels.txt"), "--corpus", str(root / "passages.tsv")]  # fmt: skip


def job(tmp_path: Path, name: str, base_url: str = "http://127.0.0.1:9/v1") -> list[str]:
    return [
        "--method", "umbrela", "--model", "openai/mock-model", "--base-url", base_url,
        *dataset(tmp_path / "data"), "--out", str(tmp_path / name), "--cache", str(tmp_path / f"{name}.sqlite"),
        "--no-progress",
    ]  # fmt: skip


def labels(run_dir: Path) -> dict:
    return {r.key: (r.status, r.label) for r in read_judgments(run_dir / "judgments.jsonl")}


def sync_labels(tmp_path: Path) -> dict:
    with MockLLMServer(models=("mock-model",)) as srv:
        done = judge("run", *job(tmp_path, "sync", srv.openai_url), "--concurrency", "16", cwd=tmp_path)
        assert done.returncode == 0, done.output
    return labels(tmp_path / "sync")


def export(tmp_path: Path) -> tuple[list[str], dict[str, str]]:
    """The job's options, and custom_id by the request's messages (what the server sees)."""
    args = job(tmp_path, "run")
    done = judge("batch", "export", *args, "--requests", str(tmp_path / "shards"), "--shards", str(SHARDS), "--json", cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.output
    result = json.loads(done.stdout)
    assert result["requests"] == TOPICS * DOCS and len(result["files"]) == SHARDS
    by_messages = {}
    for path in sorted((tmp_path / "shards").glob("requests-*.jsonl")):
        for raw in path.read_bytes().splitlines():
            line = json.loads(raw)
            by_messages[messages_key(line["body"]["messages"])] = line["custom_id"]
    assert len(by_messages) == TOPICS * DOCS
    return args, by_messages


def messages_key(messages: list) -> str:
    return json.dumps(messages, sort_keys=True)


def ray_args(tmp_path: Path, base_url: str) -> list[str]:
    return [
        "batch", "ray", str(tmp_path / "shards"), "--base-url", base_url, "--model", "mock-model",
        "--out", str(tmp_path / "out"), "--workers", str(WORKERS), "--concurrency-per-worker", str(CONCURRENCY),
        "--num-cpus", "2", "--json",
    ]  # fmt: skip


def import_outputs(tmp_path: Path, args: list[str]) -> dict:
    outputs = sorted(str(p) for p in (tmp_path / "out").glob("output-*.jsonl"))
    assert len(outputs) == SHARDS
    done = judge("batch", "import", *args, *outputs, "--json", cwd=tmp_path)
    assert done.returncode == 0, done.output
    return json.loads(done.stdout)


def lines_per_id(paths: list[Path]) -> Counter[str]:
    counts: Counter[str] = Counter()
    for path in paths:
        for raw in path.read_bytes().splitlines(keepends=True):
            if raw.endswith(b"\n"):  # a torn last line of a killed worker is no answer
                counts[json.loads(raw)["custom_id"]] += 1
    return counts


@pytest.fixture
def ray_env(monkeypatch):
    """Ray's files in a short directory of the test's own (its socket paths must stay short), the
    key in the environment only."""
    tmp = tempfile.mkdtemp(prefix="rj-ray-", dir="/tmp")
    monkeypatch.setenv("RAY_TMPDIR", tmp)
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]))
    yield Path(tmp)
    import shutil

    shutil.rmtree(tmp, ignore_errors=True)


def assert_no_secret(*roots: Path, texts: tuple[str, ...] = ()) -> None:
    for text in texts:
        assert SECRET not in text
    for root in roots:
        for path in root.rglob("*"):
            if path.is_file() and not path.is_symlink():
                assert SECRET.encode() not in path.read_bytes(), path


def test_a_sharded_job_through_ray_data_gives_the_records_of_a_synchronous_run(tmp_path, ray_env):
    args, by_messages = export(tmp_path)
    keys = []

    def answer(req: MockRequest):
        keys.append((messages_key(req.messages), req.raw_authorization))
        return auto(req)

    auto = AutoResponder()
    with MockLLMServer(answer, models=("mock-model",)) as srv:
        done = judge(*ray_args(tmp_path, srv.openai_url), cwd=tmp_path)
        assert done.returncode == 0, done.output
        assert srv.max_in_flight <= WORKERS * CONCURRENCY
    result = json.loads(done.stdout)
    assert (
        result["complete"]
        and result["answered"] == TOPICS * DOCS
        and result["this_run"] == {"answered": 2000}
    )
    assert len(result["workers"]) == WORKERS  # both actors sent requests
    asked = Counter(by_messages[k] for k, _ in keys)
    assert len(asked) == TOPICS * DOCS and set(asked.values()) == {1}  # every request asked once
    assert {auth for _, auth in keys} == {
        f"Bearer {SECRET}"
    }  # the key reached the server, from the environment
    outputs = sorted((tmp_path / "out").glob("output-*.jsonl"))
    assert set(lines_per_id(outputs).values()) == {1}

    imported = import_outputs(tmp_path, args)
    assert imported["complete"] and imported["ingested"]["answers"] == TOPICS * DOCS
    assert labels(tmp_path / "run") == sync_labels(tmp_path)
    assert list(ray_env.glob("ray/session_*/logs/*"))  # Ray's logs are where the check looks
    assert_no_secret(tmp_path / "out", tmp_path / "run", ray_env, texts=(done.output,))

    again = judge(
        *ray_args(tmp_path, "http://127.0.0.1:9/v1"), cwd=tmp_path
    )  # nothing left: Ray not even started
    assert again.returncode == 0, again.output
    assert json.loads(again.stdout)["already_answered"] == TOPICS * DOCS


class Gate:
    """A responder that holds every request from number ``limit`` on until the limit moves."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.inner = AutoResponder()
        self.moved = threading.Condition()

    def __call__(self, req: MockRequest):
        with self.moved:
            self.moved.wait_for(lambda: req.index < self.limit, timeout=300)
        return self.inner(req)

    def move(self, limit: float) -> None:
        with self.moved:
            self.limit = limit
            self.moved.notify_all()


def wait_for(condition, what: str, timeout: float = 300) -> None:
    """A bound against a hang, not a margin: the conditions are counts."""
    end = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < end, f"timed out waiting for {what}"
        time.sleep(0.05)


def session_pids(sid: int) -> list[int]:
    """The processes of session ``sid`` (the pipeline's driver started one: Ray's processes)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[3]) == sid:
                found.append(int(entry.name))
    return found


def live_workers(tmp_path: Path, sid: int) -> list[int]:
    """The pids of the sending actors alive now (their journal files are named by pid)."""
    pids = {int(p.name.split("-")[0]) for p in (tmp_path / "out" / "parts").glob("*.jsonl")}
    return sorted(pids & set(session_pids(sid)))


def held_keys(srv: MockLLMServer, limit: int) -> set[str]:
    """The requests the gate holds: those from number ``limit`` on (all in flight)."""
    return {messages_key(r.messages) for r in list(srv.requests)[limit:]}


def test_a_worker_killed_and_the_pipeline_killed_and_run_again_answer_nothing_twice(tmp_path, ray_env):
    args, by_messages = export(tmp_path)
    gate = Gate(600)
    with MockLLMServer(gate, models=("mock-model",)) as srv:
        command = [sys.executable, "-m", "reljudge", *ray_args(tmp_path, srv.openai_url)]
        log = (tmp_path / "killed-run.log").open("wb")  # not a pipe: a full one would stall the driver
        proc = subprocess.Popen(command, start_new_session=True, stdout=log, stderr=subprocess.STDOUT)
        try:
            # 1. a worker is killed with requests in flight (held at the server); Ray starts another
            wait_for(
                lambda: srv.calls > 600 and len(live_workers(tmp_path, proc.pid)) == WORKERS, "600 requests"
            )
            victim = live_workers(tmp_path, proc.pid)[0]
            assert b"ray::" in Path(f"/proc/{victim}/cmdline").read_bytes()
            os.kill(victim, signal.SIGKILL)
            wait_for(lambda: victim not in session_pids(proc.pid), "the killed worker to end", 60)
            held = [held_keys(srv, 600)]  # every request in flight at the kill is held there
            gate.move(1300)
            # 2. the whole pipeline is killed: driver, cluster and workers (with requests in flight)
            wait_for(lambda: srv.calls > 1300, "1,300 requests")
            assert proc.poll() is None
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=60)
            wait_for(lambda: not session_pids(proc.pid), "the pipeline's processes to end", 60)
            held.append(held_keys(srv, 1300))
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=60)
            log.close()
        first_run = srv.calls
        gate.move(float("inf"))
        # 3. the same command again
        done = subprocess.run(command, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr[-3000:]
        asked = Counter(by_messages[messages_key(r.messages)] for r in srv.requests)
    result = json.loads(done.stdout)
    assert result["complete"] and result["answered"] == TOPICS * DOCS
    assert 0 < result["already_answered"] < TOPICS * DOCS
    assert result["this_run"]["answered"] == TOPICS * DOCS - result["already_answered"]
    assert srv.calls == first_run + result["this_run"]["answered"]

    journal = lines_per_id(sorted((tmp_path / "out" / "parts").glob("*.jsonl")))
    outputs = lines_per_id(sorted((tmp_path / "out").glob("output-*.jsonl")))
    assert len(journal) == len(outputs) == TOPICS * DOCS  # nothing lost
    assert set(journal.values()) == set(outputs.values()) == {1}  # nothing answered twice
    assert result["duplicates_left_out"] == 0
    # asked again: only a request in flight at a kill (its answer never written), once per kill
    assert len(asked) == TOPICS * DOCS
    held_ids = [{by_messages[k] for k in keys} for keys in held]
    for custom_id, times in asked.items():
        assert times <= 1 + sum(custom_id in ids for ids in held_ids), custom_id
    assert sum(asked.values()) > TOPICS * DOCS  # the kills did cut answers off
    workers = {p.name.split("-")[0] for p in (tmp_path / "out" / "parts").glob("*.jsonl")}
    assert len(workers) >= WORKERS + 1 + 1  # the killed worker's successor, and the second run's

    imported = import_outputs(tmp_path, args)
    assert imported["complete"] and imported["ingested"]["answers"] == TOPICS * DOCS
    assert labels(tmp_path / "run") == sync_labels(tmp_path)
    killed_run = (tmp_path / "killed-run.log").read_text(errors="replace")
    assert_no_secret(tmp_path / "out", ray_env, texts=(done.stdout, done.stderr, killed_run))
