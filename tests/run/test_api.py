"""The Python API of the pipeline: `run_job` / `run_job_async` with a shared client, and pooling."""

from __future__ import annotations

import asyncio

import pytest

from reljudge.errors import InputError
from reljudge.io.judgments import read_judgments
from reljudge.io.pairs import read_pairs
from reljudge.llm import ClientConfig, LLMClient
from reljudge.run import (
    RunConfig,
    failure_rate,
    parse_options,
    parse_pool_spec,
    run_job,
    run_job_async,
)
from reljudge.testing import MockLLMServer


@pytest.fixture(scope="module")
def server():
    with MockLLMServer() as srv:
        yield srv


def _config(server, tmp_path, method, **kw):
    return RunConfig(
        method=method,
        model="openai/mock-model",
        base_url=server.openai_url,
        dataset="dl19-sample",
        output=tmp_path / method,
        use_cache=False,
        progress=False,
        **kw,
    )


def test_run_job_returns_a_summary(server, tmp_path):
    server.reset()
    summary = run_job(_config(server, tmp_path, "binary", limit=3))
    assert summary.state == "finished" and summary.exit_code == 0
    assert summary.records == 3 and summary.new_records == 3 and summary.statuses == {"ok": 3}
    assert summary.usage.calls == 3 == server.calls
    assert summary.qrels_pairs == 3


def test_jobs_share_one_client_and_its_counters(server, tmp_path):
    server.reset()

    async def sweep():
        cfg = ClientConfig(
            model="openai/mock-model", base_url=server.openai_url, use_cache=False, api_key="x"
        )
        async with LLMClient(cfg) as client:
            a, b = await asyncio.gather(
                run_job_async(_config(server, tmp_path, "binary", limit=4), client),
                run_job_async(_config(server, tmp_path, "umbrela", limit=5), client),
            )
            return a, b, client.usage.calls

    a, b, calls = asyncio.run(sweep())
    assert (a.records, b.records) == (4, 5)
    assert calls == 9 == server.calls
    assert len(read_judgments(tmp_path / "binary" / "judgments.jsonl")) == 4


def test_limit_and_topics_limit_take_items_in_pool_order(server, tmp_path):
    from reljudge.datasets import load_dataset
    from reljudge.run import build_pool, resolve_inputs

    data = load_dataset("dl19-sample")
    topics = [q for q in data.topics if q in data.qrels]
    cfg = _config(server, tmp_path, "binary", topics_limit=2, limit=None)
    pool = build_pool(cfg, resolve_inputs(cfg))
    assert list(pool.docs) == topics[:2]
    assert pool.docs[topics[1]] == list(data.qrels[topics[1]])
    first = len(data.qrels[topics[0]])
    cfg = _config(server, tmp_path, "binary", limit=first + 2)
    pool = build_pool(cfg, resolve_inputs(cfg))
    assert pool.docs == {topics[0]: list(data.qrels[topics[0]]), topics[1]: list(data.qrels[topics[1]])[:2]}
    assert pool.n_items == first + 2


def test_pool_specs_options_and_pairs_files(tmp_path):
    assert parse_pool_spec("qrels") == ("qrels", None, None)
    kind, path, k = parse_pool_spec("run:some/dir:with/run.txt:10")
    assert (kind, str(path), k) == ("run", "some/dir:with/run.txt", 10)
    for bad in ("run:x", "run:x:0", "top:x:3", "unjudged::5"):
        with pytest.raises(InputError):
            parse_pool_spec(bad)
    assert parse_options(["n_questions=5", "mode=graded", "flag=true", "top_k=null"]) == {
        "n_questions": 5,
        "mode": "graded",
        "flag": True,
        "top_k": None,
    }
    with pytest.raises(InputError):
        parse_options(["novalue"])
    pairs = tmp_path / "pairs.txt"
    pairs.write_text("q1 a b\nq1\ttop\tlow\tc\td\n")
    got, cats = read_pairs(pairs)
    assert got == {"q1": [("a", "b"), ("c", "d")]} and cats == {("q1", "c", "d"): ("top", "low")}
    pairs.write_text("q1 a b\nq1 a\n")
    with pytest.raises(InputError, match=r"pairs.txt:2: expected"):
        read_pairs(pairs)


def test_failure_rate_ignores_skipped_records():
    assert failure_rate({"ok": 8, "unparsed": 1, "api_error": 1, "skipped": 10}) == pytest.approx(0.2)
    assert failure_rate({"skipped": 3}) == 0.0


@pytest.mark.parametrize(
    "method, options", [("pairwise", {}), ("custom", {}), ("custom", {"prompt": "pairwise/trec-assessor"})]
)
def test_a_pairs_file_is_judged_exactly_for_any_pairwise_judge(server, tmp_path, method, options):
    """With ``--pairs F`` a pairwise judge -- the pairwise method, or a custom judge with a pairwise
    prompt -- judges exactly the pairs in F (not every pair of the documents they name)."""
    pairs = tmp_path / "pairs.tsv"
    pairs.write_text("87452 110898 1294588\n87452 1294588 1395625\n")
    server.reset()
    prompt = options.get("prompt", "pairwise/clarke")
    summary = run_job(_config(server, tmp_path, method, pairs=pairs, prompt=prompt))
    records = read_judgments(tmp_path / method / "judgments.jsonl")
    assert sorted((r.docid, r.docid_b) for r in records) == [("110898", "1294588"), ("1294588", "1395625")]
    assert summary.records == 2 and server.calls == 4  # two pairs, both orders


def test_a_re_asked_answer_is_counted_as_a_re_ask_not_as_a_retry(tmp_path):
    from reljudge.testing import responders

    with MockLLMServer(responders.fixed("I am not sure what you mean.")) as srv:
        config = RunConfig(
            method="binary",
            model="openai/mock-model",
            base_url=srv.openai_url,
            dataset="dl19-sample",
            output=tmp_path / "run",
            use_cache=False,
            progress=False,
            limit=3,
        )
        summary = run_job(config)
        assert srv.calls == 6  # each unreadable answer asked once more
    assert summary.statuses == {"unparsed": 3}
    assert summary.reasks == 3 and summary.retries == 0
    assert "0 retries" in summary.render() and "re-asked: 3" in summary.render()


def test_run_job_works_inside_a_running_event_loop_as_in_a_notebook(server, tmp_path):
    async def notebook_cell():  # a Jupyter cell runs inside the kernel's event loop
        return run_job(_config(server, tmp_path, "binary", limit=3))

    summary = asyncio.run(notebook_cell())
    assert summary.state == "finished" and summary.new_records == 3
    assert len(read_judgments(tmp_path / "binary" / "judgments.jsonl")) == 3


def test_run_job_with_a_client_inside_a_running_loop_names_run_job_async(server, tmp_path):
    config = _config(server, tmp_path, "binary", limit=1)

    async def notebook_cell():
        client = LLMClient(ClientConfig(model=config.model, base_url=config.base_url, use_cache=False))
        try:
            run_job(config, client)
        finally:
            await client.aclose()

    with pytest.raises(RuntimeError, match=r"await run_job_async\(config, client\)"):
        asyncio.run(notebook_cell())
