"""Scripted responders for `MockLLMServer`: fixed answers, sequences, errors, a deterministic
fault injector, and the hostile shapes a client must survive.

A responder is any callable ``(MockRequest) -> MockReply | str``; these helpers build common ones.
`named` builds one from a name, as ``judge mock-server --responder NAME[:ARG]`` does; `NAMES` lists
them:

=================  ==========================================================================
``auto``           the built-in answers in each prompt's format (`AutoResponder`)
``echo``           the last user message
``echo-all``       all messages joined (servers that return the prompt)
``prompt-plus``    the prompt followed by the auto answer (servers returning prompt + completion)
``fixed:TEXT``     always TEXT
``list-content``   the auto answer as OpenAI content parts ``[{"type": "text", ...}, ...]``
``int-content``    the content is the number 3
``dict-content``   the content is an object ``{"type": "text", "text": "##final score: 3"}``
``absurd-usage``   token counts 1e400 / 1.5 / negative / 10^30 (``:VARIANT`` picks one;
                   without, they take turns)
``huge[:MB]``      an answer of MB mebibytes (default 16)
``gzip-bomb[:MB]`` a ~MB KiB gzip body (``Content-Encoding: gzip``) inflating to MB MiB (default 200)
``think-bomb``     ``<think>`` x 15000 and a marker
``nesting-bomb``   ``<output>`` x 1000, ``3``, ``</output>`` x 1000
``unauthorized``   401, with the message OpenAI sends for a wrong key
``not-found``      404, model not found
``blackhole``      reads the request and never answers (until the server stops)
``key-echo``       an answer containing the Authorization header it received
``redirect[:TO]``  307 to another host (``other-host``, the default: the same server under its
                   other loopback name), to this host (``same-host``), or to the URL TO;
                   requests under ``/moved/`` get the auto answer
=================  ==========================================================================
"""

from __future__ import annotations

import functools
import hashlib
import json
import random
import threading
import zlib
from collections.abc import Callable, Iterable
from dataclasses import replace

from reljudge.testing.exchange import MOVED_PREFIX, MockReply, MockRequest, Responder


def fixed(text: str) -> Responder:
    """Always answer ``text``."""
    return lambda req: MockReply(text=text)


def echo(req: MockRequest) -> MockReply:
    """Answer with the last user message."""
    return MockReply(text=req.last_user)


def from_prompt(fn: Callable[[str], str]) -> Responder:
    """Answer ``fn(prompt)`` where prompt is all message contents joined by newlines."""
    return lambda req: MockReply(text=fn(req.prompt))


def error(
    status: int, message: str | None = None, *, retry_after: float | None = None, code: str | None = None
) -> MockReply:
    """An HTTP error reply (429 with ``retry_after`` sends the ``Retry-After`` header)."""
    headers = {"Retry-After": f"{retry_after:g}"} if retry_after is not None else {}
    return MockReply(status=status, error=message or f"mock HTTP {status}", error_code=code, headers=headers)


def rate_limited(retry_after: float | None = 1.0) -> MockReply:
    return error(429, "Rate limit reached (mock)", retry_after=retry_after, code="rate_limit_exceeded")


def server_error(status: int = 500) -> MockReply:
    return error(status, "The server had an error while processing your request (mock)")


def hang() -> MockReply:
    """Never answer (until the server stops or its ``hang_s`` passes)."""
    return MockReply(hang=True)


def truncated(text: str) -> MockReply:
    """Answer ``text`` with finish reason ``length``."""
    return MockReply(text=text, finish_reason="length")


def refused(message: str = "I can't help with that.") -> MockReply:
    """A content-filter stop (finish reason ``content_filter``) with a refusal message."""
    return MockReply(text="", finish_reason="content_filter", refusal=message)


def context_too_long() -> MockReply:
    return error(
        400,
        "This model's maximum context length is 128000 tokens. However, your messages resulted in 200000 tokens.",
        code="context_length_exceeded",
    )


class Scripted:
    """Answer with ``replies`` in order (str or `MockReply` or responder), then repeat the last.

    Thread-safe; ``Scripted([rate_limited(0.1), "ok"])`` makes the first call fail once.
    """

    def __init__(self, replies: Iterable[MockReply | str | Responder]) -> None:
        self.replies = list(replies)
        if not self.replies:
            raise ValueError("Scripted needs at least one reply")
        self._i = 0
        self._lock = threading.Lock()

    def __call__(self, req: MockRequest) -> MockReply | str:
        with self._lock:
            item = self.replies[min(self._i, len(self.replies) - 1)]
            self._i += 1
        return item if isinstance(item, str) else item(req)


class PerPrompt:
    """Answer by how many times the same prompt was seen: ``replies[seen]`` (last repeats).

    Unlike `Scripted` it is independent of the order concurrent requests arrive in.
    """

    def __init__(self, replies: Iterable[MockReply | str | Responder]) -> None:
        self.replies = list(replies)
        if not self.replies:
            raise ValueError("PerPrompt needs at least one reply")

    def __call__(self, req: MockRequest) -> MockReply | str:
        item = self.replies[min(req.seen, len(self.replies) - 1)]
        return item if isinstance(item, str) else item(req)


def _unit(*parts: object) -> float:
    """A deterministic number in [0, 1) from the parts."""
    digest = hashlib.sha256("\x1f".join(map(str, parts)).encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def garble(text: str, salt: str = "") -> str:
    """Deterministic nonsense of about the same length, with no digits (unparseable)."""
    rng = random.Random(hashlib.sha256(f"{salt}|{text}".encode()).digest())
    letters = [c for c in text if not c.isdigit()] or list("lorem ipsum")
    rng.shuffle(letters)
    return "~" + "".join(letters[: max(8, len(text))]).replace("#", "%")


class FaultInjector:
    """Wrap a responder and inject faults at given rates, deterministically.

    For each request the fault is drawn from a hash of (seed, request content, times this content
    was seen), so a retry of the same prompt gets a fresh draw (retries eventually succeed when
    all rates sum below 1) and a run is reproducible whatever the request order. Faults, in draw
    order: 429 (with ``Retry-After: retry_after``), 5xx, hang, garbled text, empty text.
    ``counts`` tallies injected faults by name.
    """

    FAULTS = ("429", "5xx", "hang", "garbled", "empty")

    def __init__(
        self,
        inner: Responder,
        *,
        rate_429: float = 0.0,
        rate_5xx: float = 0.0,
        rate_hang: float = 0.0,
        rate_garbled: float = 0.0,
        rate_empty: float = 0.0,
        seed: int = 0,
        retry_after: float | None = 0.0,
    ) -> None:
        rates = (rate_429, rate_5xx, rate_hang, rate_garbled, rate_empty)
        if any(r < 0 or r > 1 for r in rates) or sum(rates) > 1:
            raise ValueError(f"fault rates must be in [0, 1] and sum to at most 1, got {rates}")
        self.inner = inner
        self.rates = dict(zip(self.FAULTS, rates, strict=True))
        self.seed = seed
        self.retry_after = retry_after
        self.counts: dict[str, int] = dict.fromkeys(self.FAULTS, 0)
        self._lock = threading.Lock()

    def fault_for(self, req: MockRequest) -> str | None:
        u = _unit(self.seed, req.content_key, req.seen)
        edge = 0.0
        for name in self.FAULTS:
            edge += self.rates[name]
            if u < edge:
                return name
        return None

    def __call__(self, req: MockRequest) -> MockReply | str:
        fault = self.fault_for(req)
        if fault is not None:
            with self._lock:
                self.counts[fault] += 1
        if fault == "429":
            return rate_limited(self.retry_after)
        if fault == "5xx":
            return server_error(500 if _unit(self.seed, req.content_key, req.seen, "code") < 0.5 else 503)
        if fault == "hang":
            return hang()
        reply = self.inner(req)
        if isinstance(reply, str):
            reply = MockReply(text=reply)
        if fault == "garbled":
            return replace(reply, text=garble(reply.text, f"{self.seed}:{req.seen}"))
        if fault == "empty":
            return replace(reply, text="")
        return reply


# --- hostile shapes --------------------------------------------------------------------------


def _auto() -> Responder:
    from reljudge.testing.auto import AutoResponder

    return AutoResponder()


def _reply(inner: Responder, req: MockRequest) -> MockReply:
    reply = inner(req)
    return MockReply(text=reply) if isinstance(reply, str) else reply


def echo_all(req: MockRequest) -> MockReply:
    """Answer with all message contents joined by newlines (a server that returns the prompt)."""
    return MockReply(text=req.prompt)


def prompt_plus(inner: Responder | None = None) -> Responder:
    """The prompt followed by ``inner``'s answer (default: auto): a server returning prompt +
    completion."""
    inner = inner or _auto()

    def answer(req: MockRequest) -> MockReply:
        reply = _reply(inner, req)
        return replace(reply, text=f"{req.prompt}\n{reply.text}")

    return answer


def list_content(inner: Responder | None = None) -> Responder:
    """``inner``'s answer (default: auto) as a list of OpenAI content parts (split in two text
    parts, plus an image part a reader must skip)."""
    inner = inner or _auto()

    def answer(req: MockRequest) -> MockReply:
        reply = _reply(inner, req)
        half = len(reply.text) // 2
        parts = [
            {"type": "text", "text": reply.text[:half]},
            {"type": "image_url", "image_url": {"url": "data:,"}},
            {"type": "text", "text": reply.text[half:]},
        ]
        return replace(reply, content=parts)

    return answer


def int_content(req: MockRequest) -> MockReply:
    """The message content is a JSON number (3), not a string."""
    return MockReply(text="3", content=3)


def dict_content(req: MockRequest) -> MockReply:
    """The message content is an object, not a string or a list."""
    return MockReply(text="##final score: 3", content={"type": "text", "text": "##final score: 3"})


#: (prompt_tokens, completion_tokens) as JSON number text
ABSURD_USAGE: dict[str, tuple[str, str]] = {
    "1e400": ("1e400", "1e400"),  # JSON readers make it infinity
    "1.5": ("1.5", "2.5"),
    "negative": ("-5", "-7"),
    "1e30": ("1" + "0" * 30, "1" + "0" * 30),  # an integer: no float reader rounds it
}


def absurd_usage(variant: str | None = None, inner: Responder | None = None) -> Responder:
    """``inner``'s answer (default: auto) with absurd token counts (`ABSURD_USAGE`); without a
    variant they take turns by request number."""
    if variant is not None and variant not in ABSURD_USAGE:
        raise ValueError(
            f"unknown absurd-usage variant {variant!r} (expected one of {', '.join(ABSURD_USAGE)})"
        )
    inner = inner or _auto()
    names = list(ABSURD_USAGE)

    def answer(req: MockRequest) -> MockReply:
        chosen = variant or names[req.index % len(names)]
        return replace(_reply(inner, req), usage_literals=ABSURD_USAGE[chosen])

    return answer


def huge(mb: float = 16) -> Responder:
    """An answer of ``mb`` mebibytes (one long word, so the mock's tokenizer stays fast)."""
    size = int(mb * 1024 * 1024)
    return lambda req: MockReply(text="x" * size)


@functools.lru_cache(maxsize=8)
def gzip_bomb_body(api: str, mb: int = 200) -> bytes:
    """A gzip-compressed chat response whose answer is ``mb`` MiB of ``x`` (about ``mb`` KiB
    compressed), built in pieces so that the whole text never exists in memory."""
    filler = "\u0000FILLER\u0000"
    if api == "ollama":
        payload: dict = {
            "model": "mock-model",
            "created_at": "2025-01-01T00:00:00Z",
            "message": {"role": "assistant", "content": filler},
            "done": True,
            "done_reason": "stop",
            "prompt_eval_count": 1,
            "eval_count": 1,
        }
    else:
        payload = {
            "id": "chatcmpl-bomb",
            "object": "chat.completion",
            "created": 0,
            "model": "mock-model",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": filler},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }
    head, _, tail = json.dumps(payload).partition(json.dumps(filler)[1:-1])
    packer = zlib.compressobj(9, zlib.DEFLATED, zlib.MAX_WBITS | 16)
    out = [packer.compress(head.encode())]
    block = b"x" * (1024 * 1024)
    for _ in range(mb):
        out.append(packer.compress(block))
    out.append(packer.compress(tail.encode()))
    out.append(packer.flush())
    return b"".join(out)


def gzip_bomb(mb: int = 200) -> Responder:
    """A small gzip body (``Content-Encoding: gzip``) that inflates to ``mb`` MiB."""

    def answer(req: MockRequest) -> MockReply:
        body = gzip_bomb_body("ollama" if req.api == "ollama" else "openai", mb)
        return MockReply(body=body, headers={"Content-Encoding": "gzip"})

    return answer


def think_bomb(n: int = 15000, marker: str = "##final score: 2") -> Responder:
    """``<think>`` n times, then a marker (a reasoning-tag regex must stay linear)."""
    text = "<think>" * n + marker
    return lambda req: MockReply(text=text)


def nesting_bomb(n: int = 1000) -> Responder:
    """``<output>`` n times, ``3``, ``</output>`` n times (a recursive reader must not overflow)."""
    text = "<output>" * n + "3" + "</output>" * n
    return lambda req: MockReply(text=text)


def unauthorized(req: MockRequest) -> MockReply:
    """401 with OpenAI's wrong-key message."""
    return error(
        401,
        "Incorrect API key provided: sk-mock****. You can find your API key at "
        "https://platform.openai.com/account/api-keys.",
        code="invalid_api_key",
    )


def not_found(req: MockRequest) -> MockReply:
    """404: the model does not exist (in the message format of each API)."""
    if req.api == "ollama":
        return error(404, f'model "{req.model}" not found, try pulling it first')
    return error(
        404,
        f"The model `{req.model}` does not exist or you do not have access to it.",
        code="model_not_found",
    )


def blackhole(req: MockRequest) -> MockReply:
    """Read the request and never answer, until the server stops."""
    return MockReply(hang=True)


def key_echo(req: MockRequest) -> MockReply:
    """An answer that repeats the Authorization header the server received."""
    return MockReply(text=f"You sent the header: {req.raw_authorization}. ##final score: 2")


def _other_host(host_header: str) -> str:
    host, _, port = host_header.rpartition(":")
    other = "localhost" if host in ("127.0.0.1", "[::1]") else "127.0.0.1"
    return f"{other}:{port}"


def redirect(to: str = "other-host", inner: Responder | None = None) -> Responder:
    """307 to another origin (``other-host``: the same server under its other loopback name, so a
    client that follows it would get an answer), to this origin (``same-host``), or to the URL
    ``to``; requests under ``/moved/`` are answered by ``inner`` (default: auto)."""
    inner = inner or _auto()

    def answer(req: MockRequest) -> MockReply | str:
        if req.path.startswith(MOVED_PREFIX + "/"):
            return inner(req)
        if to == "same-host":
            location = MOVED_PREFIX + req.path
        elif to == "other-host":
            location = (
                f"http://{_other_host(req.headers.get('host', '127.0.0.1:80'))}{MOVED_PREFIX}{req.path}"
            )
        else:
            location = to
        return MockReply(status=307, error="moved", headers={"Location": location})

    return answer


def _number(arg: str, name: str) -> float:
    try:
        value = float(arg)
    except ValueError:
        raise ValueError(f"{name}: {arg!r} is not a number") from None
    if not 0 < value <= 4096:
        raise ValueError(f"{name}: {arg!r} must be in (0, 4096]")
    return value


#: name -> the responder built from the optional ``:ARG``
_BUILDERS: dict[str, Callable[[str | None], Responder]] = {
    "auto": lambda arg: _auto(),
    "echo": lambda arg: echo,
    "echo-all": lambda arg: echo_all,
    "prompt-plus": lambda arg: prompt_plus(),
    "list-content": lambda arg: list_content(),
    "int-content": lambda arg: int_content,
    "dict-content": lambda arg: dict_content,
    "absurd-usage": lambda arg: absurd_usage(arg),
    "huge": lambda arg: huge(_number(arg, "huge") if arg else 16),
    "gzip-bomb": lambda arg: gzip_bomb(int(_number(arg, "gzip-bomb")) if arg else 200),
    "think-bomb": lambda arg: think_bomb(),
    "nesting-bomb": lambda arg: nesting_bomb(),
    "unauthorized": lambda arg: unauthorized,
    "not-found": lambda arg: not_found,
    "blackhole": lambda arg: blackhole,
    "key-echo": lambda arg: key_echo,
    "redirect": lambda arg: redirect(arg or "other-host"),
}
NAMES: tuple[str, ...] = ("fixed", *_BUILDERS)


def named(spec: str) -> Responder:
    """The responder ``NAME`` or ``NAME:ARG`` (``fixed:TEXT``, ``huge:MB``, ...); see the module
    docstring. ValueError for an unknown name."""
    name, sep, arg = spec.partition(":")
    if name == "fixed" and sep:
        return fixed(arg)
    builder = _BUILDERS.get(name)
    if builder is None:
        raise ValueError(f"unknown responder {spec!r} (expected one of: {', '.join(NAMES)}; fixed:TEXT)")
    return builder(arg if sep else None)
