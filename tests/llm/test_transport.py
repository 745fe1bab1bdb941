"""The HTTP transports of the openai and ollama backends: aiohttp (default) and httpx's own.

Every failure below HTTP must become the same `ProviderError` kind with either transport (the
retry policy depends on it), and HTTP errors keep their status and Retry-After.
"""

from __future__ import annotations

import asyncio
import socket
import struct
import threading
from collections.abc import Iterator

import httpx
import pytest

from reljudge.llm.backends.ollama import OllamaBackend
from reljudge.llm.backends.openai import OpenAIBackend
from reljudge.llm.types import ProviderError
from reljudge.testing import MockLLMServer, responders

TRANSPORTS = ("aiohttp", "httpx")
BACKENDS = ("openai", "ollama")
#: the client timeout where it only guards against a hang (a busy machine can be slow to answer)
HANG_GUARD_S = 60.0


def _backend(backend: str, url: str, transport: str, timeout_s: float = HANG_GUARD_S):
    if backend == "openai":
        return OpenAIBackend("m", base_url=url, api_key="sk-test", timeout_s=timeout_s, transport=transport)
    return OllamaBackend("m", base_url=url, api_key=None, timeout_s=timeout_s, transport=transport)


async def _outcome(
    backend: str, url: str, transport: str, timeout_s: float = HANG_GUARD_S
) -> str | ProviderError:
    client = _backend(backend, url, transport, timeout_s)
    try:
        completion = await client.complete([{"role": "user", "content": "hi"}], {})
        return completion.text
    except ProviderError as err:
        return err
    finally:
        await client.aclose()


def _raw_server(behaviour: str) -> tuple[socket.socket, str, threading.Event]:
    """A TCP server that reads one request and misbehaves in the named way ("hang": answer
    nothing until the returned event is set)."""
    stop = threading.Event()
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)

    def handle(conn: socket.socket) -> None:
        with conn:
            data = b""
            while b"\r\n\r\n" not in data:
                chunk = conn.recv(65536)
                if not chunk:
                    return
                data += chunk
            if behaviour == "reset":
                conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            elif behaviour == "garbage":
                conn.sendall(b"NOT HTTP AT ALL\r\n\r\n")
            elif behaviour == "truncated":
                conn.sendall(
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n{"
                )
            elif behaviour == "hang":
                stop.wait(HANG_GUARD_S)

    def serve() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            threading.Thread(target=handle, args=(conn,), daemon=True).start()

    threading.Thread(target=serve, daemon=True).start()
    return listener, f"http://127.0.0.1:{listener.getsockname()[1]}", stop


@pytest.fixture
def refused_url() -> str:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    return f"http://127.0.0.1:{port}"


@pytest.fixture
def raw_server(request) -> Iterator[str]:
    listener, url, stop = _raw_server(request.param)
    yield url
    stop.set()
    listener.close()


def test_aiohttp_is_the_default_transport():
    pytest.importorskip("httpx_aiohttp")
    from httpx_aiohttp import AiohttpTransport

    for backend in BACKENDS:
        client = _backend(backend, "http://127.0.0.1:9", "aiohttp")
        http = client._client._client  # the SDK's httpx.AsyncClient
        assert isinstance(http._transport, AiohttpTransport), backend
        asyncio.run(client.aclose())


def test_an_unknown_transport_is_refused():
    with pytest.raises(ValueError, match="transport"):
        _backend("openai", "http://127.0.0.1:9", "curl")


def test_a_proxy_in_the_environment_keeps_httpx_transport(monkeypatch):
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:3128")
    client = _backend("ollama", "http://127.0.0.1:9", "aiohttp")
    assert isinstance(client._client._client._transport, httpx.AsyncHTTPTransport)
    asyncio.run(client.aclose())


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_refused_connection_is_a_connection_error_with_both_transports(backend, refused_url):
    kinds = {t: asyncio.run(_outcome(backend, refused_url, t)) for t in TRANSPORTS}
    assert all(isinstance(k, ProviderError) and k.kind == "connection" for k in kinds.values()), kinds


@pytest.mark.parametrize(
    ("raw_server", "kind"),
    [
        ("close", "connection"),
        ("reset", "connection"),
        ("garbage", "connection"),
        ("truncated", "connection"),
        ("hang", "timeout"),
    ],
    indirect=["raw_server"],
)
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.slow
def test_broken_servers_give_the_same_kind_with_both_transports(backend, raw_server, kind):
    for transport in TRANSPORTS:
        outcome = asyncio.run(_outcome(backend, raw_server, transport, timeout_s=0.5))
        assert isinstance(outcome, ProviderError) and outcome.kind == kind, (transport, outcome)


@pytest.mark.parametrize(
    ("status", "message", "kind"),
    [
        (429, "slow down", "rate_limit"),
        (500, "boom", "server"),
        (401, "bad key", "auth"),
        (400, "maximum context length exceeded", "context_length"),
    ],
)
@pytest.mark.parametrize("backend", BACKENDS)
def test_http_errors_keep_kind_status_and_retry_after_with_both_transports(backend, status, message, kind):
    with MockLLMServer(lambda req: responders.error(status, message, retry_after=2.5)) as srv:
        url = srv.openai_url if backend == "openai" else srv.ollama_url
        for transport in TRANSPORTS:
            err = asyncio.run(_outcome(backend, url, transport))
            assert isinstance(err, ProviderError), (transport, err)
            assert (err.kind, err.status_code) == (kind, status), (transport, err)
            if kind in ("rate_limit", "server"):
                assert err.retry_after == 2.5, transport


@pytest.mark.parametrize("backend", BACKENDS)
def test_answers_and_credentials_in_the_url_work_with_both_transports(backend):
    with MockLLMServer(responders.fixed("1")) as srv:
        url = srv.openai_url if backend == "openai" else srv.ollama_url
        for transport in TRANSPORTS:
            assert asyncio.run(_outcome(backend, url, transport)) == "1", transport
            with_user = url.replace("http://", "http://user:secret-word@")
            assert asyncio.run(_outcome(backend, with_user, transport)) == "1", transport
