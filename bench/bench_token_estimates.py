"""The dry-run's prompt tokens for EXAM, nuggets and the pairwise sampler against the tokenizer's
own count (README: *Prices, batch costs, confirmation and sweep caps*).

For each method, every prompt the estimate stands for is rendered and counted with tiktoken
(OpenAI's chat rule) and compared with the dry-run's estimate (``judge.estimate`` inside
``counting_with`` the model's tokenizer) and with the ~4-characters estimate used without one:

- EXAM with a question bank (real questions): one grading prompt per (question, passage);
- EXAM generating its questions: the generation prompt per topic, and grading prompts with the
  typical question the estimate assumes (the real questions are not known before the run);
- nuggets: creation, scoring and assignment prompts with the typical nuggets the estimate assumes;
- the pairwise sampler: its pairs are drawn during the run, so the estimate is per call: the
  prompt tokens of a call at the mean passage, against the tokenizer's mean over all pairs (both
  orders) of the same topics.

    python bench/bench_token_estimates.py [--model gpt-4o] [--dataset dl19-sample] [--bank FILE]
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Any

SHARED_BANK = (
    Path(__file__).resolve().parents[2] / "shared" / "data" / "trec-dl19" / "exam_questions.gpt-4o.tsv"
)


def _job(model: str, dataset: str, method: str, **settings: Any) -> Any:
    from reljudge.run.config import RunConfig
    from reljudge.run.prepare import prepare

    return prepare(
        RunConfig(method=method, model=model, dataset=dataset, dry_run=True, **settings), read_existing=False
    )


def _row(method: str, prompts: int, exact: int, estimate: int, chars: int, source: str) -> dict[str, Any]:
    return {
        "method": method,
        "prompts": prompts,
        "tokenizer": source,
        "tokenizer_count": exact,
        "dry_run_estimate": estimate,
        "dry_run_error_pct": round(100 * (estimate - exact) / exact, 3),
        "chars_estimate": chars,
        "chars_error_pct": round(100 * (chars - exact) / exact, 3),
    }


def _estimates(job: Any, counter: Any) -> tuple[int, int]:
    """(the dry-run's prompt tokens with the tokenizer, without it)."""
    from reljudge.judges.token_count import counting_with

    with counting_with(counter):
        with_tokenizer = job.judge.estimate(job.inputs).prompt_tokens
    return with_tokenizer, job.judge.estimate(job.inputs).prompt_tokens


def exam_counts(model: str, dataset: str, bank: Path | None) -> dict[str, Any]:
    from reljudge.judges.exam.judge import _TYPICAL_QUESTION, _question_bank
    from reljudge.judges.items import passage_problem
    from reljudge.llm.tokens import TokenCounter

    job = _job(model, dataset, "exam", **({"question_bank": str(bank)} if bank else {}))
    judge, inputs, counter = job.judge, job.inputs, TokenCounter(model)
    given = _question_bank(inputs)
    exact = prompts = 0
    for qid in inputs.pool:
        if given is None:
            exact += counter.messages(judge.question_prompt.render(query=inputs.topics[qid]))
            prompts += 1
            questions = [_TYPICAL_QUESTION] * judge.n_questions
        else:
            questions = [q.text for q in given[qid]]
        for docid in dict.fromkeys(inputs.pool[qid]):
            if passage_problem(inputs.corpus, docid):
                continue
            for text in questions:
                exact += counter.messages(judge.prompt.render(question=text, document=inputs.corpus[docid]))
                prompts += 1
    estimate, chars = _estimates(job, counter)
    what = "question bank" if given is not None else "questions generated (typical question assumed)"
    return _row(f"exam, {what}", prompts, exact, estimate, chars, counter.source)


def nugget_counts(model: str, dataset: str) -> dict[str, Any]:
    from reljudge.judges import token_count
    from reljudge.llm.tokens import TokenCounter

    job = _job(model, dataset, "nuggets")
    counter = TokenCounter(model)
    rendered: list[int] = []

    class Recording:  # the tokenizer, noting each prompt it counts (to count the prompts)
        exact, source = True, counter.source

        def messages(self, messages: Any) -> int:
            rendered.append(counter.messages(messages))
            return rendered[-1]

        def text(self, text: str) -> int:
            return counter.text(text)

    with token_count.counting_with(Recording()):  # type: ignore[arg-type]
        estimate = job.judge.estimate(job.inputs).prompt_tokens
    chars = job.judge.estimate(job.inputs).prompt_tokens
    # each distinct prompt is rendered once and multiplied by its calls: the calls' tokens are the
    # estimate itself; the rendered prompts are tokenized exactly
    return _row("nuggets (typical nuggets assumed)", len(rendered), estimate, estimate, chars, counter.source)


def sampler_counts(model: str, dataset: str, topics: int) -> dict[str, Any]:
    from reljudge.judges.items import passage_problem
    from reljudge.llm.tokens import TokenCounter

    job = _job(model, dataset, "pairwise", options={"pairs": "sampler"}, topics_limit=topics)
    judge, inputs, counter = job.judge, job.inputs, TokenCounter(model)
    exact = prompts = 0
    for qid, docids in inputs.pool.items():
        docs = [d for d in dict.fromkeys(docids) if not passage_problem(inputs.corpus, d)]
        query = inputs.topics[qid]
        for a in docs:
            for b in docs:
                if a != b:
                    exact += counter.messages(
                        judge.prompt.render(**judge.variables(query, inputs.corpus[a], inputs.corpus[b]))
                    )
                    prompts += 1
    from reljudge.judges.token_count import counting_with

    with counting_with(counter):
        est = judge.estimate(inputs)
    plain = judge.estimate(inputs)
    per_call_exact = exact / prompts
    row = _row(
        f"pairwise sampler, per call ({len(inputs.pool)} topic(s), mean over all {prompts} ordered pairs)",
        prompts,
        round(per_call_exact),
        round(est.prompt_tokens / est.calls),
        round(plain.prompt_tokens / plain.calls),
        counter.source,
    )
    # the errors from the unrounded means
    row["dry_run_error_pct"] = round(
        100 * (est.prompt_tokens / est.calls - per_call_exact) / per_call_exact, 3
    )
    row["chars_error_pct"] = round(
        100 * (plain.prompt_tokens / plain.calls - per_call_exact) / per_call_exact, 3
    )
    assert math.isfinite(row["dry_run_error_pct"])
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="gpt-4o")
    parser.add_argument("--dataset", default="dl19-sample")
    parser.add_argument("--bank", type=Path, default=SHARED_BANK if SHARED_BANK.is_file() else None)
    args = parser.parse_args()
    if args.bank is not None:
        print(json.dumps(exam_counts(args.model, args.dataset, args.bank)), flush=True)
    print(json.dumps(exam_counts(args.model, args.dataset, None)), flush=True)
    print(json.dumps(nugget_counts(args.model, args.dataset)), flush=True)
    print(json.dumps(sampler_counts(args.model, args.dataset, topics=1)), flush=True)


if __name__ == "__main__":
    main()
