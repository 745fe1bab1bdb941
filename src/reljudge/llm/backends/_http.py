"""Guards on the HTTP exchanges of the openai and ollama backends (both speak through httpx).

* **Body size.** A response body is read through `CappedStream`: at most `MAX_RESPONSE_BYTES` of
  *decoded* body. gzip and deflate are decoded here, as the bytes stream in, with zlib's
  ``max_length``, so one compressed chunk never expands to more than the bytes still allowed (a
  200 KB gzip bomb costs a few MB, not the 200 MB it inflates to); httpx's own decoder, which has
  no bound, then sees a plain body. A bigger body raises `ResponseTooLarge` and the connection is
  closed. Requests ask for ``Accept-Encoding: gzip, deflate``; a body in another encoding is refused.
* **Redirects.** Followed only within the origin (scheme, host and port) of the request; a redirect
  to another origin raises `RedirectRefused`, so an answer from another server is never attributed
  to the configured one (httpx would follow it, minus the Authorization header).

Both are httpx event hooks (`event_hooks`): they run for every response of any transport, and for
every hop of a redirect, before httpx reads the body. The SDKs wrap what a hook raises (the openai
SDK as ``APIConnectionError``); `guard_error` finds it again in the exception's chain, and the
adapters turn it into a `ProviderError` of the guard's kind.
"""

from __future__ import annotations

import zlib
from collections.abc import AsyncIterator
from typing import Any

import httpx

from reljudge.llm.types import MAX_RESPONSE_BYTES, ProviderError

ACCEPT_ENCODING = "gzip, deflate"
_DEFAULT_PORTS = {"http": 80, "https": 443}


class GuardError(Exception):
    """A response refused by a guard; ``kind`` is the `ProviderError` kind it becomes."""

    kind = "invalid_response"

    def __init__(self, message: str, status_code: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.status_code = status_code

    def as_provider_error(self) -> ProviderError:
        return ProviderError(self.kind, self.message, status_code=self.status_code)


class ResponseTooLarge(GuardError):
    """The (decoded) body is larger than the cap. Not retried: the same request would get the same."""


class BadResponseBody(GuardError):
    """The body cannot be decoded (broken gzip, an encoding we did not ask for)."""


class RedirectRefused(GuardError):
    """A redirect to another origin (scheme, host, port)."""

    kind = "bad_request"


def guard_error(err: BaseException | None) -> GuardError | None:
    """The `GuardError` in ``err``'s chain of causes, if any (an SDK may have wrapped it)."""
    seen = 0
    while err is not None and seen < 50:  # a chain is short; the bound keeps a cycle from looping
        if isinstance(err, GuardError):
            return err
        if isinstance(err, httpx.TooManyRedirects):
            return RedirectRefused(f"too many redirects: {err}")
        err = err.__cause__ or err.__context__
        seen += 1
    return None


def origin(url: httpx.URL) -> tuple[str, str, int | None]:
    """(scheme, host, port) with the scheme's default port filled in."""
    scheme = url.scheme.lower()
    return scheme, url.host.lower(), url.port or _DEFAULT_PORTS.get(scheme)


def _show(url: httpx.URL) -> str:
    """A URL for a message: the origin and path, never credentials or the query."""
    port = f":{url.port}" if url.port else ""
    return f"{url.scheme}://{url.host}{port}{url.path}"


class _Inflater:
    """Incremental gzip/deflate decoding that never produces more than it is allowed to."""

    def __init__(self, encoding: str) -> None:
        self.encoding = encoding
        self._raw_fallback = encoding == "deflate"  # "deflate" is zlib-wrapped, or raw from some servers
        wbits = zlib.MAX_WBITS | 16 if encoding == "gzip" else zlib.MAX_WBITS
        self._obj = zlib.decompressobj(wbits)
        self._started = False

    def feed(self, data: bytes, room: int) -> list[bytes]:
        """Decode ``data``: pieces of at most ``room`` bytes in total, plus one byte to tell that
        the allowance is exceeded (the caller stops then). ``room`` >= 1."""
        out: list[bytes] = []
        try:
            piece = self._obj.decompress(data, room + 1)
        except zlib.error:
            if self._raw_fallback and not self._started:
                self._raw_fallback = False
                self._obj = zlib.decompressobj(-zlib.MAX_WBITS)
                return self.feed(data, room)
            raise BadResponseBody(f"the response body is not valid {self.encoding} data") from None
        self._started = True
        out.append(piece)
        room -= len(piece)
        while self._obj.unconsumed_tail and room >= 0:
            try:
                piece = self._obj.decompress(self._obj.unconsumed_tail, room + 1)
            except zlib.error:
                raise BadResponseBody(f"the response body is not valid {self.encoding} data") from None
            out.append(piece)
            room -= len(piece)
        return out

    def flush(self) -> bytes:
        try:
            return self._obj.flush()
        except zlib.error:
            raise BadResponseBody(f"the response body is not valid {self.encoding} data") from None


class CappedStream(httpx.AsyncByteStream):
    """A response stream that decodes gzip/deflate itself and stops after ``limit`` decoded bytes."""

    def __init__(self, inner: Any, encoding: str | None, limit: int) -> None:
        self._inner = inner
        self._inflater = _Inflater(encoding) if encoding else None
        self._limit = limit
        self.decoded = 0

    def _count(self, piece: bytes) -> bytes:
        self.decoded += len(piece)
        if self.decoded > self._limit:
            raise ResponseTooLarge(
                f"response too large: the body is more than {self._limit} bytes"
                + (f" once {self._inflater.encoding}-decoded" if self._inflater else "")
            )
        return piece

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self._inner:
            if self._inflater is None:
                yield self._count(chunk)
                continue
            for piece in self._inflater.feed(chunk, self._limit - self.decoded):
                if piece:
                    yield self._count(piece)
        if self._inflater is not None:
            tail = self._inflater.flush()
            if tail:
                yield self._count(tail)

    async def aclose(self) -> None:
        await self._inner.aclose()


def _encoding(response: httpx.Response) -> str | None:
    """The one content coding of a response we decode (None: identity); refuses others."""
    value = response.headers.get("content-encoding", "")
    codings = [c.strip().lower() for c in value.split(",") if c.strip() and c.strip().lower() != "identity"]
    if not codings:
        return None
    if len(codings) == 1 and codings[0] in ("gzip", "x-gzip", "deflate"):
        return "gzip" if codings[0] in ("gzip", "x-gzip") else "deflate"
    raise BadResponseBody(f"unsupported Content-Encoding {value!r} (asked for {ACCEPT_ENCODING})")


def refuse_cross_origin_redirect(response: httpx.Response) -> None:
    """Raise `RedirectRefused` when ``response`` redirects to another scheme, host or port."""
    if not response.has_redirect_location:
        return
    here = response.request.url
    try:
        there = here.join(response.headers["location"])
    except (httpx.InvalidURL, ValueError):
        raise RedirectRefused(
            "redirect to an unreadable location refused", status_code=response.status_code
        ) from None
    if origin(there) != origin(here):
        raise RedirectRefused(
            f"redirect to another host refused: {_show(here)} -> {_show(there)}",
            status_code=response.status_code,
        )


def guard_response(response: httpx.Response, limit: int = MAX_RESPONSE_BYTES) -> None:
    """Refuse a cross-origin redirect or an oversize Content-Length; cap the body as it streams."""
    refuse_cross_origin_redirect(response)
    encoding = _encoding(response)
    length = response.headers.get("content-length")
    if encoding is None and length is not None and length.strip().isdigit() and int(length) > limit:
        raise ResponseTooLarge(f"response too large: Content-Length {int(length)} > {limit} bytes")
    response.stream = CappedStream(response.stream, encoding, limit)
    if encoding is not None:  # decoded here: httpx must not decode (without a bound) again
        del response.headers["content-encoding"]
        response.headers.pop("content-length", None)


async def _on_request(request: httpx.Request) -> None:
    request.headers["Accept-Encoding"] = ACCEPT_ENCODING


async def _on_response(response: httpx.Response) -> None:
    guard_response(response)


def event_hooks(extra_response_hooks: list[Any] | None = None) -> dict[str, list[Any]]:
    """httpx ``event_hooks`` that install the guards (plus ``extra_response_hooks``)."""
    return {"request": [_on_request], "response": [_on_response, *(extra_response_hooks or [])]}


__all__ = [
    "ACCEPT_ENCODING",
    "BadResponseBody",
    "CappedStream",
    "GuardError",
    "RedirectRefused",
    "ResponseTooLarge",
    "event_hooks",
    "guard_error",
    "guard_response",
    "origin",
]
