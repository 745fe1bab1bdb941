"""The three chat APIs the mock server speaks, as payloads: OpenAI chat completions, Ollama's
native chat (one JSON object, or NDJSON chunks when streamed) and Anthropic's Messages API.

`answer_of` turns a request and its `MockReply` into the numbers every API reports (text cut at
``max_tokens``/``num_predict`` with finish reason ``length``, token counts, logprobs); the
``*_body`` functions wrap them in each API's shape. Hostile shapes: a reply's ``content`` (any
JSON value) replaces the message content, and ``usage_literals`` are written verbatim as the
token counts (placeholders that `with_literals` replaces in the JSON text).
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from reljudge.testing.exchange import NOT_SET, TOKEN, MockReply, MockRequest, count_tokens


@dataclass
class Answer:
    """What the mock answers, before any API's shape."""

    text: str
    finish: str
    prompt_tokens: int
    completion_tokens: int
    logprobs: list[dict[str, Any]] | None


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
    return ""


def anthropic_messages(body: dict[str, Any]) -> list[dict[str, Any]]:
    """An Anthropic request's system prompt and messages as role/content-string dicts."""
    out: list[dict[str, Any]] = []
    system = body.get("system")
    if system:
        out.append({"role": "system", "content": _text_of(system)})
    for m in body.get("messages") or []:
        if isinstance(m, dict):
            out.append({"role": m.get("role", "user"), "content": _text_of(m.get("content"))})
    return out


def with_literals(data: str, literals: dict[str, str]) -> str:
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
    """Usage numbers, or placeholders that `with_literals` replaces by the literal JSON numbers."""
    if literals is None:
        return (prompt_tokens, completion_tokens, prompt_tokens + completion_tokens), {}
    marks = {"@@prompt_tokens@@": literals[0], "@@completion_tokens@@": literals[1], "@@total@@": "2"}
    return ("@@prompt_tokens@@", "@@completion_tokens@@", "@@total@@"), marks


def _cut(text: str, max_tokens: int | None) -> tuple[str, int, bool]:
    """(text cut to max_tokens, completion tokens, was cut)."""
    spans = [m.span() for m in TOKEN.finditer(text)]
    if max_tokens is None or len(spans) <= max_tokens:
        return text, len(spans), False
    end = spans[max_tokens - 1][1] if max_tokens > 0 else 0
    return text[:end], max_tokens, True


def answer_of(req: MockRequest, reply: MockReply) -> Answer:
    """The answer to ``req``: the reply's text cut at the request's token limit, its token
    counts (the reply's own when it sets them) and, when asked for, logprobs."""
    text, completion_tokens, cut = _cut(reply.text, req.max_tokens)
    finish = reply.finish_reason or ("length" if cut else "stop")
    prompt_tokens = (
        reply.prompt_tokens
        if reply.prompt_tokens is not None
        else sum(count_tokens(str(m.get("content", ""))) + 3 for m in req.messages)
    )
    if reply.completion_tokens is not None:
        completion_tokens = reply.completion_tokens
    tokens = TOKEN.findall(text)
    top = req.body.get("top_logprobs") or 0
    logprobs = _logprob_items(tokens, int(top) if isinstance(top, int) else 0) if req.wants_logprobs else None
    if reply.logprobs is not NOT_SET:
        logprobs = copy.deepcopy(reply.logprobs) if req.wants_logprobs else None
    return Answer(text, finish, prompt_tokens, completion_tokens, logprobs)


def billed_tokens(req: MockRequest, reply: MockReply) -> tuple[int, int]:
    """The (prompt, completion) tokens the mock really used for ``req``: what an honest provider
    bills, whatever usage the reply reports (none, inflated, absurd)."""
    prompt = sum(count_tokens(str(m.get("content", ""))) + 3 for m in req.messages)
    return prompt, _cut(reply.text, req.max_tokens)[1]


def error_body(api: str, status: int, message: str, code: str | None) -> dict[str, Any]:
    """An error as ``api`` sends it."""
    kind = {429: "rate_limit_error", 401: "authentication_error"}.get(status, "invalid_request_error")
    if status >= 500:
        kind = "server_error"
    if api == "openai":
        return {"error": {"message": message, "type": kind, "param": None, "code": code}}
    if api == "anthropic":
        return {"type": "error", "error": {"type": kind, "message": message}}
    return {"error": message}


def openai_body(req: MockRequest, ans: Answer, reply: MockReply) -> tuple[dict[str, Any], dict[str, str]]:
    """An OpenAI chat completion, and the literals to write into its JSON text."""
    logprobs = ans.logprobs
    if logprobs is not None:
        for item in logprobs:
            item["bytes"] = _token_bytes(item["token"])
            for alt in item["top_logprobs"]:
                alt["bytes"] = _token_bytes(alt["token"])
    content = ans.text if reply.content is NOT_SET else reply.content
    usage, literals = _usage(ans.prompt_tokens, ans.completion_tokens, reply.usage_literals)
    payload: dict[str, Any] = {
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
                "finish_reason": ans.finish,
            }
        ],
        "usage": {
            "prompt_tokens": usage[0],
            "completion_tokens": usage[1],
            "total_tokens": usage[2],
        },
    }
    if reply.no_usage:
        del payload["usage"]
        return payload, {}
    if reply.detail_literals is not None:  # OpenAI's usage details, as JSON text
        payload["usage"]["prompt_tokens_details"] = "@@prompt_details@@"
        payload["usage"]["completion_tokens_details"] = "@@completion_details@@"
        literals = {
            **literals,
            "@@prompt_details@@": reply.detail_literals[0],
            "@@completion_details@@": reply.detail_literals[1],
        }
    return payload, literals


def anthropic_body(req: MockRequest, ans: Answer, reply: MockReply) -> tuple[dict[str, Any], dict[str, str]]:
    """An Anthropic message, and the literals to write into its JSON text."""
    content = [{"type": "text", "text": ans.text}] if reply.content is NOT_SET else reply.content
    usage, literals = _usage(ans.prompt_tokens, ans.completion_tokens, reply.usage_literals)
    payload = {
        "id": f"msg_mock_{req.index}",
        "type": "message",
        "role": "assistant",
        "model": req.model,
        "content": content,
        "stop_reason": "max_tokens" if ans.finish == "length" else "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": usage[0], "output_tokens": usage[1]},
    }
    if reply.no_usage:
        del payload["usage"]
    return payload, literals


def ollama_body(req: MockRequest, ans: Answer, reply: MockReply) -> tuple[dict[str, Any], dict[str, str]]:
    """Ollama's final chat object (the whole answer when not streamed), and the literals to
    write into its JSON text."""
    created = datetime.now(timezone.utc).isoformat().replace("+00:00", "Z")  # noqa: UP017
    content = ans.text if reply.content is NOT_SET else reply.content
    usage, literals = _usage(ans.prompt_tokens, ans.completion_tokens, reply.usage_literals)
    final: dict[str, Any] = {
        "model": req.model,
        "created_at": created,
        "message": {"role": "assistant", "content": content},
        "done": True,
        "done_reason": ans.finish,
        "total_duration": 1000,
        "load_duration": 0,
        "prompt_eval_count": usage[0],
        "prompt_eval_duration": 500,
        "eval_count": usage[1],
        "eval_duration": 500,
    }
    if ans.logprobs is not None:
        final["logprobs"] = ans.logprobs
    if reply.no_usage:
        del final["prompt_eval_count"], final["eval_count"]
    return final, literals


def ollama_stream(text: str, final: dict[str, Any]) -> bytes:
    """Ollama's streamed answer (its default): NDJSON, one chunk per token, then the final
    summary (``final`` without its text)."""
    pieces = [m.group(0) for m in re.finditer(r"\S+\s*|\s+", text)]
    lines = [
        json.dumps(
            {
                "model": final["model"],
                "created_at": final["created_at"],
                "message": {"role": "assistant", "content": p},
                "done": False,
            }
        )
        for p in pieces
    ]
    final_chunk = dict(final, message={"role": "assistant", "content": ""})
    lines.append(json.dumps(final_chunk))
    return ("\n".join(lines) + "\n").encode("utf-8")
