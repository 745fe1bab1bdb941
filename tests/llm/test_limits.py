"""The RPM/TPM limiter's waits are bounded, whatever token counts a provider reports (a fake
clock drives the limiter: no test here sleeps)."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

import pytest

from reljudge.llm.limits import MAX_WAIT_S, WAIT_STEP_S, RateLimiter


@pytest.fixture
def clock():
    """A fake clock and sleep for the limiter; ``clock.limiter(...)`` builds one that uses them."""
    state = SimpleNamespace(now=1000.0, sleeps=[])

    async def sleep(seconds: float) -> None:
        state.sleeps.append(seconds)
        state.now += seconds

    state.limiter = lambda **kw: RateLimiter(clock=lambda: state.now, sleep=sleep, **kw)
    return state


@pytest.mark.parametrize("reported", [10**12, 10**9, 10**30])
def test_a_huge_reported_usage_cannot_stall_the_limiter(clock, reported):
    limiter = clock.limiter(tpm=1000)
    asyncio.run(limiter.acquire(100))
    limiter.settle(100, reported)  # "this request used 10^12 tokens": ~19 years of debt before
    assert limiter._tpm.wait_for(1000) <= MAX_WAIT_S
    asyncio.run(limiter.acquire(1000))
    assert 60 <= sum(clock.sleeps) <= MAX_WAIT_S  # it does pay one minute of debt, not years
    assert max(clock.sleeps) <= WAIT_STEP_S


def test_negative_reports_do_not_overfill_the_bucket(clock):
    limiter = clock.limiter(tpm=1000)
    limiter.settle(0, -(10**12))
    assert limiter._tpm.level <= limiter._tpm.capacity
    limiter.settle(-(10**12), 0)
    assert limiter._tpm.level >= -limiter._tpm.capacity


def test_ordinary_waits_are_unchanged(clock):
    limiter = clock.limiter(rpm=60)
    limiter._rpm.level = 0.0
    asyncio.run(limiter.acquire())
    assert sum(clock.sleeps) == pytest.approx(1.0)  # one request a second


def test_a_full_bucket_lets_a_few_seconds_through_not_a_minute(clock):
    """--rpm 600 from a full bucket: 30 requests at once (3 s' worth), then one every 0.1 s; a
    provider enforcing 600/min over short intervals is not hit by a minute's burst."""
    limiter = clock.limiter(rpm=600)

    async def sends() -> list[float]:
        out = []
        for _ in range(60):
            await limiter.acquire()
            out.append(clock.now)
        return out

    times = asyncio.run(sends())
    assert times[29] == 1000.0 and times[30] > 1000.0  # the burst: 3 s' worth
    assert times[-1] - times[30] == pytest.approx(29 * 0.1)  # then smooth, at the limit
    assert max(clock.sleeps) <= 0.1 + 1e-9


def test_a_request_above_the_burst_leaves_debt_that_keeps_the_average(clock):
    limiter = clock.limiter(tpm=6000)  # 100 tokens/s, a burst of 300
    asyncio.run(limiter.acquire(3000))  # half a minute's tokens: waits for a full bucket only
    assert sum(clock.sleeps) == 0.0 and limiter._tpm.level == pytest.approx(300 - 3000)
    asyncio.run(limiter.acquire(100))  # the next one waits out the debt: 27 s + 1 s
    assert sum(clock.sleeps) == pytest.approx(28.0)
    asyncio.run(limiter.acquire(10**9))  # a request beyond a minute's worth takes one minute's
    assert limiter._tpm.level >= -limiter._tpm.capacity
    asyncio.run(limiter.acquire(1))
    assert sum(clock.sleeps) - 28.0 <= MAX_WAIT_S
