"""The mock server's HTTP handler: reading a request, routing it (chat under each API's path and
under ``MOVED_PREFIX``, model lists), and sending the reply in the API's shape
(`reljudge.testing.protocols`), slowly, never, or as an exact body when the reply says so.
"""

from __future__ import annotations

import hashlib
import json
from http.server import BaseHTTPRequestHandler
from typing import Any, Protocol

from reljudge.testing.exchange import MOVED_PREFIX, NOT_SET, MockReply, MockRequest
from reljudge.testing.protocols import (
    answer_of,
    anthropic_body,
    error_body,
    ollama_body,
    ollama_stream,
    openai_body,
    with_literals,
)

#: chat routes by path; each also answers under ``MOVED_PREFIX`` (the target of redirects)
ROUTES = {"/v1/chat/completions": "openai", "/api/chat": "ollama", "/v1/messages": "anthropic"}


#: the OpenAI Files and Batches routes (`reljudge.testing.batches`)
BATCH_ROUTES = ("/v1/files", "/v1/batches")
#: the OpenAI embeddings route (also under ``MOVED_PREFIX``) and the vectors' default size
EMBEDDINGS_ROUTE = "/v1/embeddings"
EMBEDDING_DIM = 8


def mock_embedding(text: str, dim: int = EMBEDDING_DIM) -> list[float]:
    """A deterministic vector of ``dim`` values in [-1, 1) from the SHA-256 of ``text``."""
    dim = max(1, min(int(dim), 4096))
    seed = hashlib.sha256(text.encode("utf-8")).digest()
    out: list[float] = []
    block = 0
    while len(out) < dim:
        digest = hashlib.sha256(seed + block.to_bytes(4, "big")).digest()
        out.extend(b / 128.0 - 1.0 for b in digest)
        block += 1
    return out[:dim]


class MockBackend(Protocol):
    """What the handler needs of its server (`reljudge.testing.server.MockLLMServer`)."""

    models: tuple[str, ...]
    latency_s: float
    batches: Any  # `reljudge.testing.batches.MockBatchService`
    hang_s: float | None
    served_model: str | None  # the ``model`` every answer names (None: the one asked for)

    def _register(
        self, api: str, body: dict[str, Any], headers: dict[str, str], path: str, authorization: str | None
    ) -> MockRequest: ...

    def _done(self) -> None: ...

    def _admit(self, req: MockRequest) -> Any: ...

    def _release(self) -> None: ...

    def _answer(self, req: MockRequest) -> MockReply: ...

    def _bill(self, req: MockRequest, reply: MockReply) -> None: ...

    def _wait(self, seconds: float) -> bool: ...


class MockHandler(BaseHTTPRequestHandler):
    mock: MockBackend
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
            text = with_literals(text, literals)
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

    def _send_ndjson(self, data: bytes) -> None:
        try:
            self.send_response(200)
            self.send_header("Content-Type", "application/x-ndjson")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
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
    def _batch_route(self, method: str) -> bool:
        """Files and batches (`reljudge.testing.batches`); True when the path is theirs."""
        path, _, query = self.path.partition("?")
        if not path.startswith(BATCH_ROUTES):
            return False
        params = dict(p.partition("=")[::2] for p in query.split("&") if p)
        self.mock.batches.handle(self, method, path.rstrip("/"), params)
        return True

    def do_DELETE(self) -> None:
        if not self._batch_route("DELETE"):
            self._send_json(404, {"error": f"no route DELETE {self.path}"})

    def do_GET(self) -> None:
        if self._batch_route("GET"):
            return
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
        if self._batch_route("POST"):
            return
        path = self.path.split("?", 1)[0].rstrip("/")
        route = path[len(MOVED_PREFIX) :] if path.startswith(MOVED_PREFIX + "/") else path
        api = ROUTES.get(route)
        body = self._read_json()
        if route == EMBEDDINGS_ROUTE:
            self._embeddings(path, body)
            return
        if api is None:
            self._send_json(404, {"error": f"no route POST {path}"})
            return
        if body is None or not isinstance(body.get("messages"), list):
            self._error(api, 400, "the request body must be a JSON object with a 'messages' list", None)
            return
        req = self.mock._register(api, body, self._headers(), path, self._raw_authorization())
        try:
            verdict = self.mock._admit(req)
            if verdict is None:
                self._chat(api, req, {})
            elif not verdict.admitted:
                message = f"Rate limit reached ({verdict.refused_by}); please retry after a while."
                self._error(api, 429, message, "rate_limit_exceeded", verdict.headers)
            else:
                try:
                    self._chat(api, req, verdict.headers)
                finally:
                    self.mock._release()
        finally:
            self.mock._done()

    def _embeddings(self, path: str, body: dict[str, Any] | None) -> None:
        """OpenAI ``/v1/embeddings``: a deterministic vector per input text (`mock_embedding`), or
        what the responder's reply says (an error status, a hang, a delay, an exact body), so every
        fault mode of the server applies. The texts are registered as user messages."""
        texts = body.get("input") if body is not None else None
        if isinstance(texts, str):
            texts = [texts]
        if body is None or not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
            self._error(
                "openai", 400, "the request body must have an 'input' string or list of strings", None
            )
            return
        messages = [{"role": "user", "content": t} for t in texts]
        req = self.mock._register(
            "openai", {**body, "messages": messages}, self._headers(), path, self._raw_authorization()
        )
        try:
            mock = self.mock
            reply = mock._answer(req)
            if self._faulted("openai", reply):
                return
            dim = body.get("dimensions")
            if not isinstance(dim, int):
                dim = EMBEDDING_DIM
            data = [
                {"object": "embedding", "index": i, "embedding": mock_embedding(t, dim)}
                for i, t in enumerate(texts)
            ]
            tokens = sum(len(t.split()) for t in texts)
            payload = {
                "object": "list",
                "data": data,
                "model": req.model,
                "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
            }
            self._send_json(200, payload, reply.headers)
        finally:
            self.mock._done()

    def _faulted(self, api: str, reply: MockReply) -> bool:
        """Play the reply's fault, if it has one (a hang, the latency cut short by shutdown, a raw
        body, an error status); True when the request is answered (or dropped) by it."""
        mock = self.mock
        if reply.hang:
            mock._wait(mock.hang_s if mock.hang_s is not None else 3600.0)
            self.close_connection = True
            return True
        if mock._wait(mock.latency_s + reply.delay_s):
            self.close_connection = True
            return True
        if reply.body is not None:
            self._send_raw(reply.status, reply.body, reply.headers)
            return True
        if reply.status != 200:
            self._error(
                api,
                reply.status,
                reply.error or f"mock error {reply.status}",
                reply.error_code,
                reply.headers,
            )
            return True
        return False

    def _chat(self, api: str, req: MockRequest, limit_headers: dict[str, str]) -> None:
        reply = self.mock._answer(req)
        if self._faulted(api, reply):
            return
        if api == "openai" and req.body.get("stream"):
            self._error(api, 400, "the mock server does not stream OpenAI responses", None)
            return
        ans = answer_of(req, reply)
        self.mock._bill(req, reply)
        if api == "openai":
            payload, literals = openai_body(req, ans, reply)
            if self.mock.served_model is not None:  # another checkpoint than the one asked for
                payload["model"] = self.mock.served_model
        elif api == "anthropic":
            payload, literals = anthropic_body(req, ans, reply)
        else:
            payload, literals = ollama_body(req, ans, reply)
            if not (req.body.get("stream") is False or literals or reply.content is not NOT_SET):
                self._send_ndjson(ollama_stream(ans.text, payload))  # Ollama streams by default
                return
        self._send_json(200, payload, {**limit_headers, **(reply.headers or {})}, literals)

    def _error(
        self, api: str, status: int, message: str, code: str | None, headers: dict[str, str] | None = None
    ) -> None:
        self._send_json(status, error_body(api, status, message, code), headers)
