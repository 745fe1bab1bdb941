"""Where a pass's request lines go, the sinks of the collect mode
(`reljudge.llm.batch.collect.BatchCollector`): one request file (`RequestFile`), or request files
split into shards by topic (`ShardedRequestFiles`), for running a job's requests on several
machines (one ``vllm run-batch`` per GPU node, say) with every request of a topic on the same one.

The prompts of one topic share their beginning (the instructions and the query), so keeping a
topic's requests together lets an engine's prefix cache serve that shared part once. A judge's
chat says which topic it is about through `reljudge.llm.batch.collect.REQUEST_TOPIC` (set by
`reljudge.judges.context.JudgeContext.chat` to the query text); `ShardedRequestFiles` sends each
request line to the shard its topic hashes to, or -- for a chat that names no topic -- the shard
its custom_id hashes to. The assignment is stable: the same topic goes to the same shard in every
pass and on every machine.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import IO

from reljudge.llm.batch.collect import REQUEST_TOPIC
from reljudge.llm.batch.lines import request_custom_id

#: the most shards a job's requests are split into
MAX_SHARDS = 4096


class RequestFile:
    """Request lines appended to one file as they are collected (never held in memory)."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._handle: IO[bytes] | None = self.path.open("wb")
        self.lines = 0
        self.bytes = 0

    def write(self, line: bytes) -> None:
        assert self._handle is not None, "the request file is closed"
        self._handle.write(line)
        self.lines += 1
        self.bytes += len(line)

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None


def shard_of(topic: str | None, custom_id: str, shards: int) -> int:
    """The shard (0 .. shards-1) of a request: by its topic, else by its custom_id."""
    if shards <= 1:
        return 0
    text = topic if topic is not None else custom_id
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()
    return int.from_bytes(digest[:8], "big") % shards


def shard_name(index: int, shards: int) -> str:
    """The file name of shard ``index`` (``requests-003-of-008.jsonl``)."""
    width = max(3, len(str(shards)))
    return f"requests-{index:0{width}d}-of-{shards:0{width}d}.jsonl"


class ShardedRequestFiles:
    """Request lines written to ``shards`` files in ``directory`` as they are collected (each
    file opened when its first line comes; never a line held in memory)."""

    def __init__(self, directory: Path, shards: int) -> None:
        if not 1 <= shards <= MAX_SHARDS:
            raise ValueError(f"the number of shards must be between 1 and {MAX_SHARDS}, not {shards}")
        self.directory = Path(directory)
        self.shards = shards
        self.lines = [0] * shards
        self.bytes = [0] * shards
        self._handles: dict[int, IO[bytes]] = {}

    def path(self, index: int) -> Path:
        return self.directory / shard_name(index, self.shards)

    def write(self, line: bytes) -> None:
        index = shard_of(REQUEST_TOPIC.get(), request_custom_id(line), self.shards)
        handle = self._handles.get(index)
        if handle is None:
            self.directory.mkdir(parents=True, exist_ok=True)
            handle = self._handles[index] = self.path(index).open("wb")
        handle.write(line)
        self.lines[index] += 1
        self.bytes[index] += len(line)

    def written(self) -> list[Path]:
        """The shard files that received lines, in shard order."""
        return [self.path(i) for i in sorted(self._handles)]

    def close(self) -> None:
        for handle in self._handles.values():
            handle.close()
        self._handles = {}
