"""A provider's Batch API through the official `openai` SDK: OpenAI, or any OpenAI-compatible
server that implements ``/v1/files`` and ``/v1/batches``.

Everything a provider sends is bounded: a batch's request counts are clamped, its status must be
one of OpenAI's, a file's content is read as a stream of lines (`LineSplitter`: one line at most
`MAX_OUTPUT_LINE_BYTES`, the whole file at most ``max_download_bytes``), a listing is read for at
most `MAX_LIST_ITEMS` items. Errors are `ProviderError`s with the client's secrets masked.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from reljudge.llm.backends.base import clamp_tokens
from reljudge.llm.batch.lines import CHAT_URL, MAX_OUTPUT_LINE_BYTES, LineSplitter
from reljudge.llm.types import ProviderError

#: what a batch can be in (OpenAI's statuses); the last four are final
STATUSES = (
    "validating",
    "in_progress",
    "finalizing",
    "cancelling",
    "completed",
    "failed",
    "expired",
    "cancelled",
)
FINAL = frozenset({"completed", "failed", "expired", "cancelled"})
#: the most files or batches read from a listing when looking for one sent before a kill
MAX_LIST_ITEMS = 10_000
#: the most bytes of one output or error file read (beyond: its other lines count as unanswered)
MAX_DOWNLOAD_BYTES = 4 * 1024 * 1024 * 1024


@dataclass(frozen=True)
class BatchInfo:
    """What a provider says of one batch (clamped)."""

    id: str
    status: str
    total: int = 0
    completed: int = 0
    failed: int = 0
    output_file_id: str | None = None
    error_file_id: str | None = None
    #: why the provider failed the batch as a whole (its ``errors``: a few messages, bounded)
    errors: str | None = None

    @property
    def final(self) -> bool:
        return self.status in FINAL


class BatchService:
    """Upload, create, find, poll and read batches at ``base_url`` (None: OpenAI's)."""

    def __init__(
        self,
        *,
        base_url: str | None,
        api_key: str | None,
        timeout_s: float = 300.0,
        max_download_bytes: int = MAX_DOWNLOAD_BYTES,
        redact: Callable[[str], str] = str,
    ) -> None:
        import os

        import openai

        key = api_key or os.environ.get("OPENAI_API_KEY") or ("EMPTY" if base_url else None)
        if not key:
            raise ValueError("no API key for the batch API: set OPENAI_API_KEY or --api-key-env")
        self._client = openai.AsyncOpenAI(api_key=key, base_url=base_url, timeout=timeout_s, max_retries=3)
        #: for what must not happen twice (an upload, a batch's creation): no retry by the SDK, which
        #: sends no idempotency key -- a timeout after the provider acted would make a second file
        #: or batch, paid twice. A failure ends the run; the same command looks the file or batch
        #: up by name or metadata before it sends again (`reljudge.run.batch.passes`).
        self._once = self._client.with_options(max_retries=0)
        self.max_download_bytes = max_download_bytes
        self._redact = redact

    async def aclose(self) -> None:
        await self._client.close()

    async def _call(self, what: str, call: Any) -> Any:
        import openai

        try:
            return await call
        except openai.APIStatusError as err:
            raise ProviderError(
                "bad_request" if 400 <= err.status_code < 500 else "server",
                self._redact(f"{what}: {err.message}"),
                status_code=err.status_code,
            ) from None
        except openai.OpenAIError as err:
            raise ProviderError("connection", self._redact(f"{what}: {err}")) from None

    # -- files ------------------------------------------------------------------------------
    async def upload(self, path: Path, filename: str) -> str:
        """Upload a request file (``purpose="batch"``) under ``filename``; its file id."""
        with path.open("rb") as handle:
            item = await self._call(
                "uploading " + filename,
                self._once.files.create(file=(filename, handle, "application/jsonl"), purpose="batch"),
            )
        return self._id(item.id)

    async def find_file(self, filename: str) -> str | None:
        """The id of an uploaded batch file named ``filename`` (the newest), or None."""
        found = None
        seen = 0
        page = await self._call("listing files", self._client.files.list(purpose="batch"))
        async for item in page:
            seen += 1
            if getattr(item, "filename", None) == filename:
                found = self._id(item.id)
            if seen >= MAX_LIST_ITEMS:
                break
        return found

    async def lines(self, file_id: str) -> AsyncIterator[bytes | None]:
        """The lines of a file's content (None for a line too long to read), streamed; at most
        ``max_download_bytes`` are read."""
        import openai

        splitter = LineSplitter(MAX_OUTPUT_LINE_BYTES)
        read = 0
        try:
            async with self._client.files.with_streaming_response.content(file_id) as response:
                async for chunk in response.iter_bytes():
                    room = self.max_download_bytes - read
                    read += len(chunk)
                    for line in splitter.feed(chunk[:room]):
                        yield line
                    if read > self.max_download_bytes:
                        return  # the cut line and the rest are never read
        except openai.APIStatusError as err:
            raise ProviderError("server", self._redact(f"reading {file_id}: {err.message}")) from None
        except openai.OpenAIError as err:
            raise ProviderError("connection", self._redact(f"reading {file_id}: {err}")) from None
        for line in splitter.close():
            yield line

    # -- batches ----------------------------------------------------------------------------
    async def create(self, file_id: str, metadata: Mapping[str, str]) -> BatchInfo:
        batch = await self._call(
            "creating a batch",
            self._once.batches.create(
                input_file_id=file_id,
                endpoint=CHAT_URL,  # type: ignore[arg-type]
                completion_window="24h",
                metadata=dict(metadata),
            ),
        )
        return self._checked(batch_info(batch))

    async def find_batch(self, metadata: Mapping[str, str]) -> BatchInfo | None:
        """A batch created with this metadata (every key and value), or None."""
        seen = 0
        page = await self._call("listing batches", self._client.batches.list(limit=100))
        async for batch in page:
            seen += 1
            given = getattr(batch, "metadata", None) or {}
            if isinstance(given, dict) and all(given.get(k) == v for k, v in metadata.items()):
                return self._checked(batch_info(batch))
            if seen >= MAX_LIST_ITEMS:
                break
        return None

    async def retrieve(self, batch_id: str) -> BatchInfo:
        batch = await self._call("polling " + batch_id, self._client.batches.retrieve(batch_id))
        return self._checked(batch_info(batch))

    async def cancel(self, batch_id: str) -> BatchInfo:
        batch = await self._call("cancelling " + batch_id, self._client.batches.cancel(batch_id))
        return self._checked(batch_info(batch))

    # -- what the provider sends back ------------------------------------------------------------
    def _id(self, value: Any) -> str:
        return checked_id(value, self._redact)

    def _checked(self, info: BatchInfo) -> BatchInfo:
        return checked_info(info, self._redact)


def checked_id(value: Any, redact: Callable[[str], str]) -> str:
    """An id the provider sent, checked (`_text_id`) and holding no secret the client knows
    (``redact`` would change it): an id is printed and kept in the run directory's batch state,
    so an echoed key is refused."""
    text = _text_id(value)
    if redact(text) != text:
        raise ProviderError("invalid_response", "the provider sent an id holding a secret")
    return text


def checked_info(info: BatchInfo, redact: Callable[[str], str]) -> BatchInfo:
    """``info`` with its ids checked (`checked_id`) and its error messages masked."""
    for value in (info.id, info.output_file_id, info.error_file_id):
        if value is not None:
            checked_id(value, redact)
    if info.errors is not None and redact(info.errors) != info.errors:
        return replace(info, errors=redact(info.errors))
    return info


def batch_info(batch: Any) -> BatchInfo:
    """A provider's batch object, checked: a status that is none of OpenAI's is an error."""
    status = getattr(batch, "status", None)
    if status not in STATUSES:
        raise ProviderError("invalid_response", f"a batch with status {str(status)[:40]!r}")
    counts = getattr(batch, "request_counts", None)
    return BatchInfo(
        id=_text_id(getattr(batch, "id", None)),
        status=status,
        total=clamp_tokens(getattr(counts, "total", 0)),
        completed=clamp_tokens(getattr(counts, "completed", 0)),
        failed=clamp_tokens(getattr(counts, "failed", 0)),
        output_file_id=_maybe_id(getattr(batch, "output_file_id", None)),
        error_file_id=_maybe_id(getattr(batch, "error_file_id", None)),
        errors=_errors(getattr(batch, "errors", None)),
    )


def _errors(errors: Any) -> str | None:
    """The first few messages of a batch's ``errors`` (``{"data": [{"code", "message", "line"}]}``)."""
    data = getattr(errors, "data", None) if errors is not None else None
    if not isinstance(data, list) or not data:
        return None
    texts = []
    for item in data[:3]:
        message, line = getattr(item, "message", None), getattr(item, "line", None)
        if isinstance(message, str) and message:
            texts.append(f"{message[:200]}" + (f" (line {line})" if isinstance(line, int) else ""))
    return "; ".join(texts) or None


#: what an id the provider sends may hold (OpenAI's ``batch_…``/``file-…``, base64 of proxies)
_ID = re.compile(r"[A-Za-z0-9_.:=+-]{1,200}")


def _text_id(value: Any) -> str:
    if not isinstance(value, str) or _ID.fullmatch(value) is None:
        raise ProviderError("invalid_response", "the provider sent an id that is not one")
    return value


def _maybe_id(value: Any) -> str | None:
    return None if value is None or value == "" else _text_id(value)
