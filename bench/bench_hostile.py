"""A provider that cannot be taken at its word, measured: the cost cap and the batch deadlines.

1. ``--max-cost`` against a provider whose usage is missing, 10x too large, absurd (10^12
   tokens) or that answers after the client's timeout (the work done and billed all the same):
   ``judge run`` (60 items, 8 at a time) and ``judge run --batch`` (40 items) capped at a third
   (a sixth for the batch path, whose price is half) of the dry-run's estimate. The figure is
   what the provider billed (counted on the mock server, at the model's price) over the cap: the
   guarantee is at most the cap plus one request's worst case, the target 1.0. Each run must end
   with exit code 3 (stopped at the cap); any other exit code is shown as a miss.
2. ``judge run --batch`` against a provider whose batch status or output file trickles one byte
   every 2 s: left after ``--batch-max-wait 10`` with exit code 75 (target: within 20 s); and an
   output file that never ends: read no further than the wave's answers can hold (target: under
   512 MB streamed; the unbounded reader took 4.3 GB before it was stopped).

The OpenAI SDK adapter; the tests in tests/run/test_max_cost.py, tests/run/batch/test_run.py and
tests/run/batch/test_deadlines.py cover LiteLLM and the sweep too.

    python bench/bench_hostile.py
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import ROOT, env, verdict

from reljudge.testing import MockLLMServer, responders
from reljudge.testing.exchange import Responder

MODEL = "openai/gpt-4o-mini"  # priced in litellm's map, so a cap means something
Row = tuple[str, float, float, str]


def judge(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "reljudge", *args], cwd=ROOT, env=env(), capture_output=True, text=True
    )


def run_args(srv: MockLLMServer, out: Path, *more: str) -> list[str]:
    return [
        "run", "--model", MODEL, "--base-url", srv.openai_url, "--dataset", "dl19-sample",
        "--method", "umbrela", "--output", str(out), "--cache", str(out.parent / "cache.sqlite"),
        "--no-progress", *more,
    ]  # fmt: skip


def billed_usd(srv: MockLLMServer, batch: bool) -> float:
    from reljudge.llm.pricing import PriceTable, batch_price, price_cost
    from reljudge.llm.routing import resolve_model

    price = PriceTable().quote(resolve_model(MODEL)).price
    return price_cost(batch_price(price) if batch else price, "openai", *srv.billed)[0]


def capped(name: str, responder: Responder, batch: bool) -> Row:
    with (
        tempfile.TemporaryDirectory() as tmp,
        MockLLMServer(responder, models=("gpt-4o-mini",), latency_s=0.02) as srv,
    ):
        out = Path(tmp) / "run"
        more = ["--limit", "40" if batch else "60", "--max-tokens", "64"]
        more += ["--batch", "--batch-poll", "0.02"] if batch else ["--concurrency", "8"]
        if name == "late":
            more += ["--timeout", "0.4"]
        dry = judge(*run_args(srv, out, *[m for m in more if m != "--batch"], "--dry-run", "--json"))
        cap = json.loads(dry.stdout)["estimate"]["cost_usd"] / (6 if batch else 3)
        started = time.perf_counter()
        done = judge(*run_args(srv, out, *more, "--max-cost", f"{cap:.8f}"))
        took = time.perf_counter() - started
        ratio = billed_usd(srv, batch) / cap
    label = f"{'--batch' if batch else 'sync'} --max-cost, usage {name}: billed / cap"
    print(f"{label}: {ratio:.3f} (exit {done.returncode}, {took:.1f} s)")
    value = ratio if done.returncode == 3 else float("inf")
    return (label, value, 1.0, verdict(value, 1.0))


def deadlines() -> list[Row]:
    rows: list[Row] = []
    for slow in ("status", "content"):
        faults = {"slow": slow, "trickle_s": 2.0}
        with (
            tempfile.TemporaryDirectory() as tmp,
            MockLLMServer(models=("gpt-4o-mini",), batch_faults=faults) as srv,
        ):
            out = Path(tmp) / "run"
            started = time.perf_counter()
            done = judge(
                *run_args(
                    srv, out, "--limit", "6", "--batch", "--batch-poll", "0.02", "--batch-max-wait", "10"
                )
            )
            took = time.perf_counter() - started
        label = f"--batch-max-wait 10, trickling {slow}: s to exit 75"
        print(f"{label}: {took:.1f} s (exit {done.returncode})")
        value = took if done.returncode == 75 else float("inf")
        rows.append((label, value, 20.0, verdict(value, 20.0)))
    with (
        tempfile.TemporaryDirectory() as tmp,
        MockLLMServer(models=("gpt-4o-mini",), batch_faults={"slow": "endless"}) as srv,
    ):
        out = Path(tmp) / "run"
        started = time.perf_counter()
        done = judge(*run_args(srv, out, "--limit", "6", "--batch", "--batch-poll", "0.02"))
        took = time.perf_counter() - started
        streamed = srv.batches.streamed / 2**20
    label = "--batch, endless output file: MB read"
    print(f"{label}: {streamed:.0f} MB in {took:.1f} s (exit {done.returncode})")
    value = streamed if done.returncode == 0 else float("inf")
    rows.append((label, value, 512.0, verdict(value, 512.0)))
    return rows


def main() -> list[Row]:
    auto = responders.named("auto")
    late = responders.late(1.0, auto)
    shapes: dict[str, Responder] = {
        "missing": responders.no_usage(),
        "x10": responders.inflated_usage(10),
        "1e12": responders.absurd_usage("1e12"),
        "late": lambda req: late(req) if req.seen == 0 else auto(req),
    }
    rows = [capped(name, responder, batch=False) for name, responder in shapes.items()]
    rows += [capped(name, shapes[name], batch=True) for name in ("missing", "1e12")]
    return rows + deadlines()


if __name__ == "__main__":
    got = main()
    raise SystemExit(1 if any(r[3] == "MISSED" for r in got) else 0)
