"""The batch seam (`reljudge.run.batch.seam`, `reljudge.llm.batch`): collect a job's requests
as OpenAI batch lines, answer them elsewhere, ingest the output lines, and the next pass makes the
same records a synchronous run makes. Here the lines are answered by posting each body to the
mock server's chat route (a real HTTP server on 127.0.0.1), the way ``vllm run-batch`` would."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import httpx
import pytest

from reljudge.io.judgments import read_judgments
from reljudge.llm.batch.lines import (
    MAX_OUTPUT_LINE_BYTES,
    bounded_lines,
    parse_output_line,
    request_custom_id,
)
from reljudge.run import RunConfig, run_job
from reljudge.run.batch.seam import BatchSession
from reljudge.testing import MockLLMServer

MODEL = "openai/gpt-4o-mini"


@pytest.fixture()
def server():
    with MockLLMServer(models=("gpt-4o-mini",)) as srv:
        yield srv


@pytest.fixture(autouse=True)
def api_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-batch-secret-1234567890")


def config(srv: MockLLMServer, tmp_path: Path, name: str, **more) -> RunConfig:
    values = dict(
        method="umbrela",
        model=MODEL,
        base_url=srv.openai_url,
        dataset="dl19-sample",
        limit=24,
        output=tmp_path / name,
        cache_path=tmp_path / f"{name}.sqlite",
        progress=False,
    )
    values.update(more)
    return RunConfig(**values)


def answer_lines(srv: MockLLMServer, requests: Path, out: Path) -> set[str]:
    """Answer every request line by posting its body to the mock's chat route; write an output
    file as OpenAI's batch output has it. Returns the custom_ids asked."""
    ids = set()
    with requests.open("rb") as src, out.open("wb") as dst, httpx.Client() as http:
        for raw in src:
            line = json.loads(raw)
            ids.add(request_custom_id(raw))
            assert line["method"] == "POST" and line["url"] == "/v1/chat/completions"
            resp = http.post(srv.url + line["url"], json=line["body"])
            record = {
                "id": "batch_req_x",
                "custom_id": line["custom_id"],
                "response": {"status_code": resp.status_code, "request_id": "r", "body": resp.json()},
                "error": None,
            }
            dst.write(json.dumps(record).encode() + b"\n")
    return ids


def labels(out: Path) -> dict[tuple, object]:
    return {r.key: (r.status, r.label) for r in read_judgments(out / "judgments.jsonl")}


def run_in_rounds(srv: MockLLMServer, cfg: RunConfig, tmp_path: Path, max_rounds: int = 8) -> int:
    """Collect, answer, ingest until a pass defers nothing; the number of passes."""

    async def rounds() -> int:
        session = BatchSession(cfg)
        try:
            for n in range(1, max_rounds + 1):
                step = await session.collect(tmp_path / f"requests-{n}.jsonl")
                if step.done:
                    session.finish()
                    return n
                assert step.collected > 0
                output = tmp_path / f"output-{n}.jsonl"
                ids = answer_lines(srv, step.requests, output)
                with output.open("rb") as handle:
                    report = session.ingest(bounded_lines(handle), expected=ids)
                assert report.rejected == 0 and report.answers + report.failed == len(ids)
            raise AssertionError("the job did not finish")
        finally:
            await session.aclose()

    return asyncio.run(rounds())


def test_collected_lines_answered_elsewhere_give_the_records_of_a_synchronous_run(server, tmp_path):
    run_job(config(server, tmp_path, "sync"))
    sync_calls = server.calls
    server.reset()
    cfg = config(server, tmp_path, "batch")
    assert run_in_rounds(server, cfg, tmp_path) == 2  # one pass collects, the next records
    assert server.calls == sync_calls  # each request sent once
    assert all(r.seen == 0 for r in server.requests)
    assert labels(tmp_path / "batch") == labels(tmp_path / "sync")
    first = (tmp_path / "requests-1.jsonl").read_bytes().splitlines()[0]
    body = json.loads(first)["body"]
    assert body["model"] == "gpt-4o-mini" and body["messages"] and body["temperature"] == 0.0
    assert b"sk-batch-secret" not in (tmp_path / "requests-1.jsonl").read_bytes()
    records = read_judgments(tmp_path / "batch" / "judgments.jsonl")
    assert all(not r.provenance.cached and r.provenance.usage.calls == 1 for r in records)
    sync = {r.key: r.provenance.usage.cost_usd for r in read_judgments(tmp_path / "sync" / "judgments.jsonl")}
    assert all(abs(r.provenance.usage.cost_usd - sync[r.key] / 2) < 1e-12 for r in records)  # half price


@pytest.mark.slow
def test_a_multi_stage_method_runs_in_rounds(server, tmp_path):
    cfg = config(server, tmp_path, "exam", method="exam", limit=None, topics_limit=1)
    run_job(config(server, tmp_path, "exam-sync", method="exam", limit=None, topics_limit=1))
    server.reset()
    assert run_in_rounds(server, cfg, tmp_path) == 3  # questions, then grades, then records
    assert all(r.seen == 0 for r in server.requests)
    assert labels(tmp_path / "exam") == labels(tmp_path / "exam-sync")


def test_hostile_output_lines_are_counted_never_stored(server, tmp_path):
    cfg = config(server, tmp_path, "hostile", limit=4)

    async def scenario() -> None:
        session = BatchSession(cfg)
        try:
            step = await session.collect(tmp_path / "requests.jsonl")
            ids = sorted(request_custom_id(raw) for raw in step.requests.read_bytes().splitlines())
            good = {"choices": [{"message": {"content": "##final score: 2 sk-batch-secret-1234567890"}}]}
            other = {"choices": [{"message": {"content": "##final score: 0"}}]}
            stranger = "f" * 64
            lines = [
                b"{not json",
                b"[1, 2]",
                json.dumps(
                    {"custom_id": "../../etc", "response": {"status_code": 200, "body": good}}
                ).encode(),
                json.dumps({"custom_id": stranger, "response": {"status_code": 200, "body": good}}).encode(),
                None,  # a line too long to read (`bounded_lines`)
                json.dumps({"custom_id": ids[0], "response": {"status_code": 200, "body": good}}).encode(),
                json.dumps({"custom_id": ids[3], "response": {"status_code": 200, "body": good}}).encode(),
                json.dumps({"custom_id": ids[3], "response": {"status_code": 200, "body": other}}).encode(),
                json.dumps(
                    {"custom_id": ids[1], "response": {"status_code": 200, "body": {"choices": 5}}}
                ).encode(),
                json.dumps(
                    {"custom_id": ids[2], "error": {"code": "server_error", "message": "boom"}}
                ).encode(),
                b"[" * 100_000,
            ]
            report = session.ingest(lines, expected=set(ids))
            assert report.answers == 1 and report.failed == 3 and report.rejected == 7
            assert report.duplicates == 1  # answered twice: neither answer kept, the request failed
            assert session.client._cache.db.get(stranger) is None
            assert session.client._cache.db.get(ids[3]) is None
            assert "more than once" in session.failures.get(ids[3])["error"]
            stored = session.client._cache.db.get(ids[0])
            assert "sk-batch-secret" not in stored["text"] and "***" in stored["text"]
            step = await session.collect(tmp_path / "requests-2.jsonl")
            assert step.done
        finally:
            await session.aclose()

    asyncio.run(scenario())
    records = {r.status for r in read_judgments(tmp_path / "hostile" / "judgments.jsonl")}
    assert records == {"ok", "api_error"}


def test_bounded_lines_skip_a_huge_line_without_holding_it(tmp_path):
    path = tmp_path / "big.jsonl"
    with path.open("wb") as handle:
        handle.write(b'{"a": 1}\n')
        handle.write(b"x" * (MAX_OUTPUT_LINE_BYTES + 10) + b"\n")
        handle.write(b'{"b": 2}\n')
    with path.open("rb") as handle:
        got = list(bounded_lines(handle))
    assert got == [b'{"a": 1}\n', None, b'{"b": 2}\n']


def test_output_line_shapes():
    cid = "a" * 64
    ok = parse_output_line(json.dumps({"custom_id": cid, "response": {"status_code": 200, "body": {}}}))
    assert ok.answered
    failed = parse_output_line(
        json.dumps(
            {"custom_id": cid, "response": {"status_code": 429, "body": {"error": {"message": "slow"}}}}
        )
    )
    assert not failed.answered and failed.status_code == 429 and failed.error == "slow"
    expired = parse_output_line(
        json.dumps({"custom_id": cid, "response": None, "error": {"code": "batch_expired"}})
    )
    assert expired.status_code is None and "batch_expired" in expired.error


def test_the_batch_price_is_the_tables_own_else_the_synchronous_one():
    from reljudge.llm.pricing import Price, batch_price

    assert batch_price(Price(2.5, 10.0, 1.25, 1.25, 5.0)) == Price(1.25, 5.0, 1.25)
    assert batch_price(Price(2.5, 10.0, 0.5, 1.25, 5.0)) == Price(1.25, 5.0, 0.5)  # the cheaper cached price
    assert batch_price(Price(2.5, 10.0)) == Price(2.5, 10.0, 2.5)  # none listed: an upper bound
    assert batch_price(None) is None


def test_a_damaged_batch_state_is_an_input_error(tmp_path):
    from reljudge.errors import InputError
    from reljudge.run.batch.state import BatchState, live_waves

    path = tmp_path / "batch" / "state.json"
    path.parent.mkdir()
    path.write_text('{"run": "x", "waves": [{"n": 0}]}')
    with pytest.raises(InputError, match="batch state cannot be read"):
        BatchState.load(path)
    assert live_waves(tmp_path) == 0
    state = BatchState(path)
    from reljudge.run.batch.state import Wave

    state.waves.append(Wave(n=0, file="wave-00000.jsonl", lines=1, bytes=10))
    state.step(state.waves[0], "creating")
    assert BatchState.load(path).waves[0].step == "creating" and live_waves(tmp_path) == 1


def test_line_splitter_across_chunks():
    from reljudge.llm.batch.lines import LineSplitter

    splitter = LineSplitter(max_bytes=10)
    got = []
    for chunk in (b"ab", b"c\nde", b"f\n0123456789", b"0123\nxy", b"\n\nlast"):
        got.extend(splitter.feed(chunk))
    got.extend(splitter.close())
    assert got == [b"abc\n", b"def\n", None, b"xy\n", b"last"]


def test_a_second_answer_takes_back_a_first_one_already_committed(server, tmp_path):
    from reljudge.llm.batch.ingest import Ingestor

    cfg = config(server, tmp_path, "twice", limit=1)

    async def scenario() -> None:
        session = BatchSession(cfg)
        try:
            step = await session.collect(tmp_path / "requests.jsonl")
            (custom_id,) = [request_custom_id(raw) for raw in step.requests.read_bytes().splitlines()]
            cache = session.client._cache
            db = cache.db
            assert db is not None
            ingestor = Ingestor(
                session.client._results, cache, session.failures, {custom_id}, answered=session.fresh
            )
            for grade in ("2", "0"):
                body = {"choices": [{"message": {"content": f"##final score: {grade}"}}]}
                ingestor.line(
                    json.dumps({"custom_id": custom_id, "response": {"status_code": 200, "body": body}})
                )
                ingestor.flush()  # the first answer is committed before the second comes
            assert db.get(custom_id) is None and custom_id not in session.fresh
            assert (
                ingestor.report.answers == 0
                and ingestor.report.failed == 1
                and ingestor.report.duplicates == 1
            )
            step = await session.collect(tmp_path / "requests-2.jsonl")
            assert step.done
        finally:
            await session.aclose()

    asyncio.run(scenario())
    assert [r.status for r in read_judgments(tmp_path / "twice" / "judgments.jsonl")] == ["api_error"]
