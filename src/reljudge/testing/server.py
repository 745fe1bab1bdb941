"""`MockLLMServer`: a real HTTP server on the loopback interface that speaks the OpenAI chat API and
Ollama's native API, answering from a scriptable *responder*.

Endpoints: ``POST /v1/chat/completions`` (usage; logprobs when requested), ``GET /v1/models``,
``/v1/files`` and ``/v1/batches`` (OpenAI's Batch API, `reljudge.testing.batches`),
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

import ipaddress
import sys
import threading
from collections import Counter
from http.server import ThreadingHTTPServer
from typing import Any

from reljudge.testing.batches import MockBatchService
from reljudge.testing.exchange import MockReply, MockRequest, Responder
from reljudge.testing.handler import MockHandler
from reljudge.testing.protocols import anthropic_messages, billed_tokens
from reljudge.testing.ratelimit import ServerRateLimit, Verdict

DEFAULT_MODELS = ("mock-model", "gpt-4o-mini", "llama3.2")


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
    ``rpm``, ``tpm`` and ``max_connections`` set the server's own rate limit
    (`reljudge.testing.ratelimit.ServerRateLimit`, ``rate_burst_s`` seconds' worth of burst):
    a chat request over it is answered 429 with ``Retry-After`` and ``x-ratelimit-*`` headers;
    ``rate_limit.refused`` counts those by limit; ``rate_headers=False`` sends only 429 +
    ``Retry-After``, no ``x-ratelimit-*`` header (a vLLM/Ollama/LiteLLM-style limit). ``batch_delay_s``, ``batch_failure_share`` and
    ``batch_hostile`` set the Batch API's completion delay, share of failed requests and hostile
    output (`batches`); ``batch_faults`` its other provider faults (`batches.MockBatchService`'s
    keyword options: ``slow``, ``lose_creates``, ``drop_metadata``, ``unlisted``, ...);
    ``batch_duplicate_share`` of batch requests are answered twice, differently; ``served_model``
    is the ``model`` every answer names (chat and batch), whatever was asked.
    ``billed`` is what the server really used for the chat requests it
    answered (batch lines included, whether or not the client was still waiting): [prompt tokens,
    completion tokens], whatever usage the responder reports (`protocols.billed_tokens`), so a
    test can price what a provider would bill.
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
        rpm: float | None = None,
        tpm: float | None = None,
        max_connections: int | None = None,
        rate_burst_s: float = 1.0,
        rate_headers: bool = True,
        batch_delay_s: float = 0.0,
        batch_failure_share: float = 0.0,
        batch_hostile: bool = False,
        batch_faults: dict[str, Any] | None = None,
        batch_duplicate_share: float = 0.0,
        served_model: str | None = None,
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
        self.rate_limit = ServerRateLimit(
            rpm, tpm, max_connections, burst_s=rate_burst_s, rate_headers=rate_headers
        )
        #: the Files and Batches APIs (`reljudge.testing.batches.MockBatchService`)
        self.batches = MockBatchService(
            self,
            completion_delay_s=batch_delay_s,
            failure_share=batch_failure_share,
            hostile=batch_hostile,
            duplicate_share=batch_duplicate_share,
            served_model=served_model,
            **(batch_faults or {}),
        )
        #: the ``model`` every chat and batch answer names (None: the model asked for)
        self.served_model = served_model
        self.requests: list[MockRequest] = []
        self.billed = [0, 0]
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

        class Handler(MockHandler):
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
        self.batches.close()
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
            self.billed = [0, 0]
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
            messages = anthropic_messages(body)
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

    def _admit(self, req: MockRequest) -> Verdict | None:
        """The rate limit's verdict on a chat request (None without a limit); an admitted request
        is released by `_release`."""
        if not self.rate_limit.active:
            return None
        chars = sum(len(str(m.get("content", ""))) for m in req.messages if isinstance(m, dict))
        budget = req.body.get("max_tokens", req.body.get("max_completion_tokens"))
        tokens = chars // 4 + 1 + (budget if isinstance(budget, int) and budget > 0 else 0)
        return self.rate_limit.admit(tokens)

    def _release(self) -> None:
        self.rate_limit.release()

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

    def _bill(self, req: MockRequest, reply: MockReply) -> None:
        """Count what answering ``req`` really used (`billed`)."""
        prompt, completion = billed_tokens(req, reply)
        with self._lock:
            self.billed[0] += prompt
            self.billed[1] += completion

    def _wait(self, seconds: float) -> bool:
        """Sleep unless the server stops; True when the server is stopping."""
        return self._stop.wait(seconds) if seconds > 0 else self._stop.is_set()


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256  # the default backlog (5) resets connections under concurrent clients
    allow_reuse_address = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hangs up (as one refusing a huge body does) is no error of the server."""
        if isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            return
        super().handle_error(request, client_address)
