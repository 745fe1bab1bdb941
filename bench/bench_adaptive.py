"""Adaptive concurrency and pace against rate-limited and faulty providers (issues 14 and 26).

1. **Header case** (issue 14): the mock server limited to 600 requests/min and 16 connections,
   200 ms latency, with OpenAI's ``x-ratelimit-*`` headers. Three clients in turn on the same
   server: the default (``--concurrency 8``, adaptive with 8 as ceiling), ``fixed:8`` and
   ``fixed:64``, each kept busy for ``--duration`` seconds. Reported: the share of the limit
   reached (requests admitted per minute / 600) and the share of requests answered 429.
   Target for the default: >= 90 % of the limit with < 5 % 429s.
2. **No rate headers** (issue 26): ``judge run --method umbrela`` end to end, default options,
   against ``judge mock-server --rpm 600 --no-rate-headers`` (only 429 + ``Retry-After``, as vLLM,
   Ollama and LiteLLM proxies answer; the auto responder, 200 ms latency), 300 and 585 items.
   Targets: exit 0, 0 ``api_error``, wall time within 1.3x the limit's floor (items / 600 minutes).
3. **Random faults** (issue 26): ``judge run`` end to end against ``judge mock-server --rate-429
   0.2 --rate-5xx 0.05`` (seeded: both clients meet the same faults; ``Retry-After: 1``, 200 ms
   latency), 585 items, the default against ``--concurrency fixed:8``, each twice (ABBA order, a
   fresh server each time). Target: the default no slower than fixed:8 beyond the run-to-run
   noise: summed wall-time ratio <= 1.02. Both clients run at level 8 here (random 429s are no
   limit signal) and make the same calls, so the ratio measures noise: 0.992, 1.007 and 1.006 in
   three full runs of the bench, against the flat 1.0 it had first. 2 % is the larger of the
   spreads of one client against itself seen in those runs (1.7 %, `fixed:8` 23.6 s and 23.2 s);
   the spread of this run is printed beside the ratio.

    PYTHONPATH=src python bench/bench_adaptive.py [--duration 120] [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import env, make_dataset, mock_server, verdict

from reljudge.llm.client import LLMClient
from reljudge.llm.types import ClientConfig
from reljudge.testing import MockLLMServer

RPM = 600
CONNECTIONS = 16
LATENCY_S = 0.2
#: part 3's target: the default / fixed:8 wall-time ratio, no slower beyond the noise (docstring)
NOISE_RATIO = 1.02


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


def header_case(duration_s: float) -> list[dict]:
    rows = []
    with MockLLMServer(lambda req: "1", latency_s=LATENCY_S, rpm=RPM, max_connections=CONNECTIONS) as srv:
        for name, concurrency, adaptive in (
            ("default (adaptive, ceiling 8)", 8, True),
            ("static 8 (fixed:8)", 8, False),
            ("static 64 (fixed:64)", 64, False),
        ):
            rows.append(one(srv, name, concurrency, adaptive, duration_s))
    return rows


def judge_run(url: str, n: int, root: Path, *options: str) -> dict:
    """``judge run --method umbrela`` of ``n`` items (15 topics) in a fresh process, with a fresh
    response cache, against ``url``: its exit code, wall seconds, statuses and client counts (from the manifest)."""
    args = make_dataset(root / f"data{n}", 15, n // 15)
    out = root / f"run{n}-{len(list(root.iterdir()))}"
    cmd = [sys.executable, "-m", "reljudge", "run", "--method", "umbrela", "--model", "openai/mock-model",
           "--base-url", url, *args, "--output", str(out), "--no-progress", *options]  # fmt: skip
    start = time.perf_counter()
    fresh = {**env(), "RELJUDGE_CACHE": str(root / f"{out.name}.sqlite")}  # its own response cache
    done = subprocess.run(cmd, env=fresh, capture_output=True, text=True)
    wall = time.perf_counter() - start
    manifest = json.loads((out / "manifest.json").read_text()) if (out / "manifest.json").exists() else {}
    status = manifest.get("summary", {}).get("status", {})
    client = manifest.get("extra", {}).get("last_session", {}).get("client", {})
    return {
        "items": n,
        "exit": done.returncode,
        "wall_s": wall,
        "run_s": manifest.get("extra", {}).get("wall_time_s"),
        "ok": status.get("ok", 0),
        "api_error": status.get("api_error", 0),
        "calls": manifest.get("summary", {}).get("usage", {}).get("calls"),
        "concurrency": client.get("concurrency"),
        "stderr": done.stderr[-400:] if done.returncode else "",
    }


def headerless(sizes: list[int]) -> list[dict]:
    rows = []
    with tempfile.TemporaryDirectory() as tmp, mock_server(
        LATENCY_S, "auto", "--rpm", str(RPM), "--no-rate-headers"
    ) as urls:  # fmt: skip
        for n in sizes:
            time.sleep(2.0)  # the server's bucket refills between runs
            row = judge_run(urls["openai"], n, Path(tmp))
            row["floor_s"] = n / RPM * 60.0
            row["ratio"] = row["wall_s"] / row["floor_s"]
            rows.append(row)
    return rows


def random_faults(n: int) -> list[dict]:
    rows = []
    faults = ["--rate-429", "0.2", "--rate-5xx", "0.05", "--retry-after", "1", "--seed", "7"]
    clients = (("default", ()), ("fixed:8", ("--concurrency", "fixed:8")))
    with tempfile.TemporaryDirectory() as tmp:
        for name, options in [*clients, *reversed(clients)]:  # twice, in ABBA order (load drifts)
            with mock_server(LATENCY_S, "auto", *faults) as urls:  # a fresh server: the same faults
                row = judge_run(urls["openai"], n, Path(tmp), *options)
            row["client"] = name
            rows.append(row)
    return rows


def main(quick: bool = False, duration_s: float | None = None) -> list[tuple[str, float, float, str]]:
    """Every part; rows (name, value, target, verdict) for bench/run.py."""
    duration_s = duration_s if duration_s is not None else (20.0 if quick else 60.0)
    rows: list[tuple[str, float, float, str]] = []
    header = header_case(duration_s)
    print(f"1. {RPM} requests/min with x-ratelimit-* headers, {CONNECTIONS} connections, "
          f"{LATENCY_S * 1000:.0f} ms latency; {duration_s:g} s per client")  # fmt: skip
    print(f"   {'client':32} {'admitted':>9} {'429s':>7} {'of limit':>9} {'429 share':>10}")
    for r in header:
        print(f"   {r['client']:32} {r['admitted']:>9} {r['refused_429']:>7} "
              f"{r['share_of_limit']:>9.1%} {r['share_429']:>10.1%}")  # fmt: skip
    first = header[0]
    rows.append(("header case: default's share of the limit", first["share_of_limit"], 0.90,
                 verdict(first["share_of_limit"], 0.90, lower_is_better=False)))  # fmt: skip
    rows.append(("header case: default's share of 429s", first["share_429"], 0.05,
                 verdict(first["share_429"], 0.05)))  # fmt: skip
    print(f"2. {RPM} requests/min, no rate headers (429 + Retry-After only), judge run, default options")
    for r in headerless([300] if quick else [300, 585]):
        print(f"   {r['items']} items: exit {r['exit']}, {r['api_error']} api_error, {r['wall_s']:.1f} s "
              f"(floor {r['floor_s']:.1f} s, {r['ratio']:.2f}x), {r['calls']} calls, "
              f"{json.dumps(r['concurrency'])} {r['stderr']}")  # fmt: skip
        failed = r["api_error"] + (r["exit"] != 0)
        rows.append((f"no rate headers, {r['items']} items: api_error + (exit != 0)", failed, 0,
                     verdict(failed, 0)))  # fmt: skip
        rows.append((f"no rate headers, {r['items']} items: wall / floor", r["ratio"], 1.3,
                     verdict(r["ratio"], 1.3)))  # fmt: skip
    n = 300 if quick else 585
    print(f"3. random 20 % 429 + 5 % 5xx, judge run, {n} items")
    faults = random_faults(n)
    for r in faults:
        print(f"   {r['client']:8} exit {r['exit']}, {r['api_error']} api_error, {r['wall_s']:.1f} s, "
              f"{r['calls']} calls, {json.dumps(r['concurrency'])} {r['stderr']}")  # fmt: skip
    walls = {name: sum(r["wall_s"] for r in faults if r["client"] == name) for name in ("default", "fixed:8")}
    ratio = walls["default"] / walls["fixed:8"]
    fixed = [r["wall_s"] for r in faults if r["client"] == "fixed:8"]
    spread = (max(fixed) - min(fixed)) / (sum(fixed) / len(fixed))
    print(f"   default / fixed:8 wall time (summed over both runs): {ratio:.3f} (target <= {NOISE_RATIO}: no slower "
          f"beyond the run-to-run noise; fixed:8 against itself this run: {spread:.1%})")  # fmt: skip
    rows.append(
        ("random 429/5xx: default / fixed:8 wall time", ratio, NOISE_RATIO, verdict(ratio, NOISE_RATIO))
    )
    return rows


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--duration", type=float, default=None, help="seconds per client (header case)")
    parser.add_argument("--quick", action="store_true", help="smaller sizes (a smoke check)")
    parsed = parser.parse_args()
    for name, value, target, status in main(parsed.quick, parsed.duration):
        print(f"{name:<56} {value:>8.3f}  target {target:g}  {status}")
