"""What a worker of ``judge batch ray`` does without Ray (`reljudge.run.batch.endpoint`,
`reljudge.run.batch.journal`): request lines sent to the mock server under the client's rules
(retries on 429/5xx, total deadlines, size bounds, the key kept out), answers journaled, and the
journal turned into one output file per request file that ``judge batch import`` reads."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from reljudge.llm.batch.lines import parse_output_line, request_line
from reljudge.run.batch.endpoint import EndpointOptions, EndpointSender, parse_request
from reljudge.run.batch.journal import PARTS_DIR, AnsweredIndex, PartWriter, write_outputs
from reljudge.testing import FaultInjector, MockLLMServer, responders
from reljudge.testing.responders import hostile


def ids(n: int) -> list[str]:
    import hashlib

    return [hashlib.sha256(str(i).encode()).hexdigest() for i in range(n)]


def body(i: int) -> dict:
    return {
        "model": "mock-model",
        "messages": [{"role": "user", "content": f"question {i}"}],
        "temperature": 0,
    }


def send_all(url: str, n: int, **options) -> list:
    async def go():
        async with EndpointSender(EndpointOptions(url, **options)) as sender:
            return await asyncio.gather(*(sender.send(c, body(i)) for i, c in enumerate(ids(n))))

    return asyncio.run(go())


def test_answers_are_output_lines_import_reads_and_429_and_5xx_are_retried():
    faults = FaultInjector(responders.fixed("##final score: 2"), rate_429=0.2, rate_5xx=0.2, retry_after=0.0)
    with MockLLMServer(faults) as srv:
        sent = send_all(srv.openai_url, 40, concurrency=4, backoff_base_s=0.01, max_attempts=20)
        assert max(srv.max_in_flight, 1) <= 4
    assert faults.counts["429"] > 0 and faults.counts["5xx"] > 0
    assert [s.outcome for s in sent] == ["answered"] * 40
    line = parse_output_line(sent[0].line)
    assert line.answered and line.custom_id == ids(40)[0]
    assert line.body["choices"][0]["message"]["content"] == "##final score: 2"


@pytest.mark.slow
def test_a_server_that_never_answers_is_cut_by_the_total_deadline_and_left_unanswered():
    with MockLLMServer(hostile.blackhole) as srv:
        sent = send_all(srv.openai_url, 2, timeout_s=0.5, max_attempts=2, backoff_base_s=0.01)
        assert srv.calls == 4  # two attempts each
    assert [(s.outcome, s.line) for s in sent] == [("unanswered", None)] * 2
    assert "timeout" in sent[0].error


@pytest.mark.parametrize(
    ("responder", "why"),
    [
        (hostile.huge(10), "response too large"),
        (hostile.gzip_bomb(50), "response too large"),
        (hostile.not_found, "does not exist"),
    ],
)
def test_an_answer_that_is_an_error_is_a_failed_output_line_asked_once(responder, why):
    with MockLLMServer(responder) as srv:
        sent = send_all(srv.openai_url, 1, backoff_base_s=0.01)
        assert srv.calls == 1  # never retried: the same request would get the same
    assert sent[0].outcome == "failed"
    line = parse_output_line(sent[0].line)
    assert not line.answered and why in line.error and len(sent[0].line) < 10_000


def test_the_key_comes_from_the_environment_and_never_reaches_a_line(monkeypatch):
    secret = "sk-test-ray-0123456789abcdefSECRET"
    monkeypatch.setenv("RAY_TEST_KEY", secret)
    with MockLLMServer(hostile.key_echo) as srv:
        sent = send_all(srv.openai_url, 1, key_env="RAY_TEST_KEY")
    assert sent[0].outcome == "answered"
    assert b"Bearer ***" in sent[0].line and secret.encode() not in sent[0].line
    with MockLLMServer(hostile.unauthorized) as srv:
        failed = send_all(srv.openai_url, 1, key_env="RAY_TEST_KEY")[0]
    assert failed.outcome == "failed" and secret not in failed.error and secret.encode() not in failed.line


def test_a_request_line_is_read_back_as_exported():
    raw = request_line(ids(1)[0], body(7))
    assert parse_request(raw) == (ids(1)[0], body(7))


def test_the_journal_counts_whole_lines_only_and_outputs_hold_one_line_per_request(tmp_path):
    with MockLLMServer(responders.fixed("1")) as srv:
        sent = send_all(srv.openai_url, 5)
    lines = {s.custom_id: s.line for s in sent}
    # the test's ids are those of send_all: shard "a" holds the first three, "b" the last two
    a, b = ids(5)[:3], ids(5)[3:]
    first = PartWriter(tmp_path)
    for custom_id in a + b[:1]:
        first.append(lines[custom_id])
    first.append(lines[b[1]][:40])  # a worker killed mid-line: torn, not an answer
    first.close()
    index = AnsweredIndex(tmp_path)
    assert index.refresh() == set(a + b[:1])
    second = PartWriter(tmp_path)  # a restarted worker: its own file
    second.append(lines[a[0]])  # a second line for one request
    second.append(lines[b[1]])
    second.close()
    assert index.refresh() == set(a + b) and index.duplicates == 1
    shard_a, shard_b = tmp_path / "requests-000-of-002.jsonl", tmp_path / "requests-001-of-002.jsonl"
    done = write_outputs({shard_a: set(a), shard_b: set(b)}, tmp_path)
    assert (done.answered, done.missing, done.duplicates) == (5, 0, 1)
    out_a = (tmp_path / "output-000-of-002.jsonl").read_bytes().splitlines()
    out_b = (tmp_path / "output-001-of-002.jsonl").read_bytes().splitlines()
    assert sorted(json.loads(x)["custom_id"] for x in out_a) == sorted(a)
    assert sorted(json.loads(x)["custom_id"] for x in out_b) == sorted(b)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [PARTS_DIR, "output-000-of-002.jsonl", "output-001-of-002.jsonl"]
    )  # no temporary file left


def test_a_request_with_no_answer_is_missing_from_the_outputs(tmp_path):
    with MockLLMServer(responders.fixed("1")) as srv:
        sent = send_all(srv.openai_url, 2)
    writer = PartWriter(tmp_path)
    writer.append(sent[0].line)
    writer.close()
    done = write_outputs({Path("x/requests.jsonl"): {s.custom_id for s in sent}}, tmp_path)
    assert (done.answered, done.missing) == (1, 1)
    assert len((tmp_path / "output.jsonl").read_bytes().splitlines()) == 1


def shard(tmp_path: Path, lines: list[bytes]) -> Path:
    (tmp_path / "shards").mkdir(exist_ok=True)
    path = tmp_path / "shards" / "requests-000-of-001.jsonl"
    path.write_bytes(b"".join(lines))
    return path


@pytest.mark.parametrize(
    ("last", "why"),
    [
        (b'{"custom_id": "' + b"a" * 64 + b'", "bo', "not JSON"),
        (request_line("b" * 64, {**body(1), "model": "other-model"}), "asks for model 'other-model'"),
        (request_line("c" * 64, body(1))[:-1] + b"\n" + request_line("c" * 64, body(2)), "asked twice"),
    ],
)
def test_judge_batch_ray_refuses_bad_request_files_with_file_line_before_anything(tmp_path, last, why):
    from _cli import judge

    path = shard(tmp_path, [request_line(ids(1)[0], body(0)), last])
    done = judge(
        "batch", "ray", str(path.parent), "--base-url", "http://127.0.0.1:9/v1", "--model", "mock-model",
        "--out", str(tmp_path / "out"), cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 2 and f"{path}:" in done.stderr and why in done.stderr, done.output
    assert not (tmp_path / "out").exists()


def test_judge_batch_ray_without_ray_names_the_extra(tmp_path):
    from _cli import judge

    try:
        import ray  # noqa: F401

        pytest.skip("Ray is installed here")
    except ImportError:
        pass
    path = shard(tmp_path, [request_line(ids(1)[0], body(0))])
    done = judge("batch", "ray", str(path), "--base-url", "http://127.0.0.1:9/v1", "--out", str(tmp_path / "o"), cwd=tmp_path)  # fmt: skip
    assert done.returncode == 2 and "pip install 'reljudge[ray]'" in done.stderr, done.output
