"""Ingesting batch output lines: each line goes through what a synchronous answer goes through.

The body of a 200 line is read by the openai backend's own reader (`completion_from_data`: a
content that is not text is an ``invalid_response``, token counts clamped), classified and
bounded by the client's `ResultBuilder` (ok / truncated / refused, answers cut at
`MAX_ANSWER_CHARS`, the client's secrets masked, an answer naming another model than the one
asked for an ``invalid_response`` failure: `reljudge.llm.results.served_model_problem`; the
models named are counted in `IngestReport.served`, kept with the wave in the batch state), and only a whole, good answer is stored in the
response cache, under its custom_id (validate before caching: `cacheable`). Any other line --
an error, a non-200 response, a body that is no completion, a cut-off or refused answer -- goes to
the run's `FailureLog`, from which the collect mode makes its record.

Usage is read against each request's bound (``bounds``, `reljudge.llm.usage_bound.UsageBound`):
usage above it is clamped to it, an answer without usage costs its bound, and both are counted
in ``IngestReport.anomalies`` (the run warns once, `reljudge.run.batch.passes`).

A line that is not one (not JSON, too long, no reljudge custom_id, a custom_id the batch did not
ask for) is rejected and counted, never stored: a hostile output file cannot fill the cache with
answers nobody asked for, nor crash the run. A request answered twice (two lines of one custom_id,
in the output or the error file) has no answer to trust: neither is kept (the first is taken back
from the cache), the request becomes an ``invalid_response`` failure (its record an ``api_error``
that ``--retry-failed`` asks again), counted in `IngestReport.duplicates` -- as ``judge batch
import`` refuses such a file.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Container, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from reljudge.llm.backends.base import classify_status
from reljudge.llm.backends.openai import completion_from_data
from reljudge.llm.batch.failures import FailureLog
from reljudge.llm.batch.lines import BadLine, OutputLine, parse_output_line
from reljudge.llm.optional_cache import OptionalCache, cache_entry, cacheable
from reljudge.llm.results import ResultBuilder
from reljudge.llm.types import ChatResult, ProviderError
from reljudge.llm.usage_bound import UsageBound

#: answers committed to the cache per transaction
STORE_CHUNK = 1000
#: how many rejected lines are described in the report (the rest only counted)
MAX_PROBLEMS = 10


@dataclass
class IngestReport:
    """What ingesting some output lines did."""

    lines: int = 0
    answers: int = 0  # stored in the response cache
    failed: int = 0  # written to the failure log
    rejected: int = 0  # not an output line of this batch (see the module docstring)
    duplicates: int = 0  # requests answered more than once: neither answer kept, a failure
    cost_usd: float = 0.0  # what the answers cost at the batch price (`reljudge.llm.pricing.batch_price`)
    served: dict[str, int] = field(default_factory=dict)  # answers by the ``model`` they name
    prompt_tokens: int = 0  # of the lines that carried a completion
    completion_tokens: int = 0
    problems: list[str] = field(default_factory=list)  # the first few rejections, described
    #: answers whose usage was "missing" (charged their bound) or "over" their bound (clamped)
    anomalies: Counter[str] = field(default_factory=Counter)
    #: the first answer with usage over its bound: (reported prompt, completion; bound prompt, answer)
    over: tuple[int, int, int, int] | None = None

    def reject(self, why: str) -> None:
        self.rejected += 1
        if len(self.problems) < MAX_PROBLEMS:
            self.problems.append(f"line {self.lines}: {why}")

    def add(self, other: IngestReport) -> None:
        self.lines += other.lines
        self.answers += other.answers
        self.failed += other.failed
        self.rejected += other.rejected
        self.duplicates += other.duplicates
        self.cost_usd += other.cost_usd
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens
        for model, n in other.served.items():
            self.served[model] = self.served.get(model, 0) + n
        self.anomalies.update(other.anomalies)
        self.over = self.over or other.over
        self.problems.extend(other.problems[: max(0, MAX_PROBLEMS - len(self.problems))])

    def as_dict(self) -> dict[str, Any]:
        return {
            "lines": self.lines,
            "answers": self.answers,
            "failed": self.failed,
            "rejected": self.rejected,
            "duplicates": self.duplicates,
            "cost_usd": self.cost_usd,
            "served": dict(self.served),
            "problems": list(self.problems),
            "usage_anomalies": dict(self.anomalies),
        }


class Ingestor:
    """Ingests output lines into one client's cache and failure log (see the module docstring).

    ``expected``: the custom_ids the batch asked for (None: any reljudge custom_id). ``done``:
    custom_ids answered already (by an earlier line or file of the same batch), updated.
    ``answered``: gets the custom_ids whose answers were stored. ``bounds``: each request's
    `UsageBound` by custom_id (a request without one is read as it is)."""

    def __init__(
        self,
        results: ResultBuilder,
        cache: OptionalCache,
        failures: FailureLog,
        expected: Container[str] | None = None,
        done: set[str] | None = None,
        answered: set[str] | None = None,
        bounds: Mapping[str, UsageBound] | None = None,
    ) -> None:
        self.results = results
        self.cache = cache
        self.failures = failures
        self.expected = expected
        self.done = set() if done is None else done
        self.answered = answered
        self.report = IngestReport()
        self.bounds = bounds or {}
        self._rows: list[tuple[str, str, str, dict[str, Any]]] = []
        self._stored: set[str] = set()  # custom_ids whose answer this ingestor stored (or will)
        self._twice: set[str] = set()  # custom_ids answered more than once

    def ingest(self, lines: Iterable[bytes | str | None]) -> IngestReport:
        """Ingest every line (None: a line too long to read, `bounded_lines`); the answers are
        committed before this returns."""
        try:
            for raw in lines:
                self.line(raw)
        finally:
            self.flush()
        return self.report

    def line(self, raw: bytes | str | None) -> None:
        report = self.report
        report.lines += 1
        if raw is None:
            report.reject("longer than the longest line read")
            return
        try:
            line = parse_output_line(raw)
        except BadLine as err:
            report.reject(str(err))
            return
        if self.expected is not None and line.custom_id not in self.expected:
            report.reject(f"custom_id {line.custom_id[:16]}… was not asked in this batch")
            return
        if line.custom_id in self.done:
            report.reject(f"a second answer to {line.custom_id[:16]}…: neither is kept, the request failed")
            self._answered_twice(line.custom_id)
            return
        self.done.add(line.custom_id)
        self._one(line)

    def _one(self, line: OutputLine) -> None:
        if not line.answered:
            status = line.status_code
            error = classify_status(status, line.error or "") if status else ProviderError("other", "")
            self._fail(
                line.custom_id, {"kind": error.kind, "error": self.results.redact(line.error or "")}, status
            )
            return
        try:
            completion = completion_from_data(line.body)
        except ProviderError as err:
            self._fail(line.custom_id, {"kind": err.kind, "error": self.results.redact(err.message)}, 200)
            return
        if completion.model is not None and (
            completion.model[:100] in self.report.served or len(self.report.served) < MAX_PROBLEMS
        ):
            served = completion.model[:100]
            self.report.served[served] = self.report.served.get(served, 0) + 1
        bound = self.bounds.get(line.custom_id)
        if bound is not None:
            completion = bound.check(completion)
            if completion.usage_anomaly is not None:
                self.report.anomalies[completion.usage_anomaly] += 1
                if completion.reported_usage is not None and self.report.over is None:
                    self.report.over = (*completion.reported_usage, bound.prompt_tokens, bound.answer_tokens)
        self.report.prompt_tokens += completion.prompt_tokens  # as clamped to the request's bound
        self.report.completion_tokens += completion.completion_tokens
        result = self.results.answer(completion, "", {}, 1, 0.0, bound)
        self.report.cost_usd += self.results.cost(completion, bound, batch=True)[0]
        if cacheable(result):
            self._rows.append((line.custom_id, self.results.backend, self.results.model, cache_entry(result)))
            self._stored.add(line.custom_id)
            self.report.answers += 1
            if self.answered is not None:
                self.answered.add(line.custom_id)
            if len(self._rows) >= STORE_CHUNK:
                self.flush()
            return
        if result.status == "api_error":  # another model's answer (`ResultBuilder.served_problem`)
            self._fail(line.custom_id, {"kind": result.error_kind, "error": result.error}, 200)
            return
        self._fail(line.custom_id, failure_entry(result), 200)

    def _answered_twice(self, custom_id: str) -> None:
        """A second line for ``custom_id``: the answer stored from the first is taken back and
        the request is a failure (once, however many more lines come)."""
        if custom_id in self._twice:
            return
        self._twice.add(custom_id)
        self.report.duplicates += 1
        if custom_id in self._stored:
            self._stored.discard(custom_id)
            self.report.answers -= 1
            pending = len(self._rows)
            self._rows = [row for row in self._rows if row[0] != custom_id]
            if len(self._rows) == pending:  # committed already
                self.cache.forget(custom_id)
            if self.answered is not None:
                self.answered.discard(custom_id)
        else:
            self.report.failed -= 1  # the first line failed: counted again below
        entry = {
            "kind": "invalid_response",
            "error": "the provider answered this request more than once, with answers that may differ: "
            "neither is kept",
        }
        self._fail(custom_id, entry, None)

    def _fail(self, custom_id: str, entry: dict[str, Any], status: int | None) -> None:
        if status is not None:
            entry["status_code"] = status
        self.failures.add(custom_id, entry)
        self.report.failed += 1

    def flush(self) -> None:
        if self._rows:
            rows, self._rows = self._rows, []
            self.cache.put_many(rows)


def failure_entry(result: ChatResult) -> dict[str, Any]:
    """The failure-log entry of an answer that is not a good one (truncated, refused)."""
    return {
        "status": result.status,
        "kind": result.error_kind,
        "error": result.error,
        "completion": {
            "text": result.text,
            "finish_reason": result.finish_reason,
            "prompt_tokens": result.usage.prompt_tokens,
            "completion_tokens": result.usage.completion_tokens,
            "refusal": result.error if result.status == "refused" else None,
        },
    }
