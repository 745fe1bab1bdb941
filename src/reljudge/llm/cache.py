"""Persistent response cache: one SQLite file in WAL mode.

Key: SHA-256 of the canonical JSON of ``{v, backend, model, messages, params}``, where ``params``
are the effective decoding params: the model, the messages and the decoding parameters identify
an answer, not the server that gave it, so a cache made against one endpoint answers a replay
against another (or none: ``--cache-only``, an offline replay such as TREC AutoJudge's platform
makes of a submission). The server's URL stays in each record's provenance. Keys of the first
format (``v`` 1) also hashed the normalised base URL; the client still reads entries stored
under them (`CacheKeys.legacy`), so a cache written by an earlier version is never paid for
again. The API key is never part of the key or the stored value. Only successful answers
(``ok``) are stored.

This class reports every SQLite failure (a file that is not a database, a damaged page, a
read-only file, a full disk) as ``sqlite3.Error``; the client (`reljudge.llm.optional_cache`)
turns them into one warning and goes on without the cache, and ``judge cache clear`` can delete a
file this class cannot open.

Safe under concurrency: each process opens its own connection; WAL lets readers run while one
writer writes, ``busy_timeout`` makes concurrent writers wait instead of failing, and
``INSERT OR REPLACE`` of an identical key is idempotent. Within one process a lock serialises use
of the shared connection. Reads are point lookups on the primary key (tens of microseconds) and
run inline on the event loop; writes run in a worker thread, since one may wait for another
process's write (``busy_timeout``).
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reljudge.errors import InputError
from reljudge.records import canonical_json, sha256_text

#: the key format: 2 = without the base URL (1 hashed it too: `legacy_cache_key`)
CACHE_FORMAT = 2

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    backend TEXT NOT NULL,
    model TEXT NOT NULL,
    created REAL NOT NULL,
    value TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS responses_model ON responses(model);
"""


def cache_key(backend: str, model: str, messages: list[dict[str, str]], params: dict[str, Any]) -> str:
    payload = {"v": CACHE_FORMAT, "backend": backend, "model": model, "messages": messages, "params": params}
    return sha256_text(canonical_json(payload))


def legacy_cache_key(
    backend: str, model: str, base_url: str, messages: list[dict[str, str]], params: dict[str, Any]
) -> str:
    """The key of the first format, which also hashed the normalised base URL."""
    payload = {
        "v": 1,
        "backend": backend,
        "model": model,
        "base_url": base_url,
        "messages": messages,
        "params": params,
    }
    return sha256_text(canonical_json(payload))


class CacheKeys:
    """`cache_key` for one (backend, model), from the messages' canonical JSON, and the
    `legacy_cache_key` of the same call at ``base_url``.

    The client hashes the canonical JSON of the messages for provenance anyway; the key's JSON
    is that text with the fixed fields around it (keys in sorted order, as `canonical_json`
    writes them), so the messages are serialised once per call. Same keys as `cache_key`.
    """

    def __init__(self, backend: str, model: str, base_url: str) -> None:
        self.base_url = base_url
        self._head = f'{{"backend":{canonical_json(backend)},"messages":'
        self._legacy_head = (
            f'{{"backend":{canonical_json(backend)},"base_url":{canonical_json(base_url)},"messages":'
        )
        self._middle = f',"model":{canonical_json(model)},"params":'
        self._tail = f',"v":{canonical_json(CACHE_FORMAT)}}}'
        self._legacy_tail = ',"v":1}'

    def key(self, messages_json: str, params: dict[str, Any]) -> str:
        """The key of a call whose messages serialise to ``messages_json`` (`canonical_json`)."""
        return sha256_text(self._head + messages_json + self._middle + canonical_json(params) + self._tail)

    def legacy(self, messages_json: str, params: dict[str, Any]) -> str:
        """The same call's key in the first format (with the base URL), for entries stored by an
        earlier version."""
        return sha256_text(
            self._legacy_head + messages_json + self._middle + canonical_json(params) + self._legacy_tail
        )


def cache_files(path: Path) -> list[Path]:
    """The files of the cache ``path``: the database and SQLite's -wal, -shm and -journal files
    (those that exist or not)."""
    return [path, *(Path(f"{path}{suffix}") for suffix in ("-wal", "-shm", "-journal"))]


def delete_cache_file(path: Path) -> None:
    """Delete the cache file ``path`` and its SQLite side files, also one that cannot be opened
    as a cache (damaged, not a database); a file that cannot be deleted is an `InputError`."""
    for file in cache_files(path):
        try:
            file.unlink()
        except FileNotFoundError:
            pass
        except OSError as exc:
            raise InputError(f"cannot delete {file}: {exc.strerror or exc}", file) from None


@dataclass
class CacheStats:
    path: Path
    entries: int
    size_bytes: int
    by_model: dict[str, int]  # "backend/model" -> entries


class ResponseCache:
    """A key -> JSON value store in SQLite (see the module docstring)."""

    def __init__(self, path: str | Path, *, timeout_s: float = 30.0) -> None:
        self.path = Path(path).expanduser()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(
            str(self.path), timeout=timeout_s, check_same_thread=False, isolation_level=None
        )
        self._conn.execute(f"PRAGMA busy_timeout = {int(timeout_s * 1000)}")
        self._conn.execute("PRAGMA journal_mode = WAL")
        self._conn.execute("PRAGMA synchronous = NORMAL")
        self._conn.executescript(_SCHEMA)

    def get(self, key: str) -> dict[str, Any] | None:
        with self._lock:
            row = self._conn.execute("SELECT value FROM responses WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        try:
            value = json.loads(row[0]) if isinstance(row[0], (str, bytes)) else None
        except (ValueError, RecursionError):
            return None  # a damaged entry is a miss; it is overwritten on the next store
        return value if isinstance(value, dict) else None

    def put(self, key: str, backend: str, model: str, value: dict[str, Any]) -> None:
        data = json.dumps(value, ensure_ascii=False, sort_keys=True)
        with self._lock:
            self._conn.execute(
                "INSERT OR REPLACE INTO responses(key, backend, model, created, value) VALUES (?, ?, ?, ?, ?)",
                (key, backend, model, time.time(), data),
            )

    def put_many(self, rows: list[tuple[str, str, str, dict[str, Any]]]) -> None:
        """`put` of many ``(key, backend, model, value)`` rows in one transaction."""
        now = time.time()
        data = [(k, b, m, now, json.dumps(v, ensure_ascii=False, sort_keys=True)) for k, b, m, v in rows]
        with self._lock:
            self._conn.execute("BEGIN")
            try:
                self._conn.executemany(
                    "INSERT OR REPLACE INTO responses(key, backend, model, created, value) VALUES (?, ?, ?, ?, ?)",
                    data,
                )
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")

    def delete(self, key: str) -> bool:
        """Remove one entry; True when it existed."""
        with self._lock:
            cur = self._conn.execute("DELETE FROM responses WHERE key = ?", (key,))
        return cur.rowcount > 0

    def stats(self) -> CacheStats:
        with self._lock:
            (entries,) = self._conn.execute("SELECT COUNT(*) FROM responses").fetchone()
            rows = self._conn.execute(
                "SELECT backend, model, COUNT(*) FROM responses GROUP BY backend, model ORDER BY 3 DESC, 1, 2"
            ).fetchall()
        size = sum(p.stat().st_size for p in self._files() if p.exists())
        return CacheStats(self.path, int(entries), size, {f"{b}/{m}": int(n) for b, m, n in rows})

    def clear(self, model: str | None = None) -> int:
        """Delete all entries, or those of one model (``backend/model`` or bare model name).
        Returns the number deleted."""
        with self._lock:
            if model is None:
                cur = self._conn.execute("DELETE FROM responses")
            else:
                backend, sep, name = model.partition("/")
                cur = self._conn.execute(
                    "DELETE FROM responses WHERE model = ? OR (backend = ? AND model = ?)",
                    (model, backend, name if sep else ""),
                )
            deleted = cur.rowcount
            self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            if model is None:
                self._conn.execute("VACUUM")
        return int(deleted)

    def _files(self) -> list[Path]:
        return cache_files(self.path)

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> ResponseCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
