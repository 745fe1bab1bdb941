"""Throughput of the LLM client against the local mock server (no network).

Prints calls/s for fresh calls (openai and ollama backends), for cache hits, and for a run with
injected faults. Usage: python bench/bench_llm_client.py [N] [CONCURRENCY]
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time
from pathlib import Path

from reljudge.llm import ClientConfig, LLMClient
from reljudge.testing import FaultInjector, MockLLMServer, responders


async def run(cfg: ClientConfig, n: int, tag: str) -> None:
    msgs = [[{"role": "user", "content": f"item {i}: Just answer 1 for yes and 0 for no."}] for i in range(n)]
    kinds: list[str] = []
    async with LLMClient(cfg, on_event=lambda kind, info: kinds.append(info.get("kind", kind))) as client:
        start = time.perf_counter()
        results = await asyncio.gather(*[client.chat(m) for m in msgs])
        elapsed = time.perf_counter() - start
    ok = sum(r.ok for r in results)
    print(
        f"{tag:<28} n={n:<5} {n / elapsed:8.0f} calls/s  ok={ok}  cached={sum(r.cached for r in results)}"
        f"  retries={client.stats.retries} {sorted(set(kinds))}  requests={client.stats.calls}"
    )


async def main(n: int, concurrency: int) -> None:
    with tempfile.TemporaryDirectory() as tmp, MockLLMServer(responders.fixed("1")) as srv:
        cache = Path(tmp) / "cache.sqlite"
        common = dict(
            cache_path=cache, concurrency=concurrency, timeout_s=5.0, backoff_base_s=0.01, backoff_max_s=0.05
        )
        openai_cfg = ClientConfig(model="openai/mock", base_url=srv.openai_url, **common)
        await run(openai_cfg, n, "openai fresh")
        await run(openai_cfg, n, "openai cache hits")
        await run(ClientConfig(model="ollama/mock", base_url=srv.ollama_url, **common), n, "ollama fresh")
        await run(
            ClientConfig(
                model="openai/mock",
                base_url=srv.openai_url,
                use_cache=False,
                **{**common, "cache_path": None},
            ),
            n,
            "openai no cache",
        )
    faults = FaultInjector(responders.fixed("1"), rate_429=0.1, rate_5xx=0.1, seed=1)
    with MockLLMServer(faults) as srv:
        cfg = ClientConfig(
            model="openai/mock",
            base_url=srv.openai_url,
            cache_path=None,
            max_attempts=10,
            concurrency=concurrency,
            timeout_s=5.0,
            backoff_base_s=0.01,
            backoff_max_s=0.05,
        )
        await run(cfg, n, "openai 20% faults")


if __name__ == "__main__":
    asyncio.run(
        main(int(sys.argv[1]) if len(sys.argv) > 1 else 500, int(sys.argv[2]) if len(sys.argv) > 2 else 16)
    )
