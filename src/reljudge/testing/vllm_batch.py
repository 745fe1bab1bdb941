"""A stand-in for ``vllm run-batch`` (``vllm run-batch -i REQUESTS -o OUTPUT --model M``): answers an
OpenAI batch request file with a mock responder and writes the output file in vLLM's format, so
that ``judge batch export|import`` can be tested end to end without a GPU.

The output follows vLLM's ``vllm/entrypoints/openai/run_batch.py`` (``BatchRequestOutput``), one
line per request in input order:

- an answer: ``{"id": "vllm-<hex>", "custom_id", "response": {"status_code": 200, "request_id":
  "vllm-batch-<hex>", "body": <ChatCompletionResponse>}, "error": null}``;
- an error the engine reports (an unknown model, the responder's error status): ``response`` has
  the status code and no body, ``error`` is vLLM's ``ErrorResponse`` (``{"error": {"message",
  "type", "param", "code"}}``);
- a request it cannot serve (an unsupported url, a malformed line): ``make_error_request_output``,
  status 400 and ``error`` a plain message.

The body carries the fields vLLM adds to OpenAI's (``stop_reason``, ``prompt_logprobs``,
``kv_transfer_params``, ...). ``fail_share`` answers a deterministic share of the requests with
a 500 error; ``stop_after`` ends the output after that many lines and a torn one, as a killed
engine leaves it.

Run it as ``python -m reljudge.testing.vllm_batch -i REQUESTS -o OUTPUT --model M``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import uuid
from pathlib import Path
from typing import Any

from reljudge.testing.exchange import MockReply, MockRequest, Responder
from reljudge.testing.protocols import answer_of, openai_body

CHAT_URL = "/v1/chat/completions"
#: the longest request line read (vLLM itself has no bound; a test tool needs one)
MAX_REQUEST_LINE_BYTES = 64 * 1024 * 1024


def run_batch(
    requests: Path,
    output: Path,
    *,
    model: str,
    responder: Responder | None = None,
    fail_share: float = 0.0,
    stop_after: int | None = None,
) -> int:
    """Answer every line of ``requests`` into ``output`` (vLLM's format); the lines written."""
    from reljudge.testing.auto import AutoResponder

    answer = responder if responder is not None else AutoResponder()
    seen: dict[str, int] = {}
    written = 0
    with Path(requests).open("rb") as src, Path(output).open("wb") as dst:
        for index, raw in enumerate(iter(lambda: src.readline(MAX_REQUEST_LINE_BYTES), b"")):
            if not raw.strip():
                continue
            if stop_after is not None and written >= stop_after:
                dst.write(b'{"id": "vllm-torn", "custom_id": "')  # a killed engine's last line
                break
            line = _output_line(raw, index, model, answer, seen, fail_share)
            dst.write(json.dumps(line, ensure_ascii=False).encode("utf-8") + b"\n")
            written += 1
    return written


def _output_line(
    raw: bytes, index: int, model: str, responder: Responder, seen: dict[str, int], fail_share: float
) -> dict[str, Any]:
    try:
        request = json.loads(raw)
        custom_id = request["custom_id"]
        url, body = request["url"], request["body"]
        if not isinstance(custom_id, str) or not isinstance(body, dict):
            raise TypeError("custom_id must be a string and body an object")
    except (ValueError, KeyError, TypeError) as err:  # vLLM fails the whole file here; a test tool goes on
        return _error_line("", f"malformed request line: {err}")
    if url != CHAT_URL:
        return _error_line(custom_id, f"URL {url} was used. Supported endpoints: {CHAT_URL}.")
    if body.get("model") != model:
        return _engine_error(
            custom_id, 404, "NotFoundError", f"The model `{body.get('model')}` does not exist."
        )
    if fail_share > 0 and _draw(custom_id) < fail_share:
        return _engine_error(custom_id, 500, "InternalServerError", "mock engine failure")
    messages = body.get("messages")
    if not isinstance(messages, list):
        messages = []
    req = MockRequest(api="openai", model=model, messages=messages, body=body, index=index, seen=0)
    req.seen = seen.get(req.content_key, 0)
    seen[req.content_key] = req.seen + 1
    try:
        reply = responder(req)
    except Exception as err:  # a broken responder answers 500 so the test sees it
        reply = MockReply(status=500, error=f"mock responder failed: {type(err).__name__}: {err}")
    if isinstance(reply, str):
        reply = MockReply(text=reply)
    if reply.status != 200:
        return _engine_error(custom_id, reply.status, "BadRequestError", reply.error or "mock error")
    payload, literals = openai_body(req, answer_of(req, reply), reply)
    if literals:  # the hostile raw-number shapes need the HTTP server's JSON text
        return _engine_error(custom_id, 500, "InternalServerError", "usage literals are not served here")
    payload["id"] = f"chatcmpl-{uuid.uuid4().hex}"
    payload["system_fingerprint"] = None
    payload["service_tier"] = None
    payload["prompt_logprobs"] = None
    payload["kv_transfer_params"] = None
    for choice in payload["choices"]:
        choice["stop_reason"] = None
        message = choice["message"]
        message.update({"annotations": None, "audio": None, "function_call": None, "tool_calls": []})
        message["reasoning_content"] = None
    return {
        "id": f"vllm-{uuid.uuid4().hex}",
        "custom_id": custom_id,
        "response": {"status_code": 200, "request_id": f"vllm-batch-{uuid.uuid4().hex}", "body": payload},
        "error": None,
    }


def _error_line(custom_id: str, message: str) -> dict[str, Any]:
    """vLLM's ``make_error_request_output``."""
    return {
        "id": f"vllm-{uuid.uuid4().hex}",
        "custom_id": custom_id,
        "response": {"status_code": 400, "request_id": f"vllm-batch-{uuid.uuid4().hex}", "body": None},
        "error": message,
    }


def _engine_error(custom_id: str, code: int, kind: str, message: str) -> dict[str, Any]:
    """An ``ErrorResponse`` the serving engine returned."""
    return {
        "id": f"vllm-{uuid.uuid4().hex}",
        "custom_id": custom_id,
        "response": {"status_code": code, "request_id": f"vllm-batch-{uuid.uuid4().hex}", "body": None},
        "error": {"error": {"message": message, "type": kind, "param": None, "code": code}},
    }


def _draw(custom_id: str) -> float:
    return int.from_bytes(hashlib.sha256(f"fail:{custom_id}".encode()).digest()[:8], "big") / 2**64


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m reljudge.testing.vllm_batch", description="A mock of `vllm run-batch`."
    )
    parser.add_argument("-i", "--input-file", required=True, type=Path)
    parser.add_argument("-o", "--output-file", required=True, type=Path)
    parser.add_argument("--model", required=True)
    parser.add_argument("--fail-share", type=float, default=0.0)
    parser.add_argument("--stop-after", type=int, default=None)
    args = parser.parse_args(argv)
    n = run_batch(
        args.input_file,
        args.output_file,
        model=args.model,
        fail_share=args.fail_share,
        stop_after=args.stop_after,
    )
    print(f"wrote {n} output lines to {args.output_file}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
