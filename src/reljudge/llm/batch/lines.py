"""The OpenAI batch JSONL format, with nothing but bytes and JSON: request lines, output lines,
and reading a file line by line with a bound on each line.

A request line is ``{"custom_id", "method": "POST", "url": "/v1/chat/completions", "body"}``;
reljudge's ``custom_id`` is the request's response-cache key (64 hexadecimal digits), so an
answer is stored where the synchronous path would look for it. An output line (OpenAI's output
and error files, ``vllm run-batch``) is ``{"id", "custom_id", "response": {"status_code",
"request_id", "body"}, "error"}``; `parse_output_line` checks its shape and never trusts it:
anything else is a `BadLine`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO, Any, TypeGuard

from reljudge.llm.types import MAX_ERROR_CHARS, MAX_RESPONSE_BYTES

CHAT_URL = "/v1/chat/completions"
#: the longest output line read: a response body as large as a synchronous answer may be, plus
#: the line's own fields; a longer line is skipped unread (`bounded_lines`)
MAX_OUTPUT_LINE_BYTES = MAX_RESPONSE_BYTES + 64 * 1024
#: the provider's limits on one batch's input file (OpenAI: 50,000 requests, 200 MB)
MAX_REQUESTS_PER_BATCH = 50_000
MAX_BATCH_FILE_BYTES = 200 * 1000 * 1000
_CUSTOM_ID = re.compile(r"[0-9a-f]{64}")


class BadLine(ValueError):
    """An output line that is not one (not JSON, not an object, no usable custom_id, ...)."""


def is_custom_id(value: Any) -> TypeGuard[str]:
    """Whether ``value`` is a custom_id reljudge writes (a response-cache key)."""
    return isinstance(value, str) and _CUSTOM_ID.fullmatch(value) is not None


def request_line(custom_id: str, body: dict[str, Any]) -> bytes:
    """One request line (with its newline) for ``body``, the chat-completions request body."""
    line = {"custom_id": custom_id, "method": "POST", "url": CHAT_URL, "body": body}
    return json.dumps(line, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"


def request_custom_id(raw: bytes) -> str:
    """The custom_id of a request line reljudge wrote (`BadLine` for anything else)."""
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):
        raise BadLine("a request line is not JSON") from None
    value = data.get("custom_id") if isinstance(data, dict) else None
    if not is_custom_id(value):
        raise BadLine("a request line has no reljudge custom_id")
    return value


@dataclass(frozen=True)
class OutputLine:
    """One output or error line: its custom_id and either a response (HTTP status and the body,
    decoded JSON, unchecked) or an error message (``status_code`` None)."""

    custom_id: str
    status_code: int | None
    body: Any = None
    error: str | None = None

    @property
    def answered(self) -> bool:
        """A 200 response: its body should be a chat completion."""
        return self.status_code == 200 and self.error is None


def parse_output_line(raw: bytes | str) -> OutputLine:
    """The `OutputLine` of one line of an output or error file; `BadLine` when it is none."""
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError) as err:
        raise BadLine(f"not JSON ({type(err).__name__})") from None
    if not isinstance(data, dict):
        raise BadLine("not a JSON object")
    custom_id = data.get("custom_id")
    if not is_custom_id(custom_id):
        raise BadLine("no custom_id of a reljudge request")
    response = data.get("response")
    error = data.get("error")
    if error is not None:
        return OutputLine(custom_id, _status(response), None, _message(error, "the batch reported an error"))
    if not isinstance(response, dict):
        raise BadLine("neither a response nor an error")
    status = _status(response)
    if status is None:
        raise BadLine("the response has no HTTP status code")
    body = response.get("body")
    if status != 200:
        inner = body.get("error", body) if isinstance(body, dict) else body
        return OutputLine(custom_id, status, None, _message(inner, f"HTTP {status}"))
    return OutputLine(custom_id, status, body)


def _status(response: Any) -> int | None:
    status = response.get("status_code") if isinstance(response, dict) else None
    if isinstance(status, bool) or not isinstance(status, int) or not 100 <= status <= 599:
        return None
    return status


def _message(error: Any, default: str) -> str:
    """A provider's error (an object with code and message, or a string), as one bounded text.
    An object wrapped once in ``{"error": {...}}`` (vLLM's ``ErrorResponse``) is unwrapped."""
    if isinstance(error, dict) and "message" not in error and isinstance(error.get("error"), dict):
        error = error["error"]
    if isinstance(error, dict):
        message, code = error.get("message"), error.get("code")
        text = str(message) if isinstance(message, (str, int, float)) and message != "" else default
        if isinstance(code, (str, int)) and not isinstance(code, bool) and code != "":
            text = f"{text} [{str(code)[:100]}]"
    elif isinstance(error, str) and error:
        text = error
    else:
        text = default
    return text[:MAX_ERROR_CHARS]


class LineSplitter:
    """Lines out of a stream of byte chunks, each at most ``max_bytes``: `feed` a chunk, get the
    lines it completes; a longer line gives None and is dropped as it streams past (never held
    whole). Empty lines are skipped (`feed_numbered` gives each line with its 1-based number in
    the stream, empty lines counted)."""

    def __init__(self, max_bytes: int = MAX_OUTPUT_LINE_BYTES) -> None:
        self.max_bytes = max_bytes
        self._parts: list[bytes] = []
        self._size = 0
        self._skipping = False
        self._number = 0  # lines ended so far

    def feed(self, chunk: bytes) -> list[bytes | None]:
        return [line for _, line in self.feed_numbered(chunk)]

    def close(self) -> list[bytes | None]:
        """The last line, when the stream does not end with a newline."""
        return [line for _, line in self.close_numbered()]

    def feed_numbered(self, chunk: bytes) -> list[tuple[int, bytes | None]]:
        out: list[tuple[int, bytes | None]] = []
        start = 0
        while start < len(chunk):
            end = chunk.find(b"\n", start)
            piece = chunk[start:] if end < 0 else chunk[start : end + 1]
            start = len(chunk) if end < 0 else end + 1
            if not self._skipping:
                self._parts.append(piece)
                self._size += len(piece)
                if self._size > self.max_bytes:
                    self._parts, self._size, self._skipping = [], 0, True
            if end >= 0:
                out.extend(self._line())
        return out

    def close_numbered(self) -> list[tuple[int, bytes | None]]:
        return self._line() if self._parts or self._skipping else []

    def _line(self) -> list[tuple[int, bytes | None]]:
        self._number += 1
        if self._skipping:
            self._skipping = False
            return [(self._number, None)]
        line = b"".join(self._parts)
        self._parts, self._size = [], 0
        return [(self._number, line)] if line.strip() else []


def bounded_lines(handle: IO[bytes], max_bytes: int = MAX_OUTPUT_LINE_BYTES) -> Iterator[bytes | None]:
    """The lines of a binary file, each at most ``max_bytes``; a longer line yields None (it is
    read past in pieces, never held whole). Empty lines are skipped."""
    for _, line in numbered_lines(handle, max_bytes):
        yield line


def numbered_lines(
    handle: IO[bytes], max_bytes: int = MAX_OUTPUT_LINE_BYTES
) -> Iterator[tuple[int, bytes | None]]:
    """`bounded_lines` with each line's 1-based number in the file (for ``FILE:LINE`` errors)."""
    splitter = LineSplitter(max_bytes)
    for chunk in iter(lambda: handle.read(1 << 20), b""):
        yield from splitter.feed_numbered(chunk)
    yield from splitter.close_numbered()
