"""LLM client throughput against the mock server (in its own process).

1. With latency L and concurrency C, N calls ideally take N*L/C; target: measured <= 1.15x that.
   (The mock server, one Python process, answers at most a few hundred requests/s; the (L, C)
   pairs keep C/L below that, so that the ratio measures the client, not the server.)
2. At L=0, the client's CPU time per call (target < 2 ms), for the openai and ollama backends,
   at concurrency 16 and 64.

Usage: python bench/bench_client.py [N]
"""

from __future__ import annotations

import asyncio
import sys
import time

from _common import mock_server, verdict

from reljudge.llm import ClientConfig, LLMClient


async def _calls(cfg: ClientConfig, n: int, tag: str) -> tuple[float, float]:
    """(wall seconds, client CPU seconds) of n distinct calls."""
    msgs = [[{"role": "user", "content": f"{tag} {i}: answer 1 for yes and 0 for no."}] for i in range(n)]
    async with LLMClient(cfg) as client:
        await client.chat(msgs[0])  # connect and warm up
        cpu, wall = time.process_time(), time.perf_counter()
        results = await asyncio.gather(*(client.chat(m) for m in msgs[1:]))
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    failed = sum(not r.ok for r in results)
    if failed:
        raise SystemExit(f"{failed} calls failed")
    return wall, cpu


def main(n: int = 2000) -> list[tuple[str, float, float, str]]:
    rows = []
    common = dict(use_cache=False, cache_path=None, timeout_s=30.0, max_attempts=1)
    for latency, concurrency in ((0.1, 8), (0.2, 16), (0.5, 64)):
        with mock_server(latency) as urls:
            for backend in ("openai", "ollama"):
                cfg = ClientConfig(
                    model=f"{backend}/mock", base_url=urls[backend], concurrency=concurrency, **common
                )
                calls = max(concurrency * 10, int(3 * concurrency / latency))  # >= 3 s of ideal time
                wall, _ = asyncio.run(_calls(cfg, calls + 1, f"L{latency}C{concurrency}{backend}"))
                ideal = calls * latency / concurrency
                ratio = wall / ideal
                name = f"{backend} L={latency * 1000:.0f}ms C={concurrency}"
                print(
                    f"throughput {name}: {calls} calls in {wall:.2f}s, ideal N*L/C {ideal:.2f}s, "
                    f"ratio {ratio:.3f} (target <= 1.15) {verdict(ratio, 1.15)}"
                )
                rows.append((f"time / ideal, {name}", ratio, 1.15, verdict(ratio, 1.15)))
    with mock_server(0.0) as urls:
        for backend in ("openai", "ollama"):
            for concurrency in (16, 64):
                cfg = ClientConfig(
                    model=f"{backend}/mock", base_url=urls[backend], concurrency=concurrency, **common
                )
                wall, cpu = asyncio.run(_calls(cfg, n + 1, f"cpu-{backend}-{concurrency}"))
                per_call = cpu / n * 1000
                name = f"{backend} C={concurrency}"
                print(
                    f"client CPU per call at L=0, {name}: {per_call:.2f} ms ({n} calls, {n / wall:.0f} calls/s "
                    f"with the server on the same cores) (target < 2 ms) {verdict(per_call, 2.0)}"
                )
                rows.append((f"client CPU ms/call at L=0, {name}", per_call, 2.0, verdict(per_call, 2.0)))
    return rows


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 2000)
