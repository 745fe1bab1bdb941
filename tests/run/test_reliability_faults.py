"""Fault soak: a run against a server that answers 429 (with Retry-After) to 20% of requests,
5xx to 5%, hangs past the timeout for 5%, and sends garbled or empty text for 5% each.

The run must finish; every item is ``ok`` or carries an explicit failure status (with the raw
answer when there was one); the summary counts retries and failures by cause, and they match
what the server injected; ``--retry-failed`` re-judges exactly the failed items.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict

import pytest

from _cli import judge
from _reliability import item_of, make_dataset, run_args, sandbox
from reljudge.io.judgments import read_judgments
from reljudge.testing import AutoResponder, FaultInjector, MockLLMServer

pytestmark = pytest.mark.slow

ATTEMPTS = 3
#: the client timeout: a hang (which lasts until the server stops) must trip it, an answer must not,
#: even on a busy machine where a local answer can take far longer than usual
TIMEOUT_S = 3
KIND_OF_FAULT = {"429": "rate_limit", "5xx": "server", "hang": "timeout"}


@pytest.mark.slow
def test_fault_soak_finishes_counts_every_kind_and_retry_failed_redoes_only_failures(tmp_path):
    data = make_dataset(tmp_path / "data", 20, 30)  # 600 judgments
    faults = FaultInjector(
        AutoResponder(),
        rate_429=0.20,
        rate_5xx=0.05,
        rate_hang=0.05,
        rate_garbled=0.05,
        rate_empty=0.05,
        retry_after=0.05,
        seed=11,
    )
    out = tmp_path / "run"
    args = run_args(
        "URL",
        out,
        data,
        "--cache",
        str(tmp_path / "cache.sqlite"),
        "--concurrency",
        "16",
        "--timeout",
        str(TIMEOUT_S),
        "--max-attempts",
        str(ATTEMPTS),
        "--max-failure-rate",
        "1",
    )
    with MockLLMServer(faults) as srv:
        args[args.index("URL")] = srv.openai_url
        proc = judge(*args, cwd=tmp_path, env=sandbox(tmp_path))
        assert proc.returncode == 0, proc.stderr
        requests = list(srv.requests)
        injected = Counter(faults.fault_for(r) for r in requests)

        records = read_judgments(out / "judgments.jsonl")
        assert len(records) == data.n_items == len({r.key for r in records})
        statuses = Counter(r.status for r in records)
        assert set(statuses) <= {"ok", "unparsed", "api_error"}, statuses
        assert statuses["ok"] > 0.7 * data.n_items

        # what each item's last request was, as the server saw it
        by_item: dict[str, list] = defaultdict(list)
        for r in requests:
            by_item[item_of(r)].append(r)
        last_fault = {item: faults.fault_for(reqs[-1]) for item, reqs in by_item.items()}
        for rec in records:
            fault = last_fault[rec.docid]
            # an answer that cannot be read is asked once more, with its own attempts
            asked = 1 + len(rec.extra.get("reasked", []))
            assert len(by_item[rec.docid]) <= asked * ATTEMPTS
            if rec.status == "ok":
                assert rec.label in (0, 1) and rec.raw in ("0", "1") and fault is None
            elif rec.status == "unparsed":
                # garbled or empty text: kept verbatim, never turned into a label
                assert fault in ("garbled", "empty"), (rec, fault)
                assert rec.label is None and rec.raw is not None and rec.error
                assert rec.raw == "" if fault == "empty" else rec.raw.startswith("~")
            else:  # api_error after the last attempt (an attempt can time out before it is sent)
                assert rec.label is None and rec.error
                assert ATTEMPTS <= rec.provenance.attempts <= asked * ATTEMPTS

        # the summary counts each kind, and the counts agree with what the server injected
        # (a late answer that arrives after the client's timeout counts as a timeout)
        manifest = json.loads((out / "manifest.json").read_text())
        session = manifest["extra"]["last_session"]
        retries, failures = Counter(session["retry_causes"]), Counter(session["failure_causes"])
        for fault, kind in KIND_OF_FAULT.items():
            assert injected[fault] > 0
            seen = retries[kind] + failures[kind]
            if kind == "timeout":
                assert seen >= injected[fault]
            else:
                assert 0.9 * injected[fault] <= seen <= injected[fault], (kind, seen, injected)
        assert sum(failures.values()) == statuses["api_error"]
        assert manifest["summary"]["status"] == {k: v for k, v in sorted(statuses.items())}
        assert "retries by cause:" in proc.stdout and "rate_limit" in proc.stdout
        assert f"unparsed {statuses['unparsed']}" in proc.stdout
        if statuses["api_error"]:
            assert "--retry-failed" in proc.stdout
        failed = {r.docid for r in records if r.status == "api_error"}
        unparsed = {r.docid for r in records if r.status == "unparsed"}

        # a plain resume calls nothing; --retry-failed re-judges the api_error and the unparsed
        # items, and asks the server for exactly those (an unreadable answer is never kept in
        # the response cache, so it is asked again)
        srv.reset()
        srv.responder = AutoResponder()
        again = judge(*args, cwd=tmp_path, env=sandbox(tmp_path))
        assert again.returncode == 0 and srv.calls == 0, again.stderr
        retried = judge(*args, "--retry-failed", cwd=tmp_path, env=sandbox(tmp_path))
        assert retried.returncode == 0, retried.stderr
        assert Counter(item_of(r) for r in srv.requests) == Counter(failed | unparsed)

    latest = {r.docid: r for r in read_judgments(out / "judgments.jsonl")}
    assert len(latest) == data.n_items
    assert all(latest[d].status == "ok" for d in failed | unparsed)
    lines = (out / "judgments.jsonl").read_text().splitlines()
    # one appended record per re-judged item
    assert len(lines) == data.n_items + len(failed) + len(unparsed)
