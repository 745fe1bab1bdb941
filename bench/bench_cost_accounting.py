"""Exact accounting and the cost cap, measured (README: *Cost cap and exact accounting*).

1. The dry-run's prompt tokens against the tokenizer's own count: every prompt of the pool
   rendered and counted with tiktoken (OpenAI's chat rule), beside the dry-run's estimate (each
   distinct text tokenized once, `reljudge.judges.token_count.tokenizer_terms`) and the
   ~4-characters estimate used without a tokenizer.
2. ``--max-cost`` against the mock server: a run capped at half its dry-run estimate, then the
   same command with a higher cap; calls counted on the server.

    python bench/bench_cost_accounting.py [--model gpt-4o] [--dataset dl19-sample]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path


def pairwise_counts(model: str, dataset: str, topics: int) -> dict[str, float]:
    """The same for pairwise with all pairs of the first ``topics`` topics, both orders."""
    from reljudge.judges.token_count import counting_with, prompt_tokens
    from reljudge.llm.tokens import TokenCounter
    from reljudge.run.config import RunConfig
    from reljudge.run.prepare import prepare

    config = RunConfig(
        method="pairwise",
        model=model,
        dataset=dataset,
        options={"pairs": "all"},
        topics_limit=topics,
        dry_run=True,
    )
    job = prepare(config, read_existing=False)
    judge, inputs = job.judge, job.inputs
    counter = TokenCounter(model)
    exact = chars = prompts = 0
    for qid, docids in inputs.pool.items():
        docs = list(dict.fromkeys(docids))
        query = inputs.topics[qid]
        for i, a in enumerate(docs):
            for b in docs[i + 1 :]:
                for first, second in ((a, b), (b, a)):
                    variables = judge.variables(query, inputs.corpus[first], inputs.corpus[second])
                    exact += counter.messages(judge.prompt.render(**variables))
                    chars += prompt_tokens(judge.prompt, variables)
                    prompts += 1
    with counting_with(counter):
        estimate = judge.estimate(inputs).prompt_tokens
    return {
        "method": f"pairwise (all pairs, {len(inputs.pool)} topic(s))",
        "items": prompts,
        "tokenizer": counter.source,
        "tokenizer_count": exact,
        "dry_run_estimate": estimate,
        "dry_run_error_pct": round(100 * (estimate - exact) / exact, 3),
        "chars_estimate": chars,
        "chars_error_pct": round(100 * (chars - exact) / exact, 3),
    }


def token_counts(model: str, dataset: str, method: str) -> dict[str, float]:
    from reljudge.judges.items import pool_items
    from reljudge.judges.token_count import counting_with, prompt_tokens
    from reljudge.llm.tokens import TokenCounter
    from reljudge.run.config import RunConfig
    from reljudge.run.prepare import prepare

    config = RunConfig(method=method, model=model, dataset=dataset, dry_run=True)
    job = prepare(config, read_existing=False)
    judge, inputs = job.judge, job.inputs
    counter = TokenCounter(model)
    if not counter.exact:
        raise SystemExit(f"no tokenizer for {model} on this machine")
    items = list(pool_items(inputs))
    exact = sum(
        counter.messages(judge.prompt.render(**judge.variables(inputs.topics[q], inputs.corpus[d])))
        for q, d in items
    )
    chars = sum(
        prompt_tokens(judge.prompt, judge.variables(inputs.topics[q], inputs.corpus[d])) for q, d in items
    )
    with counting_with(counter):
        estimate = judge.estimate(inputs).prompt_tokens
    return {
        "method": method,
        "items": len(items),
        "tokenizer": counter.source,
        "tokenizer_count": exact,
        "dry_run_estimate": estimate,
        "dry_run_error_pct": round(100 * (estimate - exact) / exact, 3),
        "chars_estimate": chars,
        "chars_error_pct": round(100 * (chars - exact) / exact, 3),
    }


def capped_run(dataset: str) -> dict[str, float]:
    from typer.testing import CliRunner

    from reljudge.cli import app
    from reljudge.io.judgments import read_judgments
    from reljudge.testing import MockLLMServer

    with tempfile.TemporaryDirectory() as tmp, MockLLMServer(models=("gpt-4o-mini",)) as srv:
        out = Path(tmp) / "run"
        argv = ["run", "--model", "openai/gpt-4o-mini", "--base-url", srv.openai_url, "--dataset", dataset]
        argv += ["--method", "umbrela", "--output", str(out), "--no-cache", "--no-progress"]

        def judge(*extra: str) -> tuple[int, str]:
            result = CliRunner().invoke(app, argv + list(extra), env={"OPENAI_API_KEY": "sk-bench"})
            return result.exit_code, result.output

        _, text = judge("--dry-run", "--json")
        estimate = json.loads(text)["estimate"]["cost_usd"]
        cap = round(estimate / 2, 6)
        first_code, _ = judge("--max-cost", str(cap))
        records = list(read_judgments(out / "judgments.jsonl"))
        spent = sum(r.provenance.usage.cost_usd for r in records)
        dearest = max(r.provenance.usage.cost_usd for r in records)
        first_calls = srv.calls
        second_code, _ = judge("--max-cost", str(round(estimate * 4, 6)))
        return {
            "dry_run_estimate_usd": estimate,
            "cap_usd": cap,
            "first_exit": first_code,
            "first_calls": first_calls,
            "spent_usd": round(spent, 6),
            "below_cap_usd": round(cap - spent, 6),
            "dearest_request_usd": round(dearest, 6),
            "second_exit": second_code,
            "total_calls": srv.calls,
            "items": len(list(read_judgments(out / "judgments.jsonl"))),
            "repeated_requests": sum(1 for r in srv.requests if r.seen),
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="gpt-4o")
    parser.add_argument("--dataset", default="dl19-sample")
    args = parser.parse_args()
    for method in ("umbrela", "binary"):
        print(json.dumps(token_counts(args.model, args.dataset, method)))
    print(json.dumps(pairwise_counts(args.model, args.dataset, topics=1)))
    print(json.dumps(capped_run(args.dataset)))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
