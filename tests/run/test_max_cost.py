"""``judge run --max-cost``: the cost cap (`reljudge.llm.budget`), end to end against the mock
server (a real HTTP server on 127.0.0.1), with calls counted on the server.

A run capped at half its dry-run estimate stops within one request's cost of the cap, saves
everything (records, qrels, manifest) and exits with code 3; the same command with a higher cap
resumes to the end without sending any request twice.
"""

from __future__ import annotations

import asyncio
import json
import math
from pathlib import Path

import pytest

from _cli import judge, records
from reljudge.errors import EXIT_BUDGET, EXIT_OK
from reljudge.llm.budget import BudgetExhausted, CostBudget
from reljudge.llm.pricing import price_cost
from reljudge.testing import MockLLMServer, responders

MODEL = "openai/gpt-4o-mini"  # a model of litellm's price map: its calls cost something
ENV = {"OPENAI_API_KEY": "sk-test"}


# --- the budget's accounting (no server, no clock) -------------------------------------------------
def test_budget_reserves_settles_and_stops_when_nothing_fits():
    async def scenario() -> None:
        budget = CostBudget(1.0)
        await budget.reserve(0.4)
        await budget.reserve(0.4)
        assert budget.in_flight == 2 and math.isclose(budget.reserved, 0.8)
        waiting = asyncio.ensure_future(budget.reserve(0.4))  # 0.8 + 0.4 > 1: waits for a settle
        await asyncio.sleep(0)
        assert not waiting.done()
        budget.settle(0.4, 0.1)  # real cost below the reservation: the waiting call fits now
        await waiting
        assert math.isclose(budget.spent, 0.1) and budget.in_flight == 2
        budget.settle(0.4, 0.1)
        budget.settle(0.4, 0.1)
        assert budget.in_flight == 0 and budget.reserved == 0.0 and math.isclose(budget.spent, 0.3)
        with pytest.raises(BudgetExhausted) as caught:
            await budget.reserve(0.8)  # nothing in flight and 0.3 + 0.8 > 1
        assert math.isclose(caught.value.spent, 0.3) and caught.value.cap == 1.0
        with pytest.raises(BudgetExhausted):  # exhausted for good, even for a call that fits
            await budget.reserve(0.01)

    asyncio.run(scenario())


def test_budget_near_the_cap_goes_one_call_at_a_time_on_the_expected_cost():
    async def scenario() -> None:
        budget = CostBudget(1.0, spent=0.5)  # what earlier sessions paid counts
        await budget.reserve(0.6, expected=0.2)  # bound does not fit, nothing in flight: expected does
        waiting = asyncio.ensure_future(budget.reserve(0.6, expected=0.2))
        await asyncio.sleep(0)
        assert not waiting.done()  # one at a time near the cap
        budget.settle(0.6, 0.2)
        await waiting
        budget.settle(0.6, 0.2)
        assert math.isclose(budget.spent, 0.9)
        with pytest.raises(BudgetExhausted) as caught:
            await budget.reserve(0.6, expected=0.2)
        assert math.isclose(caught.value.next_cost, 0.2)

    asyncio.run(scenario())


def test_budget_waiters_are_told_when_the_last_call_in_flight_ends():
    async def scenario() -> None:
        budget = CostBudget(1.0)
        await budget.reserve(0.9)
        waiters = [asyncio.ensure_future(budget.reserve(0.5)) for _ in range(3)]
        await asyncio.sleep(0)
        budget.settle(0.9, 0.9)  # spent 0.9: none of them fits, nothing in flight
        results = await asyncio.gather(*waiters, return_exceptions=True)
        assert all(isinstance(r, BudgetExhausted) for r in results)

    asyncio.run(scenario())


@pytest.mark.parametrize("cost", [float("nan"), float("inf"), -5.0, "1e9"])
def test_budget_clamps_what_is_reported(cost):
    async def scenario() -> None:
        budget = CostBudget(1.0)
        await budget.reserve(0.1)
        budget.settle(0.1, cost)  # nothing a provider reports may bloat or break the account
        assert budget.spent == 0.0 and budget.in_flight == 0
        await budget.reserve(float("nan"))  # a broken estimate is never free

    with pytest.raises(BudgetExhausted):
        asyncio.run(scenario())


def test_budget_rejects_a_bad_cap():
    for cap in (-1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError):
            CostBudget(cap)


# --- end to end against the mock server --------------------------------------------------------------
@pytest.fixture()
def server():
    with MockLLMServer(models=("gpt-4o-mini", "mock-model")) as srv:
        yield srv


def run_args(srv: MockLLMServer, out: Path, *args: str) -> list[str]:
    """``judge run`` of umbrela on the sample against the server, writing to ``out``, and ``args``."""
    return [
        "run",
        "--model",
        MODEL,
        "--base-url",
        srv.openai_url,
        "--dataset",
        "dl19-sample",
        "--method",
        "umbrela",
        "--output",
        str(out),
        "--no-cache",  # no answer is replayed from a cache: every answer is a call on the server
        "--no-progress",
        *args,
    ]


def records_cost(out: Path) -> tuple[float, float, int]:
    """(what the records cost, the dearest record, records)."""
    costs = [r.provenance.usage.cost_usd for r in records(out)]
    return sum(costs), max(costs), len(costs)


@pytest.mark.slow
@pytest.mark.parametrize("latency_s", [0.0, 0.02])  # with latency, 8 requests are in flight at the cap
def test_capped_at_half_the_estimate_stops_at_the_cap_and_resumes_without_a_repeated_call(
    server, tmp_path, latency_s
):
    server.latency_s = latency_s
    out = tmp_path / "run"
    result = judge(*run_args(server, out, "--dry-run", "--json"), env=ENV)
    assert result.returncode == EXIT_OK
    estimate = json.loads(result.output)["estimate"]
    items, estimated_cost = estimate["items"], estimate["cost_usd"]
    assert estimated_cost > 0
    cap = estimated_cost / 2

    result = judge(*run_args(server, out, "--max-cost", f"{cap:.6f}"), env=ENV)
    assert result.returncode == EXIT_BUDGET, result.output
    assert "stopped at the cost cap" in result.output and "higher --max-cost" in result.output
    spent, dearest, first = records_cost(out)
    assert 0 < first < items
    assert server.calls == first  # every call made has its record
    assert spent <= cap + dearest and cap - spent <= dearest  # within one request's cost of the cap
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["extra"]["state"] == "capped"
    assert manifest["extra"]["budget"]["reached"] is True
    assert math.isclose(manifest["extra"]["budget"]["spent_usd"], spent, abs_tol=1e-6)
    assert len((out / "qrels.txt").read_text().splitlines()) == first

    # the same cap: nothing more is sent
    result = judge(*run_args(server, out, "--max-cost", f"{cap:.6f}"), env=ENV)
    assert result.returncode == EXIT_BUDGET and server.calls == first

    result = judge(*run_args(server, out, "--max-cost", f"{estimated_cost * 4:.6f}"), env=ENV)
    assert result.returncode == EXIT_OK, result.output
    assert server.calls == items  # all items, each asked once
    assert all(request.seen == 0 for request in server.requests)  # no request sent twice
    _, _, total = records_cost(out)
    assert total == items
    assert len((out / "qrels.txt").read_text().splitlines()) == items


def test_a_zero_cap_sends_nothing_and_says_so(server, tmp_path):
    out = tmp_path / "run"
    result = judge(*run_args(server, out, "--max-cost", "0", "--limit", "5"), env=ENV)
    assert result.returncode == EXIT_BUDGET, result.output
    assert server.calls == 0
    assert "0 record(s) judged" in result.output
    assert json.loads((out / "manifest.json").read_text())["extra"]["state"] == "capped"


def test_a_cap_needs_a_known_price(server, tmp_path):
    argv_model = "openai/mock-model"
    result = judge(
        "run",
        "--model",
        argv_model,
        "--base-url",
        server.openai_url,
        "--dataset",
        "dl19-sample",
        "--method",
        "umbrela",
        "--output",
        str(tmp_path / "run"),
        "--no-cache",
        "--max-cost",
        "1",
        env=ENV,
    )
    # an InputError: main prints its line last, exit 2
    assert result.returncode == 2 and result.stderr.splitlines()[-1].startswith("error: "), result.output
    assert "--max-cost needs the price" in result.stderr
    assert server.calls == 0 and not (tmp_path / "run").exists()


def test_a_prices_file_gives_the_cap_its_price(server, tmp_path):
    prices = tmp_path / "prices.yaml"
    prices.write_text("mock-model: {input: 1000, output: 1000}\n")
    result = judge(
        "run",
        "--model",
        "openai/mock-model",
        "--base-url",
        server.openai_url,
        "--dataset",
        "dl19-sample",
        "--method",
        "umbrela",
        "--output",
        str(tmp_path / "run"),
        "--no-cache",
        "--no-progress",
        "--prices",
        str(prices),
        "--max-cost",
        "2",  # a few requests at $1000 per million tokens
        env=ENV,
    )
    assert result.returncode == EXIT_BUDGET, result.output
    spent, dearest, n = records_cost(tmp_path / "run")
    assert 0 < n < 10 and server.calls == n
    assert spent <= 2 + dearest and 2 - spent <= dearest


def test_the_dry_run_says_how_far_a_cap_would_go(server, tmp_path):
    result = judge(*run_args(server, tmp_path / "run", "--dry-run", "--max-cost", "0.02"), env=ENV)
    assert result.returncode == EXIT_OK and server.calls == 0 and not (tmp_path / "run").exists()
    assert "--max-cost $0.0200: about " in result.output and " of the 684 calls fit" in result.output
    result = judge(*run_args(server, tmp_path / "run", "--dry-run", "--max-cost", "100"), env=ENV)
    assert "--max-cost $100.0000: the estimate fits under the cap" in result.output


# --- a provider whose usage cannot be taken at its word ------------------------------------------------
def hostile(shape: str):
    """The mock's responder of a shape: no usage, 10x the usage, or the first answer to each prompt
    after the client's timeout (``--timeout 0.4``; the provider still does the work and bills it)."""
    if shape == "no-usage":
        return responders.no_usage()
    if shape == "usage-x10":
        return responders.inflated_usage(10)
    auto = responders.named("auto")
    late = responders.late(1.0, auto)
    return lambda req: late(req) if req.seen == 0 else auto(req)


def worst_case(srv: MockLLMServer) -> float:
    """One request's worst case: the dearest bound of the requests the server received (its
    prompt's bytes bound and its answer budget at the model's price)."""
    from reljudge.llm.pricing import PriceTable
    from reljudge.llm.routing import resolve_model
    from reljudge.llm.usage_bound import answer_budget, bytes_bound

    price = PriceTable().quote(resolve_model(MODEL)).price
    return max(
        price_cost(price, "openai", bytes_bound(r.messages), answer_budget(r.body))[0] for r in srv.requests
    )


def billed(srv: MockLLMServer) -> float:
    """What the provider really used, at the model's price (`MockLLMServer.billed`)."""
    from reljudge.llm.pricing import PriceTable
    from reljudge.llm.routing import resolve_model

    return price_cost(PriceTable().quote(resolve_model(MODEL)).price, "openai", *srv.billed)[0]


@pytest.mark.slow
@pytest.mark.parametrize("shape", ["no-usage", "usage-x10", "late"])
def test_max_cost_holds_whatever_usage_the_provider_reports(tmp_path, shape):
    with MockLLMServer(hostile(shape), models=("gpt-4o-mini",), latency_s=0.02) as srv:
        out = tmp_path / "run"
        more = ["--limit", "60", "--concurrency", "8", "--max-tokens", "64"]
        if shape == "late":
            more += ["--timeout", "0.4"]
        result = judge(*run_args(srv, out, *more, "--dry-run", "--json"), env=ENV)
        cap = json.loads(result.output)["estimate"]["cost_usd"] / 3
        result = judge(*run_args(srv, out, *more, "--max-cost", f"{cap:.6f}"), env=ENV)
        assert result.returncode == EXIT_BUDGET, result.output
        # what the provider bills (counted on the server) stays within one request's worst case
        assert 0 < billed(srv) <= cap + worst_case(srv), (billed(srv), cap)
        spent, _, n = records_cost(out)
        assert spent <= cap + worst_case(srv) and spent >= billed(srv) * 0.99
        assert srv.calls >= n > 0
        if shape != "usage-x10":  # inflated usage within the bound is the provider's word (no anomaly)
            assert result.output.count("warning:") == 1, result.output
        manifest = json.loads((out / "manifest.json").read_text())
        anomalies = manifest["extra"]["last_session"]["client"]["usage_anomalies"]
        assert anomalies.get(
            {"no-usage": "missing", "late": "unknown_outcome"}.get(shape, "over"), 0
        ) > 0 or (shape == "usage-x10")
