"""A provider's Batch API through the official `openai` SDK: OpenAI, or any OpenAI-compatible
server that implements ``/v1/files`` and ``/v1/batches``.

Everything a provider sends is bounded: a batch's request counts are clamped, its status must be
one of OpenAI's, a file's content is read as a stream of lines (`LineSplitter`: one line at most
`MAX_OUTPUT_LINE_BYTES`, the whole file at most ``max_download_bytes`` and at most what the caller
says the file can hold: a wave's requests times the longest line), a listing is read for at most
`MAX_LIST_ITEMS` items. Errors are `ProviderError`s with the client's secrets masked.

Every call has a total deadline, whatever the provider sends and however slowly (`Deadlines`): a
call (its reads and the SDK's retries included; a listing: every page) ends within
`CALL_TIMEOUTS` times ``timeout_s``, a transfer (an upload, a file's content) must also keep an
average of `MIN_TRANSFER_RATE` bytes a second beyond its first ``timeout_s``, and nothing outlives
``deadline`` (the runner's: what is left of ``--batch-max-wait``) by more than `MIN_CALL_S` (the
least a call started near it has). A call cut off raises `CallTimedOut`.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TypeVar

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
#: the longest one call may take, in ``timeout_s`` (the client's timeout: each read's)
CALL_TIMEOUTS = 2
#: the slowest average an upload or a download may keep (bytes a second, beyond its first ``timeout_s``)
MIN_TRANSFER_RATE = 64 * 1024
#: the least time a call has, even when ``deadline`` is nearer (a short wait still lets a poll through)
MIN_CALL_S = 2.0

T = TypeVar("T")


class CallTimedOut(ProviderError):
    """A call to the Batch API did not end within its deadline. ``waited``: the deadline was the
    caller's (what is left of ``--batch-max-wait``), not the call's own bound."""

    def __init__(self, message: str, *, waited: bool) -> None:
        super().__init__("timeout", message)
        self.waited = waited


class WaveLost(ProviderError):
    """A wave whose batch the provider may have made cannot be found: it is not sent again, and
    the same command stops here again (``resumes`` False) until the user says to send it again."""

    resumes = False

    def __init__(self, message: str) -> None:
        super().__init__("other", message)


def refused(err: ProviderError) -> bool:
    """Whether a failed create certainly made no batch: the provider refused the request (a 4xx
    but 408 and 409, which may come after it acted). A timeout, a 5xx or a lost connection may
    come after the provider made the batch."""
    code = err.status_code
    return code is not None and 400 <= code < 500 and code not in (408, 409)


class Deadlines:
    """The deadlines of a batch service's calls (see the module docstring). ``deadline``: the
    `time.monotonic` by which every call must have ended (None: only each call's own bound)."""

    timeout_s: float = 300.0
    deadline: float | None = None
    #: the bytes after which the last file read (`lines`) was cut, None when read to its end
    cut: int | None = None

    def _end(self, cap_s: float) -> tuple[float, bool]:
        """When a call started now must end (monotonic), and whether ``deadline`` is what set it
        (never less than `MIN_CALL_S` from now)."""
        now = time.monotonic()
        end = now + cap_s
        if self.deadline is not None and self.deadline <= end:
            return max(self.deadline, now + min(MIN_CALL_S, cap_s)), True
        return end, False

    async def _within(self, what: str, call: Awaitable[T], *, size: int = 0, end: float | None = None) -> T:
        """``await call``, cut off at its deadline (`CallTimedOut`): the call's bound (its
        ``size`` in bytes allows for a transfer), ``deadline``, or ``end`` when given."""
        waited = False
        if end is None:
            end, waited = self._end(CALL_TIMEOUTS * self.timeout_s + size / MIN_TRANSFER_RATE)
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout_at(loop.time() + (end - time.monotonic())):
                return await call
        except TimeoutError:
            raise CallTimedOut(
                f"{what}: no whole answer in time", waited=waited or self._past_deadline()
            ) from None

    def _past_deadline(self) -> bool:
        return self.deadline is not None and time.monotonic() >= self.deadline

    def _transfer_end(self, started: float, read: int) -> float:
        """When a transfer that started at ``started`` and has read ``read`` bytes must have read
        its next bytes (`MIN_TRANSFER_RATE`; never beyond the call's bound or ``deadline``)."""
        end = started + self.timeout_s + read / MIN_TRANSFER_RATE
        return end if self.deadline is None else min(end, max(self.deadline, started + MIN_CALL_S))

    async def _chunk(self, what: str, chunks: AsyncIterator[T], started: float, read: int) -> T:
        """The next chunk of a transfer, in time (`_transfer_end`); StopAsyncIteration at its end."""
        return await self._within(what, chunks.__anext__(), end=self._transfer_end(started, read))


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


class BatchService(Deadlines):
    """Upload, create, find, poll and read batches at ``base_url`` (None: OpenAI's), each call
    within its deadline (`Deadlines`)."""

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
        self.timeout_s = timeout_s
        self._redact = redact

    async def aclose(self) -> None:
        await self._client.close()

    async def _call(self, what: str, call: Any, *, size: int = 0) -> Any:
        """``await call`` within its deadline (`Deadlines`), the SDK's errors as `ProviderError` s."""
        import openai

        try:
            return await self._within(what, call, size=size)
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
                size=path.stat().st_size,
            )
        return self._id(item.id)

    async def find_file(self, filename: str) -> str | None:
        """The id of an uploaded batch file named ``filename`` (the newest), or None."""

        async def scan() -> str | None:
            found = None
            seen = 0
            async for item in await self._client.files.list(purpose="batch"):
                seen += 1
                if getattr(item, "filename", None) == filename:
                    found = self._id(item.id)
                if seen >= MAX_LIST_ITEMS:
                    break
            return found

        return await self._call("listing files", scan())  # every page within the call's deadline

    async def lines(self, file_id: str, max_bytes: int | None = None) -> AsyncIterator[bytes | None]:
        """The lines of a file's content (None for a line too long to read), streamed; at most
        ``max_download_bytes`` (and ``max_bytes``: what the file can hold) are read, each chunk
        in time (`Deadlines`)."""
        import contextlib

        import openai

        limit = self.max_download_bytes if max_bytes is None else min(max_bytes, self.max_download_bytes)
        self.cut = None
        what = f"reading {file_id}"
        splitter = LineSplitter(MAX_OUTPUT_LINE_BYTES)
        read = 0
        started = time.monotonic()
        try:
            async with contextlib.AsyncExitStack() as stack:
                opening = stack.enter_async_context(
                    self._client.files.with_streaming_response.content(file_id)
                )
                response = await self._within(what, opening, end=self._transfer_end(started, 0))
                chunks = response.iter_bytes().__aiter__()
                while True:
                    try:
                        chunk = await self._chunk(what, chunks, started, read)
                    except StopAsyncIteration:
                        break
                    room = limit - read
                    read += len(chunk)
                    for line in splitter.feed(chunk[: max(room, 0)]):
                        yield line
                    if read > limit:
                        self.cut = limit
                        return  # the cut line and the rest are never read
        except openai.APIStatusError as err:
            raise ProviderError("server", self._redact(f"reading {file_id}: {err.message}")) from None
        except openai.OpenAIError as err:
            raise ProviderError("connection", self._redact(f"reading {file_id}: {err}")) from None
        for line in splitter.close():
            yield line

    # -- batches ----------------------------------------------------------------------------
    async def create(self, file_id: str, metadata: Mapping[str, str], key: str | None = None) -> BatchInfo:
        """Create the batch of an uploaded file; ``key``: its ``Idempotency-Key`` (a provider that
        honours it answers a create sent again with the batch the first one made)."""
        batch = await self._call(
            "creating a batch",
            self._once.batches.create(
                input_file_id=file_id,
                endpoint=CHAT_URL,  # type: ignore[arg-type]
                completion_window="24h",
                metadata=dict(metadata),
                extra_headers={"Idempotency-Key": key} if key else None,
            ),
        )
        return self._checked(batch_info(batch))

    async def find_batch(
        self, metadata: Mapping[str, str], input_file_id: str | None = None
    ) -> BatchInfo | None:
        """A batch created with this metadata (every key and value), or of the input file
        ``input_file_id`` (a wave's own upload: a provider that drops metadata still names it),
        or None."""

        async def scan() -> BatchInfo | None:
            seen = 0
            async for batch in await self._client.batches.list(limit=100):
                seen += 1
                if is_batch_of(batch, metadata, input_file_id):
                    return self._checked(batch_info(batch))
                if seen >= MAX_LIST_ITEMS:
                    break
            return None

        return await self._call("listing batches", scan())  # every page within the call's deadline

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


def is_batch_of(batch: Any, metadata: Mapping[str, str], input_file_id: str | None) -> bool:
    """Whether a listed batch is the one created with ``metadata`` or from ``input_file_id``."""
    given = getattr(batch, "metadata", None) or {}
    if isinstance(given, dict) and all(given.get(k) == v for k, v in metadata.items()):
        return True
    return input_file_id is not None and getattr(batch, "input_file_id", None) == input_file_id


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


#: what an id the provider sends may hold (OpenAI's ``batch_…``/``file-…``, base64 of proxies): it
#: goes into URL paths and the batch state, so it starts with a letter or digit (never ``.`` or
#: ``..``), holds no ``/`` and is at most 200 characters
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:=+-]{0,199}")


def is_provider_id(value: Any) -> bool:
    """Whether ``value`` is an id a provider may send (see `_ID`)."""
    return isinstance(value, str) and _ID.fullmatch(value) is not None


def _text_id(value: Any) -> str:
    if not is_provider_id(value):
        raise ProviderError("invalid_response", "the provider sent an id that is not one")
    return value


def _maybe_id(value: Any) -> str | None:
    return None if value is None or value == "" else _text_id(value)
