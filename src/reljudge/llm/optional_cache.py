"""The response cache as the client uses it: optional equipment, and what an entry holds.

A cache file that cannot be opened, read or written (damaged, read-only, disk full: every SQLite
failure of `ResponseCache`) is reported once (a logging warning) and the job goes on without it
(or without storing); the file is left as it is (``judge cache clear --yes`` deletes a damaged
one). Only a whole, good answer is stored (`cacheable`), and a stored value is an answer only
when its fields are of the right types (`valid_entry`): anything else is a miss.

A batch job cannot go on without its cache (its answers come back through it: going on would
collect and pay again what its batches answered), so a batch session makes its cache ``strict``:
the first failure raises `CacheFailed` (exit code 2), which stops the pass before anything it
collected is sent and says how to go on (move the file away; the same command reads the answers
of the run's batches again from the provider, `reljudge.run.batch.passes`). Batch output is
stored through the same guard (`OptionalCache.put_many`).
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from reljudge.errors import InputError
from reljudge.llm.backends.base import clamp_tokens, clean_logprobs
from reljudge.llm.cache import ResponseCache
from reljudge.llm.types import MAX_ANSWER_CHARS, ChatResult

log = logging.getLogger("reljudge.llm")


class CacheFailed(InputError):
    """A strict cache (a batch job's) cannot be read or written: the job stops here; the
    message names the file and how to go on."""


class OptionalCache:
    """The response cache at ``path`` (None, or ``enabled=False``: no cache) of one client.

    ``db`` is the open `ResponseCache`, or None (none, not opened yet, or given up after
    trouble); ``writable`` turns False after the first trouble. ``redact`` makes an error
    message fit to keep (the client's known secrets masked)."""

    def __init__(self, path: Path | None, enabled: bool, redact: Callable[[str], str]) -> None:
        self.path = path
        self.enabled = enabled
        self.db: ResponseCache | None = None
        self.writable = True
        #: a failure raises `CacheFailed` instead of going on without the cache (a batch job)
        self.strict = False
        self._warned = False
        self._redact = redact

    def open(self) -> None:
        """Open the cache file, unless it is open, off, or was given up."""
        if self.db is None and not self._warned and self.enabled and self.path is not None:
            try:
                self.db = ResponseCache(self.path)
            except (sqlite3.Error, OSError) as err:  # damaged, read-only, no room: go on without
                self._trouble("opened", err)

    def close(self) -> None:
        if self.db is not None:
            try:
                self.db.close()
            except sqlite3.Error:
                pass
            self.db = None

    def get(self, key: str) -> dict[str, Any] | None:
        """A valid cached entry for ``key`` (`valid_entry`), or None: a miss, a damaged entry, or
        a cache that cannot be read (then the client goes on without it)."""
        assert self.db is not None
        try:
            hit = self.db.get(key)
        except sqlite3.Error as err:
            self._trouble("read", err)
            return None
        return valid_entry(hit) if hit is not None else None

    async def store(self, key: str, backend: str, model: str, result: ChatResult) -> None:
        """Commit a good answer (`cacheable`) to the cache, in a worker thread."""
        if self.db is None or not self.writable or not cacheable(result):
            return
        try:
            await asyncio.to_thread(self.db.put, key, backend, model, cache_entry(result))
        except sqlite3.Error as err:  # a full disk or a locked file must not lose the answer
            self._trouble("written", err, reads_too=False)

    def put_many(self, rows: list[tuple[str, str, str, dict[str, Any]]]) -> None:
        """Commit ``(key, backend, model, entry)`` rows (validated answers: batch output) in one
        transaction; nothing when the cache is off or given up."""
        if self.db is None or not self.writable:
            if self.strict:
                raise self._failed("written", "it was given up")
            return
        try:
            self.db.put_many(rows)
        except sqlite3.Error as err:
            self._trouble("written", err, reads_too=False)

    def forget(self, key: str) -> bool:
        """Drop the entry of ``key``; True when an entry was removed."""
        if self.db is None or not self.writable:
            return False
        try:
            return self.db.delete(key)
        except sqlite3.Error as err:
            self._trouble("written", err, reads_too=False)
            return False

    def _trouble(self, what: str, err: BaseException, *, reads_too: bool = True) -> None:
        """Warn once that the cache cannot be used, and go on without it (``reads_too=False``:
        still read it, but store nothing more, e.g. on a full disk); a strict cache raises
        `CacheFailed` instead."""
        if self.strict:
            self.writable = False
            self.close()
            raise self._failed(what, self._redact(str(err) or type(err).__name__))
        if not self._warned:
            self._warned = True
            log.warning(
                "the response cache %s cannot be %s (%s); going on without %s. "
                "A damaged cache file can be deleted with: judge cache clear --cache %s --yes",
                self.path,
                what,
                self._redact(str(err) or type(err).__name__),
                "it" if reads_too else "storing answers",
                self.path,
            )
        self.writable = False
        if reads_too:
            self.close()

    def _failed(self, what: str, why: str) -> CacheFailed:
        path = self.path
        return CacheFailed(
            f"the response cache {path} cannot be {what} ({why}). A batch run keeps the answers of its "
            "batches there, so it stops here, before sending anything more. If the disk is full, free space; "
            f"if the file is damaged, move it away (with its -wal and -shm files, if any) or delete it "
            f"(judge cache clear --cache {path} --yes). Then run the same command: the records written are "
            "kept and the answers of this run's batches are read again from the "
            "provider"
        )


def valid_entry(hit: Any) -> dict[str, Any] | None:
    """A cached value as the client stores it, with its fields of the right types, or None (a
    value that is not a valid entry is a miss: never ``str()`` it into an answer)."""
    if not isinstance(hit, dict) or hit.get("status", "ok") != "ok":
        return None
    text = hit.get("text")
    if not isinstance(text, str) or len(text) > MAX_ANSWER_CHARS:
        return None
    finish = hit.get("finish_reason")
    logprobs = hit.get("logprobs")
    if logprobs is not None and not isinstance(logprobs, list):
        return None
    return {
        "text": text,
        "finish_reason": finish if isinstance(finish, str) else None,
        "prompt_tokens": clamp_tokens(hit.get("prompt_tokens")),
        "completion_tokens": clamp_tokens(hit.get("completion_tokens")),
        "logprobs": clean_logprobs(logprobs),
    }


def cacheable(result: ChatResult) -> bool:
    """Only a whole, good answer is stored (and its fields are what `valid_entry` accepts)."""
    return result.status == "ok" and not result.oversized and isinstance(result.text, str)


def cache_entry(result: ChatResult) -> dict[str, Any]:
    """What the response cache stores of a `cacheable` result."""
    return {
        "text": result.text,
        "status": result.status,
        "error": result.error,
        "finish_reason": result.finish_reason,
        "prompt_tokens": result.usage.prompt_tokens,
        "completion_tokens": result.usage.completion_tokens,
        "logprobs": result.logprobs,
        "stored": time.time(),
    }
