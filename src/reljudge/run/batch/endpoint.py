"""Send request lines of an exported batch file (``judge batch export``) to an OpenAI-compatible
endpoint, one HTTP request each, and turn each answer into an OpenAI batch output line -- what a
worker of ``judge batch ray`` (`reljudge.run.batch.ray_send`) does with its share of the rows.

The rules are the client's (`reljudge.llm`): at most ``concurrency`` requests in flight; every
attempt has a total deadline (connect, send, wait and read together, ``timeout_s``); a body is
read through the client's guards (at most `MAX_RESPONSE_BYTES` decoded, gzip bombs included,
redirects only within the origin); 429, 5xx, 408, timeouts and dropped connections are retried
with the client's policy (`reljudge.llm.retry`: ``Retry-After`` honoured, else exponential
backoff with full jitter, ``max_attempts`` in all). The key is read from the environment
(``OPENAI_API_KEY`` or the variable named) by the worker itself; it is never part of a line, and
error messages are passed through `reljudge.io.redact.redact_text`.

An answer -- a 200 with a JSON body, or a status that is not retried (400, 401, 404 ...) -- is an
output line ``{"custom_id", "id", "response": {"status_code", "request_id", "body"}, "error"}``
(`judge batch import` reads it as it reads ``vllm run-batch`` output: a non-200 becomes an
``api_error`` record that ``--retry-failed`` exports again). A request whose retries ran out is
*not* answered (`send` returns None): it is left for the next run of the same command.
"""

from __future__ import annotations

import asyncio
import json
import os
import uuid
from dataclasses import dataclass
from typing import Any

from reljudge.errors import InputError
from reljudge.llm.types import MAX_ERROR_CHARS, ProviderError

#: the environment variable the key is read from, unless another is named
DEFAULT_KEY_ENV = "OPENAI_API_KEY"


@dataclass(frozen=True)
class EndpointOptions:
    """Where and how a worker sends (picklable: it travels to the Ray workers; no key in it)."""

    base_url: str  # ends in /v1: the requests go to {base_url}/chat/completions
    concurrency: int = 8
    timeout_s: float = 60.0  # total deadline of one attempt
    max_attempts: int = 6
    backoff_base_s: float = 1.0
    backoff_max_s: float = 60.0
    retry_after_max_s: float = 120.0
    key_env: str = DEFAULT_KEY_ENV

    def __post_init__(self) -> None:
        if not self.base_url.startswith(("http://", "https://")):
            raise InputError(f"--base-url {self.base_url!r}: give an http(s) URL such as http://host:8000/v1")
        if self.concurrency < 1 or self.max_attempts < 1 or not self.timeout_s > 0:
            raise InputError("the concurrency, the attempts and the timeout must be positive")


@dataclass(frozen=True)
class Sent:
    """What became of one request line: its output line (None when it was not answered) and why."""

    custom_id: str
    line: bytes | None  # the output line with its newline
    outcome: str  # "answered" (200), "failed" (an answer that is an error), "unanswered"
    error: str | None = None


class EndpointSender:
    """An HTTP client for one worker (use ``async with``): `send` answers one request line."""

    def __init__(self, options: EndpointOptions) -> None:
        import httpx

        from reljudge.llm.backends._http import event_hooks
        from reljudge.llm.backends.base import pool_limits

        self.options = options
        self._key = os.environ.get(options.key_env) or ""
        headers = {"Authorization": f"Bearer {self._key}"} if self._key else {}
        self._url = options.base_url.rstrip("/") + "/chat/completions"
        self._gate = asyncio.Semaphore(options.concurrency)
        self._client = httpx.AsyncClient(
            headers=headers,
            timeout=options.timeout_s,
            limits=pool_limits(options.concurrency),
            follow_redirects=True,  # same origin only: the guard refuses the others
            event_hooks=event_hooks(),
        )

    async def __aenter__(self) -> EndpointSender:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._client.aclose()

    async def send(self, custom_id: str, body: dict[str, Any]) -> Sent:
        """Ask ``body`` (a chat-completions request body), retrying as the client would."""
        from reljudge.llm.retry import make_retrying

        o = self.options
        retrying = make_retrying(o.max_attempts, o.backoff_base_s, o.backoff_max_s, o.retry_after_max_s)
        try:
            async for attempt in retrying:
                with attempt:
                    async with self._gate:
                        status, request_id, payload = await self._attempt(body)
        except ProviderError as err:
            if err.retryable:
                return Sent(custom_id, None, "unanswered", self._redact(str(err)))
            line = _output_line(custom_id, err.status_code, "", None, self._redact(err.message), err.kind)
            return Sent(custom_id, line, "failed", self._redact(str(err)))
        return Sent(custom_id, _output_line(custom_id, status, request_id, payload, None), "answered")

    async def _attempt(self, body: dict[str, Any]) -> tuple[int, str, Any]:
        """One POST within the total deadline: (status 200, request id, the decoded body), or a
        `ProviderError` (retried or not by its kind)."""
        import httpx

        from reljudge.llm.backends._http import GuardError, guard_error
        from reljudge.llm.backends.base import classify_status
        from reljudge.llm.retry import retry_after_from_headers

        timeout = self.options.timeout_s
        try:
            async with asyncio.timeout(timeout):
                response = await self._client.post(self._url, json=body)
                raw = response.content  # read through the guard's capped stream
        except TimeoutError:
            raise ProviderError("timeout", f"no whole answer within {timeout:g} s") from None
        except GuardError as err:  # the body cap, a redirect to another origin
            raise err.as_provider_error() from None
        except httpx.TimeoutException:
            raise ProviderError("timeout", f"no whole answer within {timeout:g} s") from None
        except httpx.HTTPError as err:
            guarded = guard_error(err)
            if guarded is not None:
                raise guarded.as_provider_error() from None
            raise ProviderError("connection", f"connection error: {type(err).__name__}") from None
        request_id = response.headers.get("x-request-id", "")[:200]
        if response.status_code != 200:
            raise classify_status(
                response.status_code,
                _error_message(raw, response.status_code),
                retry_after_from_headers(response.headers),
            )
        if self._key and self._key.encode() in raw:
            raw = raw.replace(self._key.encode(), b"***")  # a server that echoes the key
        try:
            payload = json.loads(raw)
        except (ValueError, RecursionError):
            raise ProviderError(
                "invalid_response", "the response body is not JSON", status_code=200
            ) from None
        return 200, request_id, payload

    def _redact(self, text: str) -> str:
        from reljudge.io.redact import redact_text

        if self._key:
            text = text.replace(self._key, "***")
        return redact_text(text)[:MAX_ERROR_CHARS]


def _error_message(raw: bytes, status: int) -> str:
    """The message of an error body (OpenAI's ``{"error": {"message"}}``, or text), bounded."""
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):
        return raw[:MAX_ERROR_CHARS].decode("utf-8", "replace") or f"HTTP {status}"
    inner = data.get("error", data) if isinstance(data, dict) else data
    message = inner.get("message") if isinstance(inner, dict) else inner
    return str(message)[:MAX_ERROR_CHARS] if message else f"HTTP {status}"


def _output_line(
    custom_id: str,
    status: int | None,
    request_id: str,
    body: Any,
    error: str | None,
    kind: str | None = None,
) -> bytes:
    """An OpenAI batch output line; ``custom_id`` first, so a journal reader finds it in the
    line's first bytes (`reljudge.run.batch.journal`). A failure with no HTTP status (a body too
    large, not JSON) has no ``response``, as in OpenAI's error files."""
    response = None if status is None else {"status_code": status, "request_id": request_id, "body": body}
    line = {
        "custom_id": custom_id,
        "id": f"ray-{uuid.uuid4().hex}",
        "response": response,
        "error": None if error is None else {"message": error, "code": kind or status},
    }
    return json.dumps(line, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"


def parse_request(raw: bytes | str) -> tuple[str, dict[str, Any]]:
    """(custom_id, body) of a request line reljudge exported (`BadLine` for anything else)."""
    from reljudge.llm.batch.lines import CHAT_URL, BadLine, request_custom_id

    if isinstance(raw, str):
        raw = raw.encode("utf-8")
    custom_id = request_custom_id(raw)
    data = json.loads(raw)
    body = data.get("body")
    if data.get("url") != CHAT_URL or not isinstance(body, dict):
        raise BadLine(f"a request line must POST a body to {CHAT_URL}")
    return custom_id, body
