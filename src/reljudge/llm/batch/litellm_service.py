"""A provider's Batch API through LiteLLM's batch functions (``litellm.acreate_file``,
``acreate_batch``, ``aretrieve_batch``, ``afile_content``, ``afile_list``, ``alist_batches``,
``acancel_batch``): the second adapter of the batch service, with `BatchService`'s interface,
chosen for a ``litellm/<provider>/<model>`` model (`reljudge.llm.backends.capabilities`).

Providers (`reljudge.llm.backends.litellm.BATCH_PROVIDERS`): LiteLLM 1.106 speaks OpenAI's files
and batches for ``openai`` (OpenAI, or any server implementing ``/v1/files`` and ``/v1/batches``
at ``--base-url``) and ``litellm_proxy`` (a LiteLLM proxy). For both it streams a file's content
and lists files and batches, so the bounds and the "never twice" of `BatchService` hold. Others
are refused with the reason (`reljudge.llm.backends.litellm.batch_provider`): ``azure`` (LiteLLM
reads a whole output file into memory: no bounded download), ``vertex_ai`` and ``bedrock``
(LiteLLM rewrites their request files, so a line is not the synchronous request),
``hosted_vllm`` (LiteLLM runs those batches itself, in this process), any other (no batch API in
LiteLLM).

Quirks: the request line's ``body.model`` is the provider's name of the model (without LiteLLM's
``<provider>/``: `reljudge.llm.backends.litellm.LiteLLMBackend.batch_body`); LiteLLM's remote price map is never fetched (the chat
backend's `_import_litellm`); LiteLLM's own retries are off; its errors become `ProviderError` s
with the client's secrets masked and LiteLLM's tracebacks cut off.

Never twice without a listing: when listing fails (``can_list`` False, or the provider refuses the
listing), a wave whose upload or create may have happened before a kill is not sent again: the run
stops with a `WaveNotFound` that says which wave and how to go on.
"""

from __future__ import annotations

import functools
import time
from collections.abc import AsyncIterator, Callable, Mapping
from pathlib import Path
from typing import Any

from reljudge.llm.batch.lines import CHAT_URL, MAX_OUTPUT_LINE_BYTES, LineSplitter
from reljudge.llm.batch.service import (
    MAX_DOWNLOAD_BYTES,
    MAX_LIST_ITEMS,
    BatchInfo,
    CallTimedOut,
    Deadlines,
    WaveLost,
    batch_info,
    checked_id,
    checked_info,
    is_batch_of,
)
from reljudge.llm.types import ProviderError

#: the most items asked for per listing page
PAGE = 100


class WaveNotFound(WaveLost):
    """A wave that may have been sent before a kill cannot be looked for: it is not sent again,
    and the same command would stop here again (``resumes`` False)."""


class LitellmBatchService(Deadlines):
    """Upload, create, find, poll and read batches through LiteLLM (see the module docstring);
    the interface of `reljudge.llm.batch.service.BatchService`, each call within its deadline
    (`reljudge.llm.batch.service.Deadlines`)."""

    #: whether files and batches can be listed (to find what a killed run sent): LiteLLM lists
    #: them for every provider in `BATCH_PROVIDERS`
    can_list = True

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None,
        api_key: str | None,
        timeout_s: float = 300.0,
        max_download_bytes: int = MAX_DOWNLOAD_BYTES,
        redact: Callable[[str], str] = str,
    ) -> None:
        from reljudge.llm.backends.litellm import _import_litellm, batch_provider

        self.provider, _ = batch_provider(model)  # ValueError for the others
        self._litellm = _import_litellm()
        self._base = {
            "custom_llm_provider": self.provider,
            "timeout": timeout_s,
            "max_retries": 0,
            **({"api_base": base_url} if base_url else {}),
            **({"api_key": api_key} if api_key else {}),
        }
        self.max_download_bytes = max_download_bytes
        self.timeout_s = timeout_s
        self._redact = redact

    async def aclose(self) -> None:
        return None

    async def _call(self, what: str, call: Any, *, size: int = 0) -> Any:
        try:
            return await self._within(what, call, size=size)
        except ProviderError:
            raise
        except Exception as err:
            raise self._error(what, err) from None

    def _error(self, what: str, err: Exception) -> ProviderError:
        from reljudge.llm.backends.litellm import short_message

        status = getattr(err, "status_code", None)
        status = status if isinstance(status, int) and not isinstance(status, bool) else None
        text = self._redact(
            f"{what}: {short_message(str(getattr(err, 'message', None) or err)) or type(err).__name__}"
        )
        if status is not None and 400 <= status < 500:
            return ProviderError("bad_request", text, status_code=status)
        if status is not None and status != 500:  # litellm reports transport failures as 500
            return ProviderError("server", text, status_code=status)
        return ProviderError("connection", text)

    # -- files ------------------------------------------------------------------------------
    async def upload(self, path: Path, filename: str) -> str:
        with path.open("rb") as handle:
            item = await self._call(
                "uploading " + filename,
                self._litellm.acreate_file(
                    file=(filename, handle, "application/jsonl"), purpose="batch", **self._base
                ),
                size=path.stat().st_size,
            )
        return checked_id(getattr(item, "id", None), self._redact)

    async def find_file(self, filename: str) -> str | None:
        """The id of an uploaded batch file named ``filename`` (the newest), or None; a
        `ProviderError` when files cannot be listed (an upload may have happened: not sent again)."""
        refuse = (
            f"the upload of {filename} may have happened before the process stopped, and the files "
            "cannot be listed to find it"
        )
        items = await self._listing(
            refuse, "listing files", lambda: self._litellm.afile_list(purpose="batch", **self._base)
        )
        found = None
        for item in items[:MAX_LIST_ITEMS]:
            if getattr(item, "filename", None) == filename:
                found = checked_id(getattr(item, "id", None), self._redact)
        return found

    async def lines(self, file_id: str, max_bytes: int | None = None) -> AsyncIterator[bytes | None]:
        """A file's content as lines (None for a line too long), streamed; at most
        ``max_download_bytes`` (and ``max_bytes``: what the file can hold) are read, each chunk
        in time."""
        limit = self.max_download_bytes if max_bytes is None else min(max_bytes, self.max_download_bytes)
        self.cut = None
        splitter = LineSplitter(MAX_OUTPUT_LINE_BYTES)
        read = 0
        what = f"reading {file_id}"
        started = time.monotonic()
        opening = self._litellm.afile_content(file_id=file_id, stream=True, **self._base)
        try:
            result = await self._within(what, opening, end=self._transfer_end(started, 0))
        except ProviderError:
            raise
        except Exception as err:
            raise self._error(what, err) from None
        stream = getattr(result, "stream_iterator", None)
        if stream is None or not hasattr(stream, "__aiter__"):
            raise ProviderError("invalid_response", f"{what}: LiteLLM gave no stream of the file's content")
        try:
            chunks = stream.__aiter__()
            while True:
                try:
                    chunk = await self._chunk(what, chunks, started, read)
                except StopAsyncIteration:
                    break
                if not isinstance(chunk, (bytes, bytearray)):
                    raise ProviderError("invalid_response", f"{what}: a chunk that is not bytes")
                room = limit - read
                read += len(chunk)
                for line in splitter.feed(bytes(chunk[: max(room, 0)])):
                    yield line
                if read > limit:
                    self.cut = limit
                    return  # the cut line and the rest are never read
        except ProviderError:
            raise
        except Exception as err:
            raise self._error(what, err) from None
        finally:
            closing = getattr(stream, "aclose", None)
            if closing is not None:
                try:
                    await closing()
                except Exception:  # closing a broken stream: nothing more to read
                    pass
        for line in splitter.close():
            yield line

    # -- batches ----------------------------------------------------------------------------
    async def create(self, file_id: str, metadata: Mapping[str, str], key: str | None = None) -> BatchInfo:
        batch = await self._call(
            "creating a batch",
            self._litellm.acreate_batch(
                completion_window="24h",
                endpoint=CHAT_URL,
                input_file_id=file_id,
                metadata=dict(metadata),
                **({"extra_headers": {"Idempotency-Key": key}} if key else {}),
                **self._base,
            ),
        )
        return checked_info(batch_info(batch), self._redact)

    async def find_batch(
        self, metadata: Mapping[str, str], input_file_id: str | None = None
    ) -> BatchInfo | None:
        """A batch created with this metadata or from ``input_file_id``, or None; a `WaveNotFound`
        when batches cannot be listed (a create may have happened: not sent again)."""
        refuse = (
            f"the batch of wave {metadata.get('reljudge_wave', '?')} may have been created before the process "
            "stopped, and the batches cannot be listed to find it (if it was not, or once you cancelled it, "
            "the same command with --batch-resend-lost sends the wave again)"
        )

        async def scan() -> BatchInfo | None:
            seen = 0
            after: str | None = None
            while seen < MAX_LIST_ITEMS:
                more = {"after": after} if after else {}
                items = await self._listing(
                    refuse,
                    "listing batches",
                    functools.partial(self._litellm.alist_batches, limit=PAGE, **more, **self._base),
                )
                for batch in items:
                    if is_batch_of(batch, metadata, input_file_id):
                        return checked_info(batch_info(batch), self._redact)
                seen += len(items)
                last = getattr(items[-1], "id", None) if items else None
                if len(items) < PAGE or not isinstance(last, str) or last == after:
                    return None
                after = last
            return None

        return await self._within("listing batches", scan())  # every page within the call's deadline

    async def _listing(self, refuse: str, what: str, call: Callable[[], Any]) -> list[Any]:
        """The items of one listing page (``call()``); a `ProviderError` saying the wave is not
        sent again when there is no listing."""
        if not self.can_list:
            raise WaveNotFound(f"{refuse}; {_GO_ON}")
        try:
            page = await self._call(what, call())
        except CallTimedOut:
            raise  # no answer in time: the same command looks again
        except ProviderError as err:
            raise WaveNotFound(f"{refuse} ({err}); {_GO_ON}") from None
        data = getattr(page, "data", None)
        if data is None and isinstance(page, dict):
            data = page.get("data")
        if not isinstance(data, list):
            raise ProviderError("invalid_response", f"{what}: not a list")
        return data

    async def retrieve(self, batch_id: str) -> BatchInfo:
        call = self._litellm.aretrieve_batch(batch_id=batch_id, **self._base)
        return checked_info(batch_info(await self._call("polling " + batch_id, call)), self._redact)

    async def cancel(self, batch_id: str) -> BatchInfo:
        call = self._litellm.acancel_batch(batch_id=batch_id, **self._base)
        return checked_info(batch_info(await self._call("cancelling " + batch_id, call)), self._redact)


_GO_ON = (
    "it is not sent again, so that no request is paid twice. Look for it at the provider (metadata "
    "reljudge_run and reljudge_wave, or the file's name); to go on, cancel it there if it exists and start "
    "over in a new run directory with the same --cache (the answers already ingested are kept)"
)
