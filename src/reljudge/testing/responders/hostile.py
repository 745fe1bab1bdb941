"""Hostile responders for `MockLLMServer`: the shapes of answer a client must survive (content
that is not a string, absurd token counts, huge answers and gzip bombs, reasoning-tag and nesting
bombs, wrong keys, unknown models, silence, echoed credentials, redirects), and OpenAI's usage
details (cached and reasoning tokens), sane or absurd.
"""

from __future__ import annotations

import functools
import json
import zlib
from dataclasses import replace

from reljudge.testing.exchange import MOVED_PREFIX, MockReply, MockRequest, Responder, count_tokens
from reljudge.testing.responders.scripted import error


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
    "1e12": ("1" + "0" * 12, "1" + "0" * 12),  # below any clamp of absurd numbers, far above a request
}


def absurd_usage(variant: str | None = None, inner: Responder | None = None) -> Responder:
    """``inner``'s answer (default: auto) with absurd token counts (`ABSURD_USAGE`); without a
    variant they take turns by request number (all but ``1e12``)."""
    if variant is not None and variant not in ABSURD_USAGE:
        raise ValueError(
            f"unknown absurd-usage variant {variant!r} (expected one of {', '.join(ABSURD_USAGE)})"
        )
    inner = inner or _auto()
    names = [name for name in ABSURD_USAGE if name != "1e12"]

    def answer(req: MockRequest) -> MockReply:
        chosen = variant or names[req.index % len(names)]
        return replace(_reply(inner, req), usage_literals=ABSURD_USAGE[chosen])

    return answer


def no_usage(inner: Responder | None = None) -> Responder:
    """``inner``'s answer (default: auto) without any usage (a provider that sends none)."""
    inner = inner or _auto()
    return lambda req: replace(_reply(inner, req), no_usage=True)


def inflated_usage(factor: float = 10, inner: Responder | None = None) -> Responder:
    """``inner``'s answer (default: auto) reporting ``factor`` times the tokens it really used."""
    from reljudge.testing.protocols import billed_tokens

    inner = inner or _auto()

    def answer(req: MockRequest) -> MockReply:
        reply = _reply(inner, req)
        prompt, completion = billed_tokens(req, reply)
        return replace(reply, prompt_tokens=int(prompt * factor), completion_tokens=int(completion * factor))

    return answer


def late(seconds: float = 2.0, inner: Responder | None = None) -> Responder:
    """``inner``'s answer (default: auto) after ``seconds`` (past a client's timeout: the
    provider still does the work, and bills it)."""
    inner = inner or _auto()
    return lambda req: replace(_reply(inner, req), delay_s=seconds)


#: REASONING_TOKENS: the reasoning tokens `usage_details` adds to each answer's completion tokens
REASONING_TOKENS = 16
#: (prompt_tokens_details, completion_tokens_details) as JSON text: counts no provider should send
ABSURD_DETAILS: dict[str, tuple[str, str]] = {
    "1e400": ('{"cached_tokens": 1e400}', '{"reasoning_tokens": 1e400}'),  # infinity to JSON readers
    "negative": ('{"cached_tokens": -5}', '{"reasoning_tokens": -7}'),
    "over": ('{"cached_tokens": 1' + "0" * 30 + "}", '{"reasoning_tokens": 1' + "0" * 30 + "}"),
    "1.5": ('{"cached_tokens": 1.5}', '{"reasoning_tokens": 2.5}'),
    "string": ('{"cached_tokens": "12"}', '{"reasoning_tokens": "3"}'),
    "shape": ('"lots"', "[1, 2]"),  # the details are not objects
    "null": ("null", "null"),
}


def usage_details(variant: str | None = None, inner: Responder | None = None) -> Responder:
    """``inner``'s answer (default: auto) with OpenAI's usage details: half the prompt tokens read
    from the provider's cache (``prompt_tokens_details.cached_tokens``) and `REASONING_TOKENS`
    reasoning tokens added to the completion (``completion_tokens_details.reasoning_tokens``), as a
    reasoning model with prompt caching reports them; a variant (`ABSURD_DETAILS`) sends absurd
    details instead."""
    if variant is not None and variant not in ABSURD_DETAILS:
        raise ValueError(
            f"unknown usage-details variant {variant!r} (expected one of {', '.join(ABSURD_DETAILS)})"
        )
    inner = inner or _auto()

    def answer(req: MockRequest) -> MockReply:
        reply = _reply(inner, req)
        if variant is not None:
            return replace(reply, detail_literals=ABSURD_DETAILS[variant])
        prompt = sum(count_tokens(str(m.get("content", ""))) + 3 for m in req.messages)
        completion = count_tokens(reply.text) + REASONING_TOKENS
        details = (f'{{"cached_tokens": {prompt // 2}}}', f'{{"reasoning_tokens": {REASONING_TOKENS}}}')
        return replace(reply, prompt_tokens=prompt, completion_tokens=completion, detail_literals=details)

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
