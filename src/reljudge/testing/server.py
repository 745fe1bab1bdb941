"""`MockLLMServer`: a real HTTP server on the loopback interface that speaks the OpenAI chat API and
Ollama's native API, answering from a scriptable *responder*.

Endpoints: ``POST /v1/chat/completions`` (usage; logprobs when requested), ``GET /v1/models``,
``POST /api/chat`` (``stream`` false, or true -> NDJSON chunks), ``GET /api/tags``, and
``POST /v1/messages`` (Anthropic's Messages API, enough for LiteLLM's ``anthropic/`` route). The
same routes under ``/moved/...`` are where the ``redirect`` responder sends a client.

A responder is any callable ``(MockRequest) -> MockReply | str``. Token counts are
word/punctuation counts, so they are deterministic; ``max_tokens`` (OpenAI, Anthropic) or
``options.num_predict`` (Ollama) cut the answer and set finish reason ``length``. Hostile shapes
(see `reljudge.testing.responders`): a reply can send any JSON value as the message content
(``content``), raw JSON numbers as token counts (``usage_literals``: ``1e400``), or an exact body
(``body``, e.g. a gzip bomb with ``Content-Encoding: gzip``).

>>> with MockLLMServer(lambda req: "1") as srv:          # doctest: +SKIP
...     cfg = ClientConfig(model="openai/mock", base_url=srv.openai_url)
"""

from __future__ import annotations

import hashlib
import ipaddress
import json
import re
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

_TOKEN = re.compile(r"\w+|[^\w\s]")
DEFAULT_MODELS = ("mock-model", "gpt-4o-mini", "llama3.2")
#: chat routes by path; each also answers under ``MOVED_PREFIX`` (the target of redirects)
ROUTES = {"/v1/chat/completions": "openai", "/api/chat": "ollama", "/v1/messages": "anthropic"}
MOVED_PREFIX = "/moved"


class _NotSet:
    def __repr__(self) -> str:
        return "NOT_SET"


NOT_SET: Any = _NotSet()


@dataclass
class MockRequest:
    """One chat request as the server received it."""

    api: str  # "openai", "ollama" or "anthropic"
    model: str
    messages: list[dict[str, Any]]
    body: dict[str, Any]
    index: int  # 0-based number of this chat request on the server
    seen: int  # how many identical (model, messages) requests came before this one
    headers: dict[str, str] = field(default_factory=dict)  # lower-case names; authorization redacted
    path: str = ""  # the request path, e.g. /v1/chat/completions or /moved/v1/chat/completions
    #: the Authorization header as received: set only while the responder runs (``key-echo``
    #: answers with it); recorded requests never keep it
    raw_authorization: str | None = field(default=None, repr=False, compare=False)

    @property
    def prompt(self) -> str:
        """All message contents joined by newlines."""
        return "\n".join(str(m.get("content", "")) for m in self.messages)

    @property
    def last_user(self) -> str:
        for m in reversed(self.messages):
            if m.get("role") == "user":
                return str(m.get("content", ""))
        return ""

    @property
    def content_key(self) -> str:
        """SHA-256 of (model, messages): identical prompts share it."""
        blob = json.dumps([self.model, self.messages], sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()

    @property
    def max_tokens(self) -> int | None:
        if self.api in ("openai", "anthropic"):
            value = self.body.get("max_completion_tokens", self.body.get("max_tokens"))
        else:
            value = (self.body.get("options") or {}).get("num_predict")
        return int(value) if isinstance(value, (int, float)) and value >= 0 else None

    @property
    def wants_logprobs(self) -> bool:
        return bool(self.body.get("logprobs"))


@dataclass
class MockReply:
    """What the server answers. ``status`` != 200 sends an error body with ``error`` as message.

    ``hang=True`` never answers (until the server stops or ``hang_s`` passes);
    ``finish_reason`` defaults to "stop" (or "length" when cut by max_tokens).
    ``content`` (any JSON value) is sent as the message content instead of ``text``;
    ``usage_literals`` = (prompt, completion) are sent verbatim as the token counts (JSON number
    text such as ``"1e400"`` or ``"-5"``); ``body`` is sent as the exact response body (with
    ``status`` and ``headers``), bypassing everything else.
    """

    text: str = ""
    status: int = 200
    error: str | None = None
    error_code: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0
    hang: bool = False
    finish_reason: str | None = None
    refusal: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    content: Any = NOT_SET
    usage_literals: tuple[str, str] | None = None
    body: bytes | None = None

    def __call__(self, req: MockRequest) -> MockReply:
        """A reply is also a responder that always gives itself: ``MockLLMServer(error(500))``."""
        return self


Responder = Callable[[MockRequest], "MockReply | str"]


def count_tokens(text: str) -> int:
    return len(_TOKEN.findall(text))


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class MockLLMServer:
    """A threaded HTTP server on 127.0.0.1 (port 0 = any free port). Use as a context manager.

    ``calls`` counts chat requests; ``requests`` keeps them (`MockRequest`); ``max_in_flight`` is
    the largest number of chat requests handled at the same time. ``latency_s`` is added to every
    chat answer; a hanging reply waits ``hang_s`` seconds (default: until the server stops).
    """

    def __init__(
        self,
        responder: Responder | None = None,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        latency_s: float = 0.0,
        hang_s: float | None = None,
        models: tuple[str, ...] = DEFAULT_MODELS,
    ) -> None:
        if not _is_loopback(host):
            raise ValueError(f"the mock server only listens on loopback addresses, not {host!r}")
        if responder is None:
            from reljudge.testing.auto import AutoResponder

            responder = AutoResponder()
        self.responder = responder
        self.host = host
        self.port = port
        self.latency_s = latency_s
        self.hang_s = hang_s
        self.models = tuple(models)
        self.requests: list[MockRequest] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._seen: Counter[str] = Counter()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ------------------------------------------------------------------------------
    def start(self) -> MockLLMServer:
        server = self

        class Handler(_Handler):
            mock = server

        self._stop.clear()
        self._httpd = _Server((self.host, self.port), Handler)
        self.port = self._httpd.server_address[1]
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="mock-llm-server",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()  # releases hanging handlers
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> MockLLMServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def serve_forever(self) -> None:
        """Block until interrupted (for the CLI)."""
        self.start()
        try:
            while not self._stop.wait(0.5):
                pass
        finally:
            self.stop()

    # -- addresses and counters -----------------------------------------------------------------
    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    @property
    def openai_url(self) -> str:
        return f"{self.url}/v1"

    @property
    def ollama_url(self) -> str:
        return self.url

    @property
    def calls(self) -> int:
        with self._lock:
            return len(self.requests)

    def reset(self) -> None:
        with self._lock:
            self.requests.clear()
            self._seen.clear()
            self.max_in_flight = 0

    # -- used by the handler --------------------------------------------------------------------
    def _register(
        self,
        api: str,
        body: dict[str, Any],
        headers: dict[str, str],
        path: str = "",
        authorization: str | None = None,
    ) -> MockRequest:
        messages = body.get("messages") or []
        if api == "anthropic":
            messages = _anthropic_messages(body)
        req = MockRequest(
            api=api, model=str(body.get("model", "")), messages=messages, body=body, index=0, seen=0
        )
        req.headers = headers
        req.path = path
        req.raw_authorization = authorization
        with self._lock:
            req.index = len(self.requests)
            req.seen = self._seen[req.content_key]
            self._seen[req.content_key] += 1
            self.requests.append(req)
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        return req

    def _done(self) -> None:
        with self._lock:
            self.in_flight -= 1

    def _answer(self, req: MockRequest) -> MockReply:
        try:
            reply = self.responder(req)
        except Exception as err:  # a broken responder answers 500 so the test sees it
            return MockReply(status=500, error=f"mock responder failed: {type(err).__name__}: {err}")
        finally:
            req.raw_authorization = None  # recorded requests never keep the credential
        if isinstance(reply, str):
            reply = MockReply(text=reply)
        if not isinstance(reply, MockReply):
            return MockReply(status=500, error=f"mock responder returned {type(reply).__name__}")
        return reply

    def _wait(self, seconds: float) -> bool:
        """Sleep unless the server stops; True when the server is stopping."""
        return self._stop.wait(seconds) if seconds > 0 else self._stop.is_set()


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
    return ""


def _anthropic_messages(body: dict[str, Any]) -> list[dict[str, Any]]:
    """An Anthropic request's system prompt and messages as role/content-string dicts."""
    out: list[dict[str, Any]] = []
    system = body.get("system")
    if system:
        out.append({"role": "system", "content": _text_of(system)})
    for m in body.get("messages") or []:
        if isinstance(m, dict):
            out.append({"role": m.get("role", "user"), "content": _text_of(m.get("content"))})
    return out


def _with_literals(data: str, literals: dict[str, str]) -> str:
    for placeholder, literal in literals.items():
        data = data.replace(f'"{placeholder}"', literal)
    return data


def _logprob(token: str, position: int) -> float:
    digest = hashlib.sha256(f"{position}:{token}".encode()).digest()
    return -round(digest[0] / 255 * 0.5 + 0.001, 4)


def _token_bytes(token: str) -> list[int] | None:
    """The UTF-8 bytes OpenAI lists for a token (null for a long token, as a huge answer has)."""
    data = token.encode("utf-8")
    return list(data) if len(data) <= 256 else None


def _logprob_items(tokens: list[str], top: int) -> list[dict[str, Any]]:
    items = []
    for i, tok in enumerate(tokens):
        lp = _logprob(tok, i)
        alts: list[dict[str, Any]] = [{"token": tok, "logprob": lp}]
        candidates = [d for d in "0123" if d != tok] if tok.isdigit() else [f"{tok}_{k}" for k in range(top)]
        for k, alt in enumerate(candidates[: max(0, top - 1)]):
            alts.append({"token": alt, "logprob": round(lp - 1.5 - k, 4)})
        items.append({"token": tok, "logprob": lp, "top_logprobs": alts[:top]})
    return items


def _usage(
    prompt_tokens: int, completion_tokens: int, literals: tuple[str, str] | None
) -> tuple[tuple[Any, Any, Any], dict[str, str]]:
    """Usage numbers, or placeholders that `_with_literals` replaces by the literal JSON numbers."""
    if literals is None:
        return (prompt_tokens, completion_tokens, prompt_tokens + completion_tokens), {}
    marks = {"@@prompt_tokens@@": literals[0], "@@completion_tokens@@": literals[1], "@@total@@": "2"}
    return ("@@prompt_tokens@@", "@@completion_tokens@@", "@@total@@"), marks


def _cut(text: str, max_tokens: int | None) -> tuple[str, int, bool]:
    """(text cut to max_tokens, completion tokens, was cut)."""
    spans = [m.span() for m in _TOKEN.finditer(text)]
    if max_tokens is None or len(spans) <= max_tokens:
        return text, len(spans), False
    end = spans[max_tokens - 1][1] if max_tokens > 0 else 0
    return text[:end], max_tokens, True


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256  # the default backlog (5) resets connections under concurrent clients
    allow_reuse_address = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hangs up (as one refusing a huge body does) is no error of the server."""
        if isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            return
        super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    mock: MockLLMServer
    protocol_version = "HTTP/1.1"  # keep-alive: one connection serves many requests
    server_version = "reljudge-mock/1"
    # TCP_NODELAY: without it, the headers and the body (two writes) meet Nagle's algorithm and
    # the client's delayed ACK, which adds ~40 ms to every answer on a kept-alive connection
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    # -- plumbing -------------------------------------------------------------------------------
    def _send_json(
        self,
        status: int,
        payload: Any,
        headers: dict[str, str] | None = None,
        literals: dict[str, str] | None = None,
    ) -> None:
        text = json.dumps(payload)
        if literals:
            text = _with_literals(text, literals)
        self._send_raw(status, text.encode("utf-8"), headers)

    def _send_raw(self, status: int, data: bytes, headers: dict[str, str] | None = None) -> None:
        try:
            self.send_response(status)
            names = {k.lower() for k in headers or {}}
            if "content-type" not in names:
                self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError, ConnectionAbortedError):
            self.close_connection = True

    def _read_json(self) -> dict[str, Any] | None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            return None
        return body if isinstance(body, dict) else None

    def _raw_authorization(self) -> str | None:
        return self.headers.get("Authorization") or self.headers.get("x-api-key")

    def _headers(self) -> dict[str, str]:
        out = {k.lower(): v for k, v in self.headers.items()}
        for name in ("authorization", "x-api-key"):
            if name in out:
                out[name] = "<redacted>"
        return out

    # -- routes ---------------------------------------------------------------------------------
    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0].rstrip("/")
        if path == "/v1/models":
            data = [
                {"id": m, "object": "model", "created": 0, "owned_by": "reljudge-mock"}
                for m in self.mock.models
            ]
            self._send_json(200, {"object": "list", "data": data})
        elif path == "/api/tags":
            models = [
                {
                    "name": m,
                    "model": m,
                    "modified_at": "2025-01-01T00:00:00Z",
                    "size": 0,
                    "digest": hashlib.sha256(m.encode()).hexdigest(),
                    "details": {"format": "mock", "family": "mock", "parameter_size": "0B"},
                }
                for m in self.mock.models
            ]
            self._send_json(200, {"models": models})
        elif path in ("", "/"):
            self._send_json(200, {"status": "reljudge mock LLM server"})
        else:
            self._send_json(404, {"error": f"no route GET {path}"})

    def do_POST(self) -> None:
        path = self.path.split("?", 1)[0].rstrip("/")
        route = path[len(MOVED_PREFIX) :] if path.startswith(MOVED_PREFIX + "/") else path
        api = ROUTES.get(route)
        body = self._read_json()
        if api is None:
            self._send_json(404, {"error": f"no route POST {path}"})
            return
        if body is None or not isinstance(body.get("messages"), list):
            self._error(api, 400, "the request body must be a JSON object with a 'messages' list", None)
            return
        req = self.mock._register(api, body, self._headers(), path, self._raw_authorization())
        try:
            self._chat(api, req)
        finally:
            self.mock._done()

    def _chat(self, api: str, req: MockRequest) -> None:
        mock = self.mock
        reply = mock._answer(req)
        if reply.hang:
            mock._wait(mock.hang_s if mock.hang_s is not None else 3600.0)
            self.close_connection = True
            return
        if mock._wait(mock.latency_s + reply.delay_s):
            self.close_connection = True
            return
        if reply.body is not None:
            self._send_raw(reply.status, reply.body, reply.headers)
            return
        if reply.status != 200:
            self._error(
                api,
                reply.status,
                reply.error or f"mock error {reply.status}",
                reply.error_code,
                reply.headers,
            )
            return
        if api == "openai" and req.body.get("stream"):
            self._error(api, 400, "the mock server does not stream OpenAI responses", None)
            return
        text, completion_tokens, cut = _cut(reply.text, req.max_tokens)
        finish = reply.finish_reason or ("length" if cut else "stop")
        prompt_tokens = (
            reply.prompt_tokens
            if reply.prompt_tokens is not None
            else sum(count_tokens(str(m.get("content", ""))) + 3 for m in req.messages)
        )
        if reply.completion_tokens is not None:
            completion_tokens = reply.completion_tokens
        tokens = _TOKEN.findall(text)
        top = req.body.get("top_logprobs") or 0
        logprobs = (
            _logprob_items(tokens, int(top) if isinstance(top, int) else 0) if req.wants_logprobs else None
        )
        if api == "openai":
            self._openai(req, text, finish, prompt_tokens, completion_tokens, logprobs, reply)
        elif api == "anthropic":
            self._anthropic(req, text, finish, prompt_tokens, completion_tokens, reply)
        else:
            self._ollama(req, text, finish, prompt_tokens, completion_tokens, logprobs, reply)

    def _error(
        self, api: str, status: int, message: str, code: str | None, headers: dict[str, str] | None = None
    ) -> None:
        kind = {429: "rate_limit_error", 401: "authentication_error"}.get(status, "invalid_request_error")
        if status >= 500:
            kind = "server_error"
        if api == "openai":
            payload: dict[str, Any] = {
                "error": {"message": message, "type": kind, "param": None, "code": code}
            }
        elif api == "anthropic":
            payload = {"type": "error", "error": {"type": kind, "message": message}}
        else:
            payload = {"error": message}
        self._send_json(status, payload, headers)

    def _openai(self, req, text, finish, prompt_tokens, completion_tokens, logprobs, reply) -> None:  # type: ignore[no-untyped-def]
        if logprobs is not None:
            for item in logprobs:
                item["bytes"] = _token_bytes(item["token"])
                for alt in item["top_logprobs"]:
                    alt["bytes"] = _token_bytes(alt["token"])
        content = text if reply.content is NOT_SET else reply.content
        usage, literals = _usage(prompt_tokens, completion_tokens, reply.usage_literals)
        payload = {
            "id": f"chatcmpl-mock-{req.index}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": req.model,
            "system_fingerprint": "fp_reljudge_mock",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content, "refusal": reply.refusal},
                    "logprobs": {"content": logprobs, "refusal": None} if logprobs is not None else None,
                    "finish_reason": finish,
                }
            ],
            "usage": {
                "prompt_tokens": usage[0],
                "completion_tokens": usage[1],
                "total_tokens": usage[2],
            },
        }
        self._send_json(200, payload, reply.headers, literals)

    def _anthropic(self, req, text, finish, prompt_tokens, completion_tokens, reply) -> None:  # type: ignore[no-untyped-def]
        content = [{"type": "text", "text": text}] if reply.content is NOT_SET else reply.content
        usage, literals = _usage(prompt_tokens, completion_tokens, reply.usage_literals)
        payload = {
            "id": f"msg_mock_{req.index}",
            "type": "message",
            "role": "assistant",
            "model": req.model,
            "content": content,
            "stop_reason": "max_tokens" if finish == "length" else "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": usage[0], "output_tokens": usage[1]},
        }
        self._send_json(200, payload, reply.headers, literals)

    def _ollama(self, req, text, finish, prompt_tokens, completion_tokens, logprobs, reply) -> None:  # type: ignore[no-untyped-def]
        created = datetime.now(timezone.utc).isoformat().replace("+00:00", "Z")  # noqa: UP017
        content = text if reply.content is NOT_SET else reply.content
        usage, literals = _usage(prompt_tokens, completion_tokens, reply.usage_literals)
        final: dict[str, Any] = {
            "model": req.model,
            "created_at": created,
            "message": {"role": "assistant", "content": content},
            "done": True,
            "done_reason": finish,
            "total_duration": 1000,
            "load_duration": 0,
            "prompt_eval_count": usage[0],
            "prompt_eval_duration": 500,
            "eval_count": usage[1],
            "eval_duration": 500,
        }
        if logprobs is not None:
            final["logprobs"] = logprobs
        if req.body.get("stream") is False or literals or reply.content is not NOT_SET:
            self._send_json(200, final, reply.headers, literals)
            return
        # Ollama streams by default: NDJSON, one chunk per token, then the final summary.
        pieces = [m.group(0) for m in re.finditer(r"\S+\s*|\s+", text)]
        lines = [
            json.dumps(
                {
                    "model": req.model,
                    "created_at": created,
                    "message": {"role": "assistant", "content": p},
                    "done": False,
                }
            )
            for p in pieces
        ]
        final_chunk = dict(final, message={"role": "assistant", "content": ""})
        lines.append(json.dumps(final_chunk))
        data = ("\n".join(lines) + "\n").encode("utf-8")
        try:
            self.send_response(200)
            self.send_header("Content-Type", "application/x-ndjson")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
