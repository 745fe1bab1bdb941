"""Adaptive concurrency: the controller driven by synthetic events (no clock), the gate, the
RunConfig setting, and one end-to-end run against the mock server's rate limit (behaviour only)."""

from __future__ import annotations

import asyncio
import math

import pytest

from _cli import judge
from reljudge.llm.adaptive import AdaptiveConcurrency, AdaptiveGate, rate_headers
from reljudge.llm.client import LLMClient
from reljudge.llm.types import ClientConfig
from reljudge.run import RunConfig
from reljudge.run.options import concurrency_setting, parse_concurrency
from reljudge.testing import MockLLMServer

LIMIT = {"x-ratelimit-limit-requests": "600"}


def test_starts_moderate_and_grows_to_the_ceiling_while_healthy():
    ctl = AdaptiveConcurrency(32, start=4)
    assert ctl.level == 4
    for _ in range(2000):
        ctl.on_success(0.2)
    assert ctl.level == 32  # the ceiling, never above
    assert ctl.peak == 32


def test_a_ceiling_below_the_start_is_the_start():
    assert AdaptiveConcurrency(2).level == 2


def test_429_backs_off_multiplicatively_once_per_burst():
    ctl = AdaptiveConcurrency(64, start=32)
    for _ in range(20):  # a burst of 429s from the requests in flight: one back-off
        ctl.on_rate_limited(now=0.0)
    assert ctl.level == 16 and ctl.backoffs == 1 and ctl.rate_limited == 20 and ctl.limit_signals == 1
    for _ in range(40):  # healthy answers, then an isolated 429: no limit, no back-off
        ctl.on_success(0.2, now=1.0)
    ctl.on_rate_limited(now=1.0)
    assert ctl.backoffs == 1 and ctl.limit_signals == 1
    for _ in range(30):  # a new burst of 429s backs off again
        ctl.on_rate_limited(now=2.0)
    assert ctl.limit_signals == 2 and ctl.backoffs == 2 and ctl.level < 16


def test_random_isolated_429s_are_not_a_limit():
    """20 % 429s spread at random over 5000 responses: no limit signal, no pace, the level at its
    ceiling (a client as fast as a fixed concurrency)."""
    import random

    rng = random.Random(3)
    ctl = AdaptiveConcurrency(8)
    for i in range(5000):
        if rng.random() < 0.2:
            ctl.on_rate_limited(retry_after=1.0, now=i * 0.01)
        else:
            ctl.on_success(0.2, now=i * 0.01)
    assert ctl.limit_signals == 0 and ctl.interval_s == 0.0 and ctl.level == 8
    assert ctl.send_delay(100.0) == 0.0  # no pause either


def test_a_limit_without_headers_sets_a_pace_from_the_answers_observed():
    ctl = AdaptiveConcurrency(8)
    for i in range(100):  # 10 answers a second for 10 s
        ctl.on_success(0.2, now=i * 0.1)
    for _ in range(20):  # then 429s: the client went above the provider's limit
        ctl.on_rate_limited(retry_after=2.0, now=10.0)
    assert ctl.limit_signals == 1
    assert 1.0 / ctl.interval_s == pytest.approx(0.85 * 10.0, rel=0.02)  # 0.85 x the rate observed
    assert ctl.as_dict()["pace_from"] == "429s"
    # the shared pause: nobody sends before the Retry-After instant, then sends are paced
    delays = [ctl.send_delay(10.0) for _ in range(3)]
    assert delays == pytest.approx([2.0, 2.0 + ctl.interval_s, 2.0 + 2 * ctl.interval_s])
    # healthy answers grow the rate additively (about 6 % of the cut rate per second): each
    # answer adds 0.06 x cut / rate, so after n answers rate^2 = cut^2 + 2 x 0.06 x cut x n
    rate = 1.0 / ctl.interval_s
    for _ in range(85):  # 10 s of answers at that rate: + 48 %
        ctl.on_success(0.2, now=20.0)
    assert 1.0 / ctl.interval_s == pytest.approx(math.sqrt(rate**2 + 2 * 0.06 * rate * 85), rel=0.01)
    # an isolated 429 steps back (9 growth steps), never below the rate set at the cut
    for _ in range(15):
        ctl.on_rate_limited(now=21.0)
    assert 1.0 / ctl.interval_s == pytest.approx(rate)


def test_a_simulated_header_less_limit_is_reached_without_failures():
    """The controller and the mock server's limit (600/min, 1 s burst, no headers) on one fake
    clock: sends go when the pace allows, a 429 is retried after its Retry-After. The client ends
    near the limit, with few 429s and no request refused six times."""
    import heapq

    from reljudge.testing.ratelimit import ServerRateLimit

    now = [0.0]
    server = ServerRateLimit(rpm=600, rate_headers=False, clock=lambda: now[0])
    ctl = AdaptiveConcurrency(8)
    latency, items = 0.2, 600
    events: list[tuple[float, int, int]] = []  # (time, item, attempt): a send once its slot comes
    queue = list(range(items))
    in_flight, done, worst = 0, 0, 0

    def start(t: float, item: int, attempt: int) -> None:
        nonlocal in_flight
        in_flight += 1
        heapq.heappush(events, (t + ctl.send_delay(t), item, attempt))

    while queue and in_flight < ctl.level:
        start(0.0, queue.pop(0), 1)
    while events:
        t, item, attempt = heapq.heappop(events)
        if attempt < 0:  # an answer comes back
            now[0] = t
            ctl.on_success(latency, now=t)
            server.release()
            in_flight -= 1
            done += 1
        elif attempt > 100:  # a retry's Retry-After is over
            start(t, item, attempt - 100)
            continue
        else:
            now[0] = t
            verdict = server.admit(1)
            assert not any(h.startswith("x-ratelimit") for h in verdict.headers)
            if verdict.admitted:
                heapq.heappush(events, (t + latency, item, -1))
                continue
            worst = max(worst, attempt)
            ctl.on_rate_limited(retry_after=float(verdict.headers["Retry-After"]), now=t, attempt=attempt)
            in_flight -= 1
            heapq.heappush(events, (t + float(verdict.headers["Retry-After"]), item, 100 + attempt + 1))
        while queue and in_flight < ctl.level:
            start(t, queue.pop(0), 1)
    assert done == items and worst < 6
    floor = items / 10.0
    assert now[0] <= 1.3 * floor
    assert sum(server.refused.values()) < 0.15 * items  # about 1 in 10 above the limit


def test_never_below_the_floor_whatever_retry_after():
    ctl = AdaptiveConcurrency(8, start=8)
    for _ in range(100):
        ctl.on_rate_limited({"retry-after": "86400"})
        ctl.on_success(0.2)
    assert ctl.level >= 1
    for _ in range(200):  # and it grows again afterwards: a long Retry-After froze nothing
        ctl.on_success(0.2)
    assert ctl.level > 1


def test_rising_latency_backs_off():
    ctl = AdaptiveConcurrency(64, start=16)
    for _ in range(50):
        ctl.on_success(0.2)
    before = ctl.level
    for _ in range(20):
        ctl.on_success(2.0)  # ten times slower
    assert ctl.level < before and ctl.backoffs >= 1


def test_remaining_zero_stops_growth():
    ctl = AdaptiveConcurrency(64, start=4)
    for _ in range(100):
        ctl.on_success(0.2, {"x-ratelimit-remaining-requests": "0"})
    assert ctl.level == 4
    for _ in range(100):
        ctl.on_success(0.2, {"x-ratelimit-remaining-tokens": "0"})
    assert ctl.level == 4


def test_the_request_limit_header_sets_a_pace():
    ctl = AdaptiveConcurrency(8)
    assert ctl.send_delay(0.0) == 0.0  # no pace before a limit is known
    ctl.on_success(0.2, LIMIT)
    interval = 60.0 / (600 * ctl.pace_share)
    assert ctl.interval_s == pytest.approx(interval)
    delays = [ctl.send_delay(10.0) for _ in range(3)]  # three sends at the same instant
    assert delays == pytest.approx([0.0, interval, 2 * interval])
    assert ctl.send_delay(100.0) == 0.0  # long after: no wait
    assert ctl.as_dict()["pace_rpm"] == pytest.approx(600 * ctl.pace_share, rel=1e-3)


@pytest.mark.parametrize("bad", ["nan", "-5", "inf", "1e400", "x", "", "0", "1e30"])
def test_hostile_header_values_are_ignored(bad):
    ctl = AdaptiveConcurrency(8)
    ctl.on_success(0.2, {"x-ratelimit-limit-requests": bad, "x-ratelimit-remaining-requests": bad})
    ctl.on_rate_limited({"x-ratelimit-limit-requests": bad})
    assert ctl.interval_s == 0.0
    assert 1 <= ctl.level <= 8


def test_rate_headers_keeps_only_the_rate_headers_and_bounds_them():
    got = rate_headers({"x-ratelimit-limit-requests": "6" * 100, "authorization": "secret"})
    assert got == {"x-ratelimit-limit-requests": "6" * 32}
    assert rate_headers({}) is None and rate_headers(None) is None


def test_the_gate_follows_the_level():
    async def main() -> list[int]:
        ctl = AdaptiveConcurrency(8, start=2)
        gate = AdaptiveGate(ctl)
        await gate.acquire()
        await gate.acquire()
        third = asyncio.ensure_future(gate.acquire())
        await asyncio.sleep(0)
        seen = [gate.in_use, int(third.done())]
        ctl._level = 3.0  # the level grows: the waiter enters at the next release
        gate.release()
        await asyncio.sleep(0)
        seen += [gate.in_use, int(third.done())]
        return seen

    assert asyncio.run(main()) == [2, 0, 2, 1]


def test_concurrency_setting():
    assert parse_concurrency(8) == 8 and parse_concurrency("16") == 16
    assert parse_concurrency("fixed:4") == "fixed:4" and parse_concurrency("FIXED: 4") == "fixed:4"
    assert concurrency_setting(8) == (8, True) and concurrency_setting("fixed:8") == (8, False)
    for bad in ("0", "fixed:0", "fixed:", "x", -1, True):
        with pytest.raises(ValueError):
            parse_concurrency(bad)
    assert RunConfig(dataset="d", method="umbrela", model="openai/m", concurrency=12).concurrency == 12
    assert RunConfig(dataset="d", method="umbrela", model="openai/m", concurrency="fixed:3").concurrency == (
        "fixed:3"
    )


@pytest.mark.slow
def test_end_to_end_backs_off_after_429s_and_finishes():
    """A ceiling far above the server's connection limit: the client meets 429s, backs off and
    every request still ends answered (behaviour only, no timing)."""

    async def main(url: str) -> tuple[list[str], dict]:
        cfg = ClientConfig(
            model="openai/mock-model",
            base_url=url,
            api_key="k",
            concurrency=64,
            adaptive=True,
            cache_path=None,
            use_cache=False,
            max_attempts=50,
            backoff_base_s=0.05,
            backoff_max_s=0.2,
            retry_after_max_s=0.2,
        )
        async with LLMClient(cfg) as client:
            client.adaptive._level = 32.0  # start far above what the server takes
            results = await asyncio.gather(
                *[client.chat([{"role": "user", "content": f"q{i}"}]) for i in range(40)]
            )
            return [r.status for r in results], client.stats.as_dict()["concurrency"]

    # 40 requests: the first burst (32 in flight, 4 taken) is what this test is about; after it
    # the client paces itself far below what the server takes (docs/guides/providers.md, "a
    # known weakness"), so each request more costs a quarter to a whole second
    with MockLLMServer(lambda req: "1", latency_s=0.05, max_connections=4) as srv:
        statuses, info = asyncio.run(main(srv.openai_url))
        refused = srv.rate_limit.refused["connections"]
    assert statuses == ["ok"] * 40
    assert refused > 0 and info["rate_limited"] > 0
    assert info["backoffs"] >= 1 and info["level"] < 32
    assert info["mode"] == "adaptive"


def test_a_waiter_cancelled_after_its_turn_was_skipped_leaves_the_gate_sound():
    async def main() -> tuple[int, int]:
        gate = AdaptiveGate(AdaptiveConcurrency(1, start=1))
        await gate.acquire()
        waiter = asyncio.ensure_future(gate.acquire())
        await asyncio.sleep(0)
        waiter.cancel()
        gate.release()  # skips the cancelled waiter before its task sees the cancellation
        results = await asyncio.gather(waiter, return_exceptions=True)
        assert isinstance(results[0], asyncio.CancelledError)  # not a ValueError from the queue
        await gate.acquire()  # the slot is free again
        return gate.in_use, len(gate._waiters)

    assert asyncio.run(main()) == (1, 0)


def test_a_bad_concurrency_on_the_command_line_is_an_input_error(tmp_path):
    done = judge("run", "--method", "umbrela", "--model", "openai/m", "--dataset", "dl19-sample",
                 "--concurrency", "fixed:0", "--out", str(tmp_path / "r"))  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "--concurrency must be N or fixed:N" in done.stderr and "Traceback" not in done.stderr


def test_the_client_stats_for_the_manifest_name_the_level():
    fixed = LLMClient(ClientConfig(model="openai/m", concurrency=3, cache_path=None))
    assert fixed.adaptive is None
    assert fixed.stats.as_dict()["concurrency"] == {"mode": "fixed", "level": 3}
    adaptive = LLMClient(ClientConfig(model="openai/m", concurrency=16, adaptive=True, cache_path=None))
    info = adaptive.stats.as_dict()["concurrency"]
    assert (
        info["mode"] == "adaptive" and info["ceiling"] == 16 and info["level"] == 8
    )  # it starts as fixed:8 would, then grows


@pytest.mark.slow
def test_end_to_end_a_limit_without_rate_headers_is_learnt_and_every_request_answered():
    """The mock server limits to 600 requests/min and answers 429 + Retry-After only (no
    x-ratelimit-* header); the default client (adaptive, 6 attempts) answers all 150 chats: it
    learns a pace from its 429s and keeps the 429s few. (Before, a 429'd request retried at the
    same instant as all the others and 15-23 % of a run ended api_error.)"""

    async def main(url: str) -> tuple[list[str], dict]:
        cfg = ClientConfig(model="openai/mock-model", base_url=url, api_key="k", concurrency=8,
                           adaptive=True, cache_path=None, use_cache=False)  # fmt: skip
        async with LLMClient(cfg) as client:
            results = await asyncio.gather(
                *[client.chat([{"role": "user", "content": f"q{i}"}]) for i in range(150)]
            )
            return [r.status for r in results], client.stats.as_dict()["concurrency"]

    with MockLLMServer(lambda req: "1", latency_s=0.05, rpm=600, rate_headers=False) as srv:
        statuses, info = asyncio.run(main(srv.openai_url))
        refused = srv.rate_limit.refused["requests"]
    assert statuses == ["ok"] * 150
    assert info["limit_signals"] >= 1 and info["pace_from"] == "429s"
    assert refused < 0.5 * 150
