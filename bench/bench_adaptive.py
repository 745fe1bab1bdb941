"""Adaptive concurrency against a rate-limited provider (issue 14): the mock server limited to
600 requests/min and 16 connections, 200 ms latency. Three clients in turn, on the same server:
the default (``--concurrency 8``, adaptive with 8 as ceiling), a static 8 (``fixed:8``, the old
default) and a static 64 (``fixed:64``). Each keeps the client busy for ``--duration`` seconds.

Reported for each: the share of the limit reached (requests the server admitted per minute / 600)
and the share of requests answered 429 (refused / all requests the server saw).
Target for the adaptive default: >= 90 % of the limit with < 5 % 429s.

    PYTHONPATH=src python bench/bench_adaptive.py [--duration 120]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import time

from reljudge.llm.client import LLMClient
from reljudge.llm.types import ClientConfig
from reljudge.testing import MockLLMServer

RPM = 600
CONNECTIONS = 16
LATENCY_S = 0.2


async def drive(srv: MockLLMServer, concurrency: int, adaptive: bool, duration_s: float) -> dict:
    """Keep a client busy for ``duration_s``; its stats and the server's counts at the deadline."""
    url = srv.openai_url
    cfg = ClientConfig(
        model="openai/mock-model",
        base_url=url,
        api_key="bench",
        concurrency=concurrency,
        adaptive=adaptive,
        use_cache=False,
        cache_path=None,
        max_attempts=100,  # the bench measures throughput: no request may give up
    )
    async with LLMClient(cfg) as client:
        pending: set[asyncio.Task] = set()
        deadline = time.monotonic() + duration_s
        for i in itertools.count():
            if time.monotonic() >= deadline:
                break
            while len(pending) >= 512:  # a judge run's fan-out: many chats waiting for the client
                done, _ = await asyncio.wait(pending, timeout=max(0.0, deadline - time.monotonic()),
                                             return_when=asyncio.FIRST_COMPLETED)  # fmt: skip
                pending -= done
                if time.monotonic() >= deadline:
                    break
            task = asyncio.ensure_future(client.chat([{"role": "user", "content": f"question {i}"}]))
            pending.add(task)
        at_deadline = (srv.rate_limit.admitted, sum(srv.rate_limit.refused.values()))
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
        return {**client.stats.as_dict(), "server": at_deadline}


def one(srv: MockLLMServer, name: str, concurrency: int, adaptive: bool, duration_s: float) -> dict:
    time.sleep(2.0)  # let the server's buckets refill between clients
    admitted0 = srv.rate_limit.admitted
    refused0 = sum(srv.rate_limit.refused.values())
    stats = asyncio.run(drive(srv, concurrency, adaptive, duration_s))
    elapsed = duration_s  # the counts are taken at the deadline
    admitted = stats["server"][0] - admitted0
    refused = stats["server"][1] - refused0
    seen = admitted + refused
    return {
        "client": name,
        "seconds": round(elapsed, 1),
        "admitted": admitted,
        "refused_429": refused,
        "share_of_limit": admitted / (RPM * elapsed / 60.0),
        "share_429": refused / seen if seen else 0.0,
        "concurrency": stats["concurrency"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--duration", type=float, default=120.0, help="seconds per client")
    parser.add_argument("--json", action="store_true", help="print JSON rows instead of a table")
    args = parser.parse_args()
    rows = []
    with MockLLMServer(lambda req: "1", latency_s=LATENCY_S, rpm=RPM, max_connections=CONNECTIONS) as srv:
        for name, concurrency, adaptive in (
            ("default (adaptive, ceiling 8)", 8, True),
            ("static 8 (fixed:8)", 8, False),
            ("static 64 (fixed:64)", 64, False),
        ):
            rows.append(one(srv, name, concurrency, adaptive, args.duration))
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    print(f"mock: {RPM} requests/min, {CONNECTIONS} connections, {LATENCY_S * 1000:.0f} ms latency; "
          f"{args.duration:g} s per client")  # fmt: skip
    print(f"{'client':32} {'seconds':>8} {'admitted':>9} {'429s':>6} {'of limit':>9} {'429 share':>10}")
    for r in rows:
        print(f"{r['client']:32} {r['seconds']:>8} {r['admitted']:>9} {r['refused_429']:>6} "
              f"{r['share_of_limit']:>9.1%} {r['share_429']:>10.1%}")  # fmt: skip
    first = rows[0]
    met = first["share_of_limit"] >= 0.90 and first["share_429"] < 0.05
    print(f"target (default: >= 90 % of the limit, < 5 % 429s): {'met' if met else 'NOT met'}")
    print("adaptive level at the end:", json.dumps(first["concurrency"]))


if __name__ == "__main__":
    main()
