"""``judge batch export|import`` (`reljudge.run.batch.exchange`): a job's requests as OpenAI batch
files, answered by a stand-in for ``vllm run-batch`` (`reljudge.testing.vllm_batch`, vLLM's output
format), and imported back: the same records a synchronous run makes against the mock server,
sharded by topic, multi-stage in rounds, and bad output files refused with FILE:LINE."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from _cli import judge
from reljudge.io.judgments import read_judgments
from reljudge.run import RunConfig, run_job
from reljudge.run.batch.requests import shard_name, shard_of
from reljudge.testing import MockLLMServer
from reljudge.testing.vllm_batch import run_batch

MODEL = "openai/mock-model"
BASE_URL = "http://127.0.0.1:9/v1"  # never contacted by export/import: part of the cache key only


def job_args(tmp_path: Path, name: str, method: str = "umbrela", limit: int | None = 30) -> list[str]:
    return [
        "--method", method, "--model", MODEL, "--base-url", BASE_URL, "--dataset", "dl19-sample",
        *(["--limit", str(limit)] if limit else []), "--out", str(tmp_path / name), "--cache", str(tmp_path / f"{name}.sqlite"),
        "--no-progress",
    ]  # fmt: skip


def labels(run_dir: Path) -> dict:
    return {r.key: (r.status, r.label) for r in read_judgments(run_dir / "judgments.jsonl")}


def sync_labels(tmp_path: Path, method: str = "umbrela", limit: int | None = 30) -> dict:
    """The records of a synchronous run of the same job against the mock server (same responder)."""
    with MockLLMServer(models=("mock-model",)) as srv:
        cfg = RunConfig(
            method=method, model=MODEL, base_url=srv.openai_url, dataset="dl19-sample", limit=limit,
            output=tmp_path / "sync", cache_path=tmp_path / "sync.sqlite", progress=False,
        )  # fmt: skip
        run_job(cfg)
    return labels(tmp_path / "sync")


@pytest.mark.slow
def test_export_vllm_import_round_trip_gives_the_records_of_a_synchronous_run(tmp_path):
    args = job_args(tmp_path, "run")
    done = judge("batch", "export", *args, "--requests", str(tmp_path / "req.jsonl"), "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert not result["complete"] and result["requests"] == 30 and result["new_records"] == 0
    lines = (tmp_path / "req.jsonl").read_bytes().splitlines()
    first = json.loads(lines[0])
    assert first["url"] == "/v1/chat/completions" and first["body"]["model"] == "mock-model"
    assert len(first["custom_id"]) == 64
    assert run_batch(tmp_path / "req.jsonl", tmp_path / "out.jsonl", model="mock-model") == 30
    out = json.loads((tmp_path / "out.jsonl").read_bytes().splitlines()[0])
    assert out["id"].startswith("vllm-") and out["response"]["request_id"].startswith("vllm-batch-")

    done = judge("batch", "import", *args, str(tmp_path / "out.jsonl"), "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["complete"] and result["ingested"]["answers"] == 30 and result["new_records"] == 30
    assert labels(tmp_path / "run") == sync_labels(tmp_path)
    assert (tmp_path / "run" / "qrels.txt").exists()

    again = judge(
        "batch", "export", *args, "--requests", str(tmp_path / "req2.jsonl"), "--json", cwd=tmp_path
    )
    assert json.loads(again.stdout)["complete"] and not (tmp_path / "req2.jsonl").exists()


@pytest.mark.slow
def test_shards_keep_each_topic_on_one_shard_and_import_takes_them_all(tmp_path):
    args = job_args(tmp_path, "run", limit=None)  # every topic of the sample
    shards = tmp_path / "shards"
    done = judge("batch", "export", *args, "--requests", str(shards), "--shards", "3", "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    files = [Path(f["path"]) for f in json.loads(done.stdout)["files"]]
    assert sorted(p.name for p in shards.iterdir()) == sorted(p.name for p in files)
    assert all(p.name == shard_name(int(p.name[9:12]), 3) for p in files)
    topic_shard: dict[str, int] = {}
    for path in files:
        index = int(path.name[9:12])
        for raw in path.read_bytes().splitlines():
            text = json.loads(raw)["body"]["messages"][-1]["content"]
            query = next(q for q in QUERIES if q in text)
            assert topic_shard.setdefault(query, index) == index  # one shard per topic
            assert shard_of(query, "", 3) == index
    assert len(set(topic_shard.values())) > 1
    outputs = []
    for path in files:
        outputs.append(tmp_path / f"{path.stem}.out.jsonl")
        run_batch(path, outputs[-1], model="mock-model")
    done = judge("batch", "import", *args, *map(str, outputs), "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["complete"]
    assert labels(tmp_path / "run") == sync_labels(tmp_path, limit=None)


#: the dl19-sample queries (the shard test finds each request's topic by its text)
QUERIES: list[str] = []


@pytest.fixture(autouse=True, scope="module")
def _queries():
    from reljudge.datasets import load_dataset

    QUERIES[:] = sorted({t for t in load_dataset("dl19-sample").topics.values()}, key=len, reverse=True)


@pytest.mark.slow
def test_a_multi_stage_method_runs_as_export_import_rounds(tmp_path):
    args = job_args(tmp_path, "exam", method="exam", limit=6)
    for round_ in range(1, 6):
        req = tmp_path / f"req{round_}.jsonl"
        done = judge("batch", "export", *args, "--requests", str(req), "--json", cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        if json.loads(done.stdout)["complete"]:
            break
        run_batch(req, tmp_path / f"out{round_}.jsonl", model="mock-model")
        done = judge("batch", "import", *args, str(tmp_path / f"out{round_}.jsonl"), cwd=tmp_path)
        assert done.returncode == 0, done.stderr
    else:
        raise AssertionError("the EXAM job did not finish in 5 rounds")
    assert round_ >= 3  # questions, then grades, then nothing left
    assert labels(tmp_path / "exam") == sync_labels(tmp_path, method="exam", limit=6)


@pytest.mark.slow
def test_failed_lines_become_api_errors_and_retry_failed_exports_them_again(tmp_path):
    args = job_args(tmp_path, "run")
    judge("batch", "export", *args, "--requests", str(tmp_path / "req.jsonl"), cwd=tmp_path)
    run_batch(tmp_path / "req.jsonl", tmp_path / "out.jsonl", model="mock-model", fail_share=0.3)
    out = [json.loads(x) for x in (tmp_path / "out.jsonl").read_bytes().splitlines()]
    failed = sum(1 for x in out if x["error"] is not None)
    assert 0 < failed < 30
    done = judge("batch", "import", *args, str(tmp_path / "out.jsonl"), "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["ingested"]["failed"] == failed
    failures = (tmp_path / "run" / "batch" / "failures.jsonl").read_text()
    assert "mock engine failure [500]" in failures  # vLLM's ErrorResponse, unwrapped
    statuses = [s for s, _ in labels(tmp_path / "run").values()]
    assert statuses.count("api_error") == failed and statuses.count("ok") == 30 - failed

    done = judge(
        "batch", "export", *args, "--retry-failed", "--requests", str(tmp_path / "retry.jsonl"), "--json",
        cwd=tmp_path,
    )  # fmt: skip
    assert json.loads(done.stdout)["requests"] == failed
    run_batch(tmp_path / "retry.jsonl", tmp_path / "retry.out.jsonl", model="mock-model")
    done = judge("batch", "import", *args, "--retry-failed", str(tmp_path / "retry.out.jsonl"), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert labels(tmp_path / "run") == sync_labels(tmp_path)


@pytest.mark.slow
def test_bad_output_files_are_refused_with_file_line_and_nothing_is_ingested(tmp_path):
    args = job_args(tmp_path, "run", limit=10)
    judge("batch", "export", *args, "--requests", str(tmp_path / "req.jsonl"), cwd=tmp_path)
    out = tmp_path / "out.jsonl"
    run_batch(tmp_path / "req.jsonl", out, model="mock-model", stop_after=6)  # a killed engine: torn line
    done = judge("batch", "import", *args, str(out), cwd=tmp_path)
    assert done.returncode == 2
    assert f"{out.name}:7: not JSON" in done.stderr and "--skip-bad-lines" in done.stderr
    assert not (tmp_path / "run" / "judgments.jsonl").exists() or labels(tmp_path / "run") == {}

    stranger = json.loads(out.read_bytes().splitlines()[0])
    stranger["custom_id"] = "f" * 64
    other = tmp_path / "other.jsonl"
    other.write_text(json.dumps(stranger) + "\n")
    done = judge("batch", "import", *args, str(other), cwd=tmp_path)
    assert done.returncode == 2 and f"{other.name}:1: custom_id ffffffffffffffff… is not one" in done.stderr

    done = judge("batch", "import", *args, "--skip-bad-lines", str(out), "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["skipped"] == 1 and result["ingested"]["answers"] == 6 and result["new_records"] == 6
    assert not result["complete"] and result["remaining_requests"] == 4


def test_import_without_an_export_names_what_to_give(tmp_path):
    args = job_args(tmp_path, "fresh", limit=5)
    (tmp_path / "out.jsonl").write_text("")
    done = judge("batch", "import", *args, str(tmp_path / "out.jsonl"), cwd=tmp_path)
    assert done.returncode == 2 and "--requests" in done.stderr
    assert not (tmp_path / "fresh").exists() and not (tmp_path / "fresh.sqlite").exists()  # nothing made


def test_the_vllm_stand_in_writes_vllm_error_shapes(tmp_path):
    req = tmp_path / "req.jsonl"
    good = {"custom_id": "a" * 64, "method": "POST", "url": "/v1/chat/completions",
            "body": {"model": "m", "messages": [{"role": "user", "content": "hi"}]}}  # fmt: skip
    lines = [good, {**good, "custom_id": "b" * 64, "url": "/v1/completions"},
             {**good, "custom_id": "c" * 64, "body": {**good["body"], "model": "other"}}]  # fmt: skip
    req.write_text("".join(json.dumps(x) + "\n" for x in lines))
    run_batch(req, tmp_path / "out.jsonl", model="m")
    ok, url, model = (json.loads(x) for x in (tmp_path / "out.jsonl").read_bytes().splitlines())
    assert ok["response"]["status_code"] == 200 and ok["response"]["body"]["object"] == "chat.completion"
    assert ok["response"]["body"]["choices"][0]["stop_reason"] is None and ok["error"] is None
    assert url["response"] == {**url["response"], "status_code": 400, "body": None}
    assert isinstance(url["error"], str) and "/v1/completions" in url["error"]
    assert model["response"]["status_code"] == 404 and model["error"]["error"]["code"] == 404
