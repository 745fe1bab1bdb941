"""`JobProgress`: counters fed by records and client events, shown as a tqdm bar."""

from __future__ import annotations

import io

from reljudge.progress import JobProgress
from reljudge.records import Judgment, Provenance


def _record(i: int, status: str = "ok", cached: bool = False, parse: str | None = None) -> Judgment:
    return Judgment(
        qid="q1",
        docid=f"d{i}",
        method="binary",
        label=1 if status == "ok" else None,
        status=status,  # type: ignore[arg-type]
        parse=parse,
        provenance=Provenance(cached=cached),
    )


def test_counts_records_events_and_shows_them_on_the_bar():
    out = io.StringIO()
    progress = JobProgress(total=4, enabled=True, file=out)
    progress.on_record(_record(1))
    progress.on_record(_record(2, cached=True, parse="fallback:last-digit"))
    progress.on_event("retry", {"kind": "rate_limit"})
    progress.on_event("retry", {"kind": "server"})
    progress.on_event("failure", {"kind": "timeout"})
    progress.on_record(_record(3, status="api_error"))
    progress.on_record(_record(4, status="unparsed"))
    progress.close()
    assert progress.records == 4
    assert dict(progress.statuses) == {"ok": 2, "api_error": 1, "unparsed": 1}
    assert progress.cache_hits == 1
    assert progress.retries == 2 and progress.failed_calls == 1
    assert dict(progress.fallbacks) == {"fallback:last-digit": 1}
    text = out.getvalue()
    assert "4/4" in text and "fail=2" in text and "retries=2" in text and "cached=1" in text


def test_a_low_estimate_grows_the_total_instead_of_overflowing():
    out = io.StringIO()
    progress = JobProgress(total=1, enabled=True, file=out)
    for i in range(3):
        progress.on_record(_record(i))
    progress.close()
    assert "3/3" in out.getvalue()


def test_disabled_progress_still_counts():
    progress = JobProgress(total=2, enabled=False)
    progress.on_record(_record(1))
    progress.on_event("truncated", {})
    progress.close()
    assert progress.records == 1 and progress.events["truncated"] == 1
