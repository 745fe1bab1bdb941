"""A damaged, read-only or full response cache never stops a run: one warning, then the job goes
on without it (or without storing); ``judge cache clear`` deletes a file it cannot read."""

from __future__ import annotations

import json
import logging
import os
import sqlite3

import pytest

from _cli import judge
from reljudge.llm import ClientConfig, LLMClient, ResponseCache
from reljudge.testing import MockLLMServer, responders

SECRET = "sk-test-SECRET-9f8e7d6c5b4a"


def msgs(i: int) -> list[dict[str, str]]:
    return [{"role": "user", "content": f"Just answer 1 or 0. Item {i}"}]


def config(srv: MockLLMServer, path) -> ClientConfig:
    return ClientConfig(
        model="openai/gpt-4o-mini", base_url=srv.openai_url, api_key=SECRET, cache_path=path, timeout_s=30
    )


def warnings_about_cache(caplog) -> list[str]:
    return [
        r.getMessage() for r in caplog.records if r.levelno == logging.WARNING and "cache" in r.getMessage()
    ]


def fill(path, n: int = 300) -> None:
    with ResponseCache(path) as cache:
        for i in range(n):
            cache.put(f"k{i}", "openai", "gpt-4o-mini", {"text": "x" * 500, "status": "ok"})


@pytest.fixture
def server():
    with MockLLMServer(responders.fixed("1")) as srv:
        yield srv


async def test_a_file_that_is_not_a_database_is_skipped_with_one_warning(server, tmp_path, caplog):
    path = tmp_path / "cache.sqlite"
    junk = b"this is not a database " * 400
    path.write_bytes(junk)
    async with LLMClient(config(server, path)) as client:
        results = [await client.chat(msgs(i % 2)) for i in range(4)]
    assert all(r.ok and not r.cached and r.cache_key is None for r in results)
    assert server.calls == 4  # no cache: every call asks
    (warning,) = warnings_about_cache(caplog)
    assert str(path) in warning and "judge cache clear" in warning and SECRET not in warning
    assert path.read_bytes() == junk  # the file is left as it was


async def test_a_partly_damaged_cache_is_left_behind_mid_run(server, tmp_path, caplog):
    path = tmp_path / "cache.sqlite"
    fill(path)
    data = bytearray(path.read_bytes())
    page = 4096
    assert len(data) > 20 * page
    data[page:] = b"\xa5" * (len(data) - page)  # keep the header and schema page, damage the rest
    path.write_bytes(bytes(data))
    async with LLMClient(config(server, path)) as client:
        results = [await client.chat(msgs(i)) for i in range(3)]
    assert all(r.ok for r in results) and server.calls == 3
    assert len(warnings_about_cache(caplog)) == 1


@pytest.mark.slow
async def test_a_full_disk_stops_storing_not_the_run(server, tmp_path, caplog):
    path = tmp_path / "cache.sqlite"
    async with LLMClient(config(server, path)) as client:
        first = await client.chat(msgs(0))
        (pages,) = client._cache.db._conn.execute("PRAGMA page_count").fetchone()
        client._cache.db._conn.execute(f"PRAGMA max_page_count = {pages}")  # SQLite's "disk is full"
        rest = [await client.chat(msgs(i)) for i in range(1, 200)]  # stores fill the last page
        again = await client.chat(msgs(0))  # still read
    assert first.ok and all(r.ok for r in rest) and again.cached
    (warning,) = warnings_about_cache(caplog)
    assert "going on without storing answers" in warning


async def test_a_read_only_cache_is_read_and_not_written(server, tmp_path, caplog):
    path = tmp_path / "cache.sqlite"
    async with LLMClient(config(server, path)) as client:
        await client.chat(msgs(0))
        client._cache.db._conn.execute(
            "PRAGMA query_only = ON"
        )  # writes fail: "attempt to write a readonly database"
        hit = await client.chat(msgs(0))
        new = await client.chat(msgs(1))
        assert client.forget(hit) is False
    assert hit.cached and new.ok and not new.cached
    assert len(warnings_about_cache(caplog)) == 1


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root ignores file permissions")
async def test_a_read_only_cache_file_does_not_stop_the_run(server, tmp_path, caplog):
    path = tmp_path / "cache.sqlite"
    fill(path, 3)
    path.chmod(0o444)
    tmp_path.chmod(0o555)
    try:
        async with LLMClient(config(server, path)) as client:
            res = await client.chat(msgs(0))
    finally:
        tmp_path.chmod(0o755)
    assert res.ok and len(warnings_about_cache(caplog)) == 1


def test_a_value_nested_too_deeply_is_a_miss(tmp_path):
    path = tmp_path / "cache.sqlite"
    with ResponseCache(path) as cache:
        cache._conn.execute(
            "INSERT INTO responses(key, backend, model, created, value) VALUES ('deep', 'b', 'm', 0, ?)",
            ("[" * 100_000 + "]" * 100_000,),
        )
        assert cache.get("deep") is None


@pytest.mark.slow
def test_cache_clear_deletes_a_file_it_cannot_read(tmp_path):
    path = tmp_path / "cache.sqlite"
    path.write_bytes(b"garbage " * 1000)
    wal = tmp_path / "cache.sqlite-wal"
    wal.write_bytes(b"more garbage")
    res = judge("cache", "stats", "--cache", str(path))
    assert res.returncode == 2 and "judge cache clear" in res.stderr
    res = judge("cache", "clear", "--cache", str(path), "--model", "gpt-4o", "--yes")
    assert res.returncode == 2 and "without --model" in res.stderr and path.exists()
    res = judge("cache", "clear", "--cache", str(path), input="y\nn\n")
    assert res.returncode == 1 and "cannot be read as a reljudge cache" in res.stdout + res.stderr
    assert path.exists()
    res = judge("cache", "clear", "--cache", str(path), "--yes")
    assert res.returncode == 0 and "deleted the damaged cache" in res.stdout
    assert not path.exists() and not wal.exists()


def test_cache_clear_still_clears_a_good_cache(tmp_path):
    path = tmp_path / "cache.sqlite"
    fill(path, 3)
    res = judge("cache", "clear", "--cache", str(path), "--yes")
    assert res.returncode == 0 and "deleted 3 entries" in res.stdout
    with ResponseCache(path) as cache:
        assert cache.stats().entries == 0


@pytest.mark.slow
def test_a_run_goes_on_with_a_damaged_cache(tmp_path):
    from _cli import judge
    from _reliability import make_dataset, run_args, sandbox

    data = make_dataset(tmp_path / "data", 1, 3)
    cache = tmp_path / "cache.sqlite"
    cache.write_bytes(b"not sqlite " * 500)
    with MockLLMServer() as srv:
        proc = judge(
            *run_args(srv.openai_url, tmp_path / "out", data, "--cache", str(cache)),
            cwd=tmp_path,
            env=sandbox(tmp_path),
        )
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr and "sqlite3" not in proc.stderr
    lines = (tmp_path / "out" / "judgments.jsonl").read_text().splitlines()
    assert len(lines) == 3 and all(json.loads(line)["status"] == "ok" for line in lines)


def test_sqlite_errors_are_what_the_cache_raises(tmp_path):
    path = tmp_path / "junk.sqlite"
    path.write_bytes(b"x" * 5000)
    with pytest.raises(sqlite3.Error):
        ResponseCache(path)
