"""`RunSummary`: what a job did, its text, and what ``--retry-failed`` does for its failures."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from reljudge.errors import EXIT_OK
from reljudge.records import FAILURE_STATUSES, Usage
from reljudge.run.estimate import render_estimate

#: api_error kinds a retry with the same settings does not fix (`reljudge.llm.types.ErrorKind`)
PERMANENT_KINDS: frozenset[str] = frozenset({"auth", "bad_request", "context_length", "content_filter"})


class RunSummary(BaseModel):
    """What a job did. ``exit_code``: 0 ok, 1 failure share above ``max_failure_rate`` or the
    job aborted (the provider cannot serve it, see ``abort``), 3 the job stopped at its cost cap
    (``budget``)."""

    model_config = ConfigDict(extra="forbid")

    state: Literal["finished", "interrupted", "failed", "aborted", "capped", "dry-run"]
    method: str
    model: str
    output_dir: Path | None = None
    items: int = 0  # pooled items of this invocation
    records: int = 0  # records in the run directory (last per key)
    new_records: int = 0  # records written by this invocation
    statuses: dict[str, int] = Field(default_factory=dict)  # all records (last per key)
    fallbacks: dict[str, int] = Field(default_factory=dict)  # labels read by a fallback parser
    usage: Usage = Field(default_factory=Usage)  # this invocation
    total_usage: Usage = Field(default_factory=Usage)  # every call the run directory records
    price_known: bool = True
    cache_hits: int = 0
    retries: int = 0  # attempts beyond one per call and re-ask (`reljudge.run.ledger`)
    reasks: int = 0  # calls made again for answers that could not be read
    retry_causes: dict[str, int] = Field(default_factory=dict)  # retried attempts by error kind
    failure_causes: dict[str, int] = Field(default_factory=dict)  # calls that finally failed, by kind
    wall_time_s: float = 0.0
    failure_rate: float = 0.0
    max_failure_rate: float = 0.05
    retryable_failures: int = 0  # records --retry-failed asks again (api_error, truncated, unparsed)
    api_error_kinds: dict[str, int] = Field(default_factory=dict)  # api_error records by error kind
    #: why the job stopped early when ``state == "aborted"``: the provider's error
    #: (``kind``, ``message``, ``status_code``, ``hint``)
    abort: dict[str, Any] | None = None
    #: with ``--max-cost``: the cap, what the run directory's records cost, whether the cap was
    #: reached (``state == "capped"``) and the estimate of the request that did not fit
    budget: dict[str, Any] | None = None
    qrels_pairs: int = 0
    #: documents left out of qrels.txt until all their stage records exist (EXAM questions,
    #: nuggets; an interrupted multi-stage run)
    incomplete: int = 0
    estimate: dict[str, Any] | None = None
    #: with ``--scores expected``: this session's ok answers by grade distribution
    #: (`reljudge.run.ledger.Ledger.distributions`); None otherwise
    expected: dict[str, int] | None = None
    exit_code: int = EXIT_OK

    def render(self) -> str:
        """A human-readable summary (several lines)."""
        if self.state == "dry-run":
            return render_estimate(self.estimate or {})
        lines = [f"{self.state}: {self.method} with {self.model} -> {self.output_dir}"]
        counts = ", ".join(f"{s} {n}" for s, n in self.statuses.items() if n) or "none"
        lines.append(f"records: {self.records} ({counts}); {self.new_records} new in this run")
        if self.fallbacks:
            lines.append(
                "parse fallbacks: " + ", ".join(f"{k} {v}" for k, v in sorted(self.fallbacks.items()))
            )
        cost = f"${self.usage.cost_usd:.4f}" + ("" if self.price_known else " (price unknown for this model)")
        cached = f" ({self.usage.cached_tokens} cached)" if self.usage.cached_tokens else ""
        reasoning = f" ({self.usage.reasoning_tokens} reasoning)" if self.usage.reasoning_tokens else ""
        lines.append(
            f"this run: {self.usage.calls} calls, {self.usage.prompt_tokens} prompt{cached} + "
            f"{self.usage.completion_tokens} completion{reasoning} tokens, {cost}, {self.cache_hits} cache hits, "
            f"{self.retries} retries, {self.wall_time_s:.1f}s"
        )
        if self.usage.estimated_usd:
            lines.append(
                f"of that cost, ${self.usage.estimated_usd:.4f} is an estimate: answers without usage or with usage "
                "above what the request could have used, and attempts of unknown outcome, charged their bound"
            )
        lines += self._expected_lines()
        if self.reasks:
            lines.append(f"re-asked: {self.reasks} answers that could not be read were asked once more")
        if self.retry_causes or self.failure_causes:
            causes = ", ".join(f"{k} {v}" for k, v in sorted(self.retry_causes.items())) or "none"
            failed = ", ".join(f"{k} {v}" for k, v in sorted(self.failure_causes.items())) or "none"
            lines.append(f"retries by cause: {causes}; calls that failed after all attempts: {failed}")
        if self.total_usage.calls != self.usage.calls:
            lines.append(
                f"all runs in this directory: {self.total_usage.calls} calls, "
                f"{self.total_usage.total_tokens} tokens, ${self.total_usage.cost_usd:.4f}"
            )
        lines.append(
            f"failure share: {self.failure_rate:.1%} (limit {self.max_failure_rate:.1%}); "
            f"qrels: {self.qrels_pairs} labelled pairs"
        )
        if self.incomplete:
            lines.append(
                f"{self.incomplete} document(s) left out of qrels.txt: not yet judged on every "
                "question/nugget of their topic (resume the job to complete them)"
            )
        lines += failure_advice(self.statuses, self.api_error_kinds)
        lines += self._ending()
        return "\n".join(lines)

    def _expected_lines(self) -> list[str]:
        if self.expected is None:
            return []
        found = self.expected.get("found", 0)
        missing = self.expected.get("no_logprobs", 0)
        unavailable = self.expected.get("unavailable", 0)
        if not found and missing:
            return [
                f"warning: --scores expected: the provider returned no log-probabilities ({missing} "
                "answers): the labels are the model's answers (argmax), and there is no "
                f"{self.method}-expected score set. Use a server that returns logprobs/top_logprobs"
            ]
        if not found and not unavailable and not missing:
            return []
        return [
            f"expected relevance: {found} answers with a grade distribution (score set "
            f"{self.method}-expected); {missing} without log-probabilities, {unavailable} without a label "
            "token (their expected score is their label)"
        ]

    def _ending(self) -> list[str]:
        if self.state == "capped":
            budget = self.budget or {}
            return [
                f"stopped at the cost cap: ${budget.get('spent_usd', 0.0):.4f} spent of --max-cost "
                f"${budget.get('max_cost_usd', 0.0):.4f} (all runs in this directory); "
                f"{self.records} record(s) judged for {self.items} pooled item(s); the next request would cost about "
                f"${budget.get('next_request_usd', 0.0):.4f}. Everything is saved: re-run the same "
                "command with a higher --max-cost to continue"
            ]
        if self.state == "interrupted":
            return ["interrupted: re-run the same command to continue where it stopped"]
        if self.state == "aborted":
            what = (self.abort or {}).get("kind") or "error"
            return [
                f"aborted: the provider cannot serve this job ({what}); the records so far are kept. "
                "Fix the cause, then re-run the same command to continue"
            ]
        if self.state == "failed":
            return [
                "stopped by an error (see below); the records so far are kept and the same command resumes"
            ]
        if self.exit_code != EXIT_OK:
            return [f"failed: the failure share is above --max-failure-rate {self.max_failure_rate}"]
        return []

    def abort_message(self) -> str | None:
        """The provider's message when the job aborted (``error: ...`` once on stderr), else None."""
        if self.abort is None:
            return None
        message, hint = self.abort.get("message"), self.abort.get("hint")
        return f"{message}" + (f" ({hint})" if hint else "")


def failure_rate(statuses: Mapping[str, int]) -> float:
    """(unparsed + api_error + refused + truncated) / records that are not ``skipped``."""
    judged = sum(n for s, n in statuses.items() if s != "skipped")
    failed = sum(statuses.get(s, 0) for s in FAILURE_STATUSES)
    return failed / judged if judged else 0.0


def failure_advice(statuses: Mapping[str, int], api_error_kinds: Mapping[str, int]) -> list[str]:
    """What re-running with ``--retry-failed`` does for each kind of failed record: one line per
    group (transient provider errors, errors a retry alone does not fix, cut-off answers,
    unparsed answers). ``api_error_kinds``: api_error records by error kind."""
    from reljudge.llm.types import RETRYABLE_KINDS

    def detail(kinds: Mapping[str, int]) -> str:
        return ", ".join(f"{k} {n}" for k, n in sorted(kinds.items()))

    transient = {k: n for k, n in api_error_kinds.items() if k in RETRYABLE_KINDS}
    permanent = {k: n for k, n in api_error_kinds.items() if k in PERMANENT_KINDS}
    unclear = {k: n for k, n in api_error_kinds.items() if k not in RETRYABLE_KINDS | PERMANENT_KINDS}
    lines = []
    if transient:
        lines.append(
            f"{sum(transient.values())} api_error record(s) failed for a transient reason "
            f"({detail(transient)}): --retry-failed judges them again"
        )
    if permanent:
        lines.append(
            f"{sum(permanent.values())} api_error record(s) failed for a reason a retry does not fix "
            f"({detail(permanent)}): fix the API key, endpoint, model or request first; "
            "--retry-failed alone fails the same way"
        )
    if unclear:
        lines.append(
            f"{sum(unclear.values())} api_error record(s) failed otherwise ({detail(unclear)}): "
            "--retry-failed asks again, which may or may not help"
        )
    if statuses.get("truncated"):
        lines.append(
            f"{statuses['truncated']} truncated record(s) hit the answer token limit: a larger "
            "--max-tokens fixes them (a new job: another --output); --retry-failed keeps the limit"
        )
    if statuses.get("unparsed"):
        lines.append(
            f"{statuses['unparsed']} unparsed record(s): --retry-failed asks the model again "
            "(a plain resume keeps them)"
        )
    return lines
