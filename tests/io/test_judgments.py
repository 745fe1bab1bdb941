"""Judgment files, run directories, manifests and secret scrubbing."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from reljudge import load_judgments
from reljudge.errors import InputError
from reljudge.io.judgments import JudgmentWriter, iter_judgments, read_judgments, repair_torn_tail
from reljudge.io.qrels_formats import to_qrels
from reljudge.io.redact import MASK, is_secret_name, scrub_argv, scrub_secrets
from reljudge.io.rundir import FINAL_STATUSES, RETRYABLE_STATUSES, RunDir
from reljudge.io.trec import read_qrels, write_qrels
from reljudge.records import STATUSES, Judgment, Provenance, Usage


def ok(qid: str, docid: str, label: int | float, method: str = "umbrela", **prov) -> Judgment:
    return Judgment(
        qid=qid,
        docid=docid,
        method=method,
        label=label,
        raw=f"##final score: {label}",
        provenance=Provenance(**prov),
    )


def failed(qid: str, docid: str, status: str, method: str = "umbrela") -> Judgment:
    return Judgment(qid=qid, docid=docid, method=method, status=status, raw="???", error="boom")


def test_writer_roundtrip_and_flush_per_record(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    writer = JudgmentWriter(path)
    writer.write(ok("1", "a", 2))
    # flushed before close: another reader sees the record already
    assert [j.docid for j in read_judgments(path)] == ["a"]
    writer.write_many([ok("1", "b", 0), failed("1", "c", "unparsed")])
    writer.close()
    records = read_judgments(path)
    assert [(j.docid, j.label, j.status) for j in records] == [
        ("a", 2, "ok"),
        ("b", 0, "ok"),
        ("c", None, "unparsed"),
    ]
    assert records[2].raw == "???"
    with pytest.raises(ValueError):
        writer.write(ok("1", "d", 1))


def test_writer_rejects_non_judgments(tmp_path: Path) -> None:
    with JudgmentWriter(tmp_path / "j.jsonl") as writer, pytest.raises(TypeError):
        writer.write({"qid": "1"})  # type: ignore[arg-type]


def test_torn_last_line_is_repaired_on_open(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "j.jsonl"
    with JudgmentWriter(path) as writer:
        writer.write(ok("1", "a", 2))
        writer.write(ok("1", "b", 1))
    whole = path.read_bytes()
    path.write_bytes(whole + ok("1", "c", 3).to_json().encode()[:25])  # a crash mid-write
    # readers skip the torn tail with a warning
    with caplog.at_level(logging.WARNING):
        assert [j.docid for j in iter_judgments(path)] == ["a", "b"]
    assert "torn last line" in caplog.text
    caplog.clear()
    with caplog.at_level(logging.WARNING), JudgmentWriter(path) as writer:
        writer.write(ok("1", "c", 3))
    assert "cut off a torn last line" in caplog.text
    assert path.read_bytes().startswith(whole)
    assert [j.docid for j in read_judgments(path)] == ["a", "b", "c"]


def test_repair_torn_tail_without_any_newline(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    path.write_bytes(b'{"qid": "1", "meth')
    assert repair_torn_tail(path) == 18
    assert path.read_bytes() == b""
    assert repair_torn_tail(path) == 0


def test_bad_line_in_the_middle_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    path.write_text(ok("1", "a", 2).to_json() + "\n{not json\n" + ok("1", "b", 2).to_json() + "\n")
    with pytest.raises(InputError) as info:
        read_judgments(path)
    assert (info.value.line, "not valid JSON" in info.value.message) == (2, True)


@pytest.mark.parametrize(
    ("line", "fragment"),
    [
        ('{"qid": "1", "docid": "a"}', "method"),
        ('{"qid": "1", "method": "m", "status": "weird"}', "status"),
        ('{"qid": "1", "method": "m", "status": "unparsed", "label": 2}', "cannot carry a label"),
        ('{"qid": "1", "method": "m", "surprise": 1}', "surprise"),
        ("[1, 2]", "JSON object"),
    ],
)
def test_invalid_records(tmp_path: Path, line: str, fragment: str) -> None:
    path = tmp_path / "j.jsonl"
    path.write_text(ok("1", "a", 2).to_json() + "\n" + line + "\n")
    with pytest.raises(InputError) as info:
        read_judgments(path)
    assert info.value.line == 2 and fragment in str(info.value)


def test_non_utf8_line(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    path.write_bytes(ok("1", "a", 2).to_json().encode() + b"\n\xff\xfe\n")
    with pytest.raises(InputError, match=r":2: not valid UTF-8"):
        read_judgments(path)


def test_latest_record_wins(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    with JudgmentWriter(path) as writer:
        writer.write(failed("1", "a", "api_error"))
        writer.write(ok("1", "b", 1))
        writer.write(ok("1", "a", 3))  # --retry-failed
    latest = load_judgments(path)
    assert [(j.docid, j.status, j.label) for j in latest] == [("a", "ok", 3), ("b", "ok", 1)]
    assert len(load_judgments(path, latest=False)) == 3


def test_directory_without_judgments(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no judgments.jsonl"):
        load_judgments(tmp_path)


def test_statuses_partition() -> None:
    assert FINAL_STATUSES | RETRYABLE_STATUSES == set(STATUSES)
    assert not FINAL_STATUSES & RETRYABLE_STATUSES


def test_run_dir_resume_qrels_and_manifest(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-live-abcdefghijklmnop1234")
    run = RunDir(tmp_path / "run")
    assert run.judgments() == [] and not run.index().existing

    def done() -> set[str]:  # what a resume skips; --retry-failed asks the retryable ones again
        return {k[2] for k in run.index(exclude_statuses=RETRYABLE_STATUSES).existing}

    usage = Usage(prompt_tokens=100, completion_tokens=5, calls=1, cost_usd=0.001)
    with run.writer() as writer:
        writer.write(ok("1", "a", 2, usage=usage))
        writer.write(failed("1", "b", "api_error"))
        writer.write(failed("1", "c", "unparsed"))
        writer.write(failed("1", "d", "truncated"))
        writer.write(Judgment(qid="1", docid="e", method="umbrela", status="skipped"))
    assert done() == {"a", "c", "e"}
    assert {k[2] for k in run.index().existing} == {"a", "b", "c", "d", "e"}
    with run.writer() as writer:  # --retry-failed fixes b
        writer.write(ok("1", "b", 0, usage=usage))
    assert done() == {"a", "b", "c", "e"}

    write_qrels(to_qrels(run.judgments()), run.qrels_path)
    assert read_qrels(run.qrels_path) == {"1": {"a": 2, "b": 0}}  # failures are not labels

    config = {
        "llm": {
            "model": "gpt-4o",
            "api_key": "sk-live-abcdefghijklmnop1234",
            "max_tokens": 64,
            "api_key_env": "OPENAI_API_KEY",
        },
        "headers": {"Authorization": "Bearer abcdefghijklmnopqrstu"},
        "note": "key is sk-live-abcdefghijklmnop1234",
    }
    argv = [
        "judge",
        "run",
        "--method",
        "umbrela",
        "--api-key",
        "sk-live-abcdefghijklmnop1234",
        "--out",
        "run",
    ]
    manifest = run.write_manifest(command=argv, config=config, started_at="2025-01-01T00:00:00Z")
    text = run.manifest_path.read_text()
    assert "abcdefghijklmnop" not in text
    assert manifest["config"]["llm"]["api_key"] == MASK
    assert manifest["config"]["llm"]["max_tokens"] == 64
    assert manifest["config"]["llm"]["api_key_env"] == "OPENAI_API_KEY"
    assert manifest["command"][5] == MASK and manifest["command"][3] == "umbrela"
    assert manifest["summary"]["status"] == {"ok": 2, "skipped": 1, "truncated": 1, "unparsed": 1}
    assert manifest["summary"]["usage"]["prompt_tokens"] == 200
    assert manifest["summary"]["usage"]["calls"] == 2
    assert manifest["records"] == 6
    assert manifest["environment"]["python"] and manifest["environment"]["libraries"]["pydantic"]
    assert json.loads(text) == manifest
    # a resumed run keeps the first start in its history
    again = run.write_manifest(command=["judge", "run"], started_at="2025-01-02T00:00:00Z")
    assert again["created_at"] == manifest["created_at"]
    assert again["history"][0]["started_at"] == "2025-01-01T00:00:00Z"
    assert not list(run.path.glob(".*.tmp"))


def test_secret_names() -> None:
    for name in (
        "api_key",
        "--api-key",
        "apikey",
        "token",
        "hf_token",
        "secret",
        "password",
        "OPENAI_API_KEY",
        "key",
    ):
        assert is_secret_name(name), name
    for name in (
        "max_tokens",
        "prompt_tokens",
        "tokens",
        "model",
        "author",
        "api_key_env",
        "keywords",
        "monkey",
    ):
        assert not is_secret_name(name), name


def test_scrub_values_and_argv(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_SERVICE_TOKEN", "plainsecretvalue99")
    data = {
        "url": "http://x/v1?api_key=abc123&x=1",
        "items": ["hf_abcdefghijklmnopqrstuvwx", "fine"],
        "n": 3,
        "msg": "token plainsecretvalue99 here",
    }
    clean = scrub_secrets(data)
    assert clean == {
        "url": f"http://x/v1?api_key={MASK}&x=1",
        "items": [MASK, "fine"],
        "n": 3,
        "msg": f"token {MASK} here",
    }
    assert data["n"] == 3 and data["items"][1] == "fine"  # input untouched
    assert scrub_argv(["judge", "--token=abc", "--hf-token", "xyz", "--model", "m"]) == [
        "judge",
        f"--token={MASK}",
        "--hf-token",
        MASK,
        "--model",
        "m",
    ]


def test_writer_masks_secret_params(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    record = ok("1", "a", 2, params={"temperature": 0, "api_key": "sk-abcdefghijklmnopqrstuvwx"})
    with JudgmentWriter(path) as writer:
        writer.write(record)
    assert "abcdefghijklmnop" not in path.read_text()
    assert read_judgments(path)[0].provenance.params == {"temperature": 0, "api_key": MASK}
    assert record.provenance.params["api_key"].startswith("sk-")  # the caller's record is untouched


def test_a_complete_last_record_without_its_newline_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    with JudgmentWriter(path) as writer:
        writer.write(ok("1", "a", 2))
        writer.write(ok("1", "b", 1))
    whole = path.read_bytes()
    path.write_bytes(whole[:-1])  # only the newline is missing
    assert [j.docid for j in read_judgments(path)] == ["a", "b"]  # readers take it
    assert repair_torn_tail(path) == 0
    assert path.read_bytes() == whole  # kept, with the newline added
    with JudgmentWriter(path) as writer:  # and appending after it gives whole lines
        writer.write(ok("1", "c", 3))
    assert [j.docid for j in read_judgments(path)] == ["a", "b", "c"]
    path.write_bytes(b'{"qid": "1", "docid": "a", "method": "m", "label": 1}')  # the only line
    assert repair_torn_tail(path) == 0 and path.read_bytes().endswith(b"}\n")


def test_a_utf8_bom_at_the_start_of_a_judgments_file_is_ignored(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    path.write_bytes(
        b"\xef\xbb\xbf" + (ok("1", "a", 2).to_json() + "\n" + ok("1", "b", 1).to_json()).encode()
    )
    assert [j.docid for j in read_judgments(path)] == ["a", "b"]
    assert [j.docid for j in RunDir(tmp_path).index().existing.values()] == []  # no judgments.jsonl
    (tmp_path / "judgments.jsonl").write_bytes(path.read_bytes())
    index = RunDir(tmp_path).index(lazy_methods=("umbrela",))
    assert sorted(index.existing[k].docid for k in index.existing) == ["a", "b"]


def test_secret_param_values_are_masked_in_the_command_line() -> None:
    argv = ["judge", "run", "--param", "api_key=sk-plain-1", "--param=token=abc123", "-o", "k=v"]
    argv += ["--param", "temperature=0.5", "--option", "prompt=umbrela/bing"]
    assert scrub_argv(argv) == [
        "judge", "run", "--param", f"api_key={MASK}", f"--param=token={MASK}", "-o", "k=v",
        "--param", "temperature=0.5", "--option", "prompt=umbrela/bing",
    ]  # fmt: skip


def test_counts_keyed_by_an_error_kind_are_not_masked(tmp_path: Path) -> None:
    counts = {"auth": 3, "server": 2, "rate_limit": 1}
    extra = {
        "last_session": {
            "failure_causes": counts,
            "retry_causes": {"auth": 1},
            "client": {"failures": counts, "statuses": {"api_error": 6}},
        },
        "api_error_kinds": counts,
        # real secrets stay masked, also inside a counter dict and under a secret-named key
        "auth": "Basic dXNlcjpwYXNz",
        "token": 12345678,
        "failures": {"auth": "sk-abcdefghijklmnopqrstuv"},
    }
    manifest = RunDir(tmp_path / "run").write_manifest(command=["judge"], extra=extra)
    written = json.loads((tmp_path / "run" / "manifest.json").read_text())
    for m in (manifest, written):
        session = m["extra"]["last_session"]
        assert session["failure_causes"] == counts and session["client"]["failures"] == counts
        assert session["retry_causes"] == {"auth": 1} and m["extra"]["api_error_kinds"] == counts
        assert m["extra"]["auth"] == MASK and m["extra"]["token"] == MASK
        assert m["extra"]["failures"] == {"auth": MASK}


def test_retry_failed_statuses_are_the_retryable_ones_and_unparsed() -> None:
    from reljudge.io.rundir import RETRY_FAILED_STATUSES

    assert RETRY_FAILED_STATUSES == RETRYABLE_STATUSES | {"unparsed"}
    assert not RETRY_FAILED_STATUSES & {"ok", "refused", "skipped"}


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full (Linux)")
def test_a_write_to_a_full_disk_raises_once_and_close_does_not_raise_again() -> None:
    import errno

    writer = JudgmentWriter("/dev/full")  # every write to /dev/full fails with ENOSPC
    with pytest.raises(OSError) as err:
        writer.write(ok("1", "a", 2))
    assert err.value.errno == errno.ENOSPC
    assert writer.count == 0
    writer.close()  # the failure was reported once; closing does not raise it again
    assert writer.closed
