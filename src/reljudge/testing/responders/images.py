"""Hostile image modes of the mock server.

- `image_check` (``--responder image-check[:MB]``): a provider's check of the request's image
  parts before the auto answer -- a part that is not an object, a URL that is not a string, a
  data URL that is not base64 or not a PNG/JPEG/WebP/GIF, an image over MB mebibytes (default
  20, OpenAI's limit) or a URL of another scheme than http(s) or data is a 400 ``invalid_image``.
- `image_parts` (``--responder image-parts[:VARIANT]``): the auto answer as a list of content
  parts with an image part a reader must skip: ``malformed`` (the default: an ``image_url`` that
  is a number, and a data URL that is not base64) or ``huge`` (a 9 MiB image as a data URL: the
  body is over the client's response bound).
"""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import replace
from typing import Any

from reljudge.testing.exchange import MockReply, MockRequest, Responder
from reljudge.testing.vision import is_image


def _auto() -> Responder:
    from reljudge.testing.auto import AutoResponder

    return AutoResponder()


def _reply(inner: Responder, req: MockRequest) -> MockReply:
    reply = inner(req)
    return MockReply(text=reply) if isinstance(reply, str) else reply


def image_problem(req: MockRequest, max_bytes: int) -> str | None:
    """What is wrong with the request's image parts (module docstring), None when nothing."""
    for m in req.messages:
        content = m.get("content")
        for part in content if isinstance(content, list) else ():
            if not isinstance(part, dict):
                return "a content part is not an object"
            if part.get("type") != "image_url":
                continue
            inner = part.get("image_url")
            url = inner.get("url") if isinstance(inner, dict) else None
            if not isinstance(url, str):
                return "an image_url part has no url string"
            if url.startswith("data:"):
                head, _, payload = url.partition(",")
                if not head.endswith(";base64"):
                    return "an image data URL must be base64"
                if len(payload) * 3 // 4 > max_bytes:
                    return f"an image is larger than {max_bytes} bytes"
                try:
                    data = base64.b64decode(payload, validate=True)
                except (binascii.Error, ValueError):
                    return "an image data URL is not valid base64"
                if not is_image(data):
                    return "an image is not a PNG, JPEG, WebP or GIF"
            elif not re.match(r"^https?://", url):
                return "an image URL must be http(s) or a data URL"
    return None


def image_check(max_mb: float = 20, inner: Responder | None = None) -> Responder:
    """A 400 ``invalid_image`` for a request with a bad image part, else ``inner`` (auto)."""
    inner = inner or _auto()
    limit = int(max_mb * 1024 * 1024)

    def answer(req: MockRequest) -> MockReply:
        problem = image_problem(req, limit)
        if problem is not None:
            return MockReply(status=400, error=f"Invalid image: {problem}.", error_code="invalid_image")
        return _reply(inner, req)

    return answer


def image_parts(variant: str = "malformed", inner: Responder | None = None) -> Responder:
    """The auto answer as content parts with a hostile image part (module docstring)."""
    if variant not in ("malformed", "huge"):
        raise ValueError(f"image-parts: unknown variant {variant!r} (malformed or huge)")
    inner = inner or _auto()

    def answer(req: MockRequest) -> MockReply:
        reply = _reply(inner, req)
        bad: list[dict[str, Any]]
        if variant == "huge":
            blob = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\0" * (9 * 1024 * 1024)).decode("ascii")
            bad = [{"type": "image_url", "image_url": {"url": f"data:image/png;base64,{blob}"}}]
        else:
            bad = [
                {"type": "image_url", "image_url": 42},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,!!not-base64!!"}},
            ]
        return replace(reply, content=[{"type": "text", "text": reply.text}, *bad])

    return answer


__all__ = ["image_check", "image_parts", "image_problem"]
