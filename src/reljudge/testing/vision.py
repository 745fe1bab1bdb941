"""The mock server and images: answers to the vision judges' prompts, a check of the image parts
a request carries, and hostile answers with image parts.

- Rules of the auto responder (`vision_rules`): a prompt that shows images and asks for
  ``Final grade: N`` gets a grade 0-3, and one that shows grids X and Y and asks for one of the
  five labels (``X-much-better`` .. ``Y-much-better``) gets one. Both are deterministic hashes of
  what the request shows: the grade of (the prompt's text, the image), the comparison of the
  two grids' scores, each a hash of the prompt's text and its images in order -- so showing the
  grids the other way round flips the answer, and the same request always gets the same one.
  An image is known by the SHA-256 of its bytes (a data URL) or by its URL.
- `image_check` (``--responder image-check[:MB]``): a provider's check of the request's image
  parts before the auto answer -- a part that is not an object, a URL that is not a string, a
  data URL that is not base64 or not a PNG/JPEG/WebP/GIF, an image over MB mebibytes (default
  20, OpenAI's limit) or a URL of another scheme than http(s) or data is a 400 ``invalid_image``.
- `image_parts` (``--responder image-parts[:VARIANT]``): the auto answer as a list of content
  parts with an image part a reader must skip: ``malformed`` (the default: an ``image_url`` that
  is a number, and a data URL that is not base64) or ``huge`` (a 12 MiB data URL: the body is
  over the client's response bound).

The mock stands alone: its sniffing of image bytes is its own.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
from dataclasses import replace
from typing import Any

from reljudge.testing.exchange import MockReply, MockRequest, Responder
from reljudge.testing.rules import Rule, stable_choice

_MAGIC = (b"\x89PNG\r\n\x1a\n", b"\xff\xd8\xff", b"GIF87a", b"GIF89a")
_LABELS = ("X-much-better", "X-better", "same", "Y-better", "Y-much-better")
_PROMPT_LINE = re.compile(r"^Prompt:[ \t]*(.*)$", re.MULTILINE)


def _is_image(data: bytes) -> bool:
    return data.startswith(_MAGIC) or (data[:4] == b"RIFF" and data[8:12] == b"WEBP")


def image_key(url: str) -> str:
    """What an image part is known by: the SHA-256 of a data URL's bytes, else the URL."""
    if url.startswith("data:"):
        _, _, payload = url.partition(",")
        try:
            return hashlib.sha256(base64.b64decode(payload, validate=True)).hexdigest()
        except (binascii.Error, ValueError):
            return url[:64]
    return url


def _prompt_text(req: MockRequest) -> str:
    found = _PROMPT_LINE.search(req.last_user)
    return found.group(1).strip() if found else ""


def _grade(req: MockRequest) -> str:
    keys = [image_key(u) for u in req.image_urls]
    return f"Final grade: {stable_choice(_prompt_text(req) + '|' + '|'.join(keys), 4)}"


def _grids(req: MockRequest) -> str:
    keys = [image_key(u) for u in req.image_urls]
    half = len(keys) // 2
    prompt = _prompt_text(req)
    x = stable_choice(prompt + "|" + "|".join(keys[:half]), 1000)
    y = stable_choice(prompt + "|" + "|".join(keys[half:]), 1000)
    diff = y - x  # > 0: Y better
    if abs(diff) < 100:
        return "same"
    strength = 2 if abs(diff) >= 400 else 1
    return _LABELS[2 + strength * (1 if diff > 0 else -1)]


def vision_rules() -> list[Rule]:
    """The rules for the vision judges' prompts (module docstring)."""
    return [
        Rule(
            "vision-grade",
            lambda r: bool(r.image_urls) and "Final grade:" in r.prompt,
            _grade,
        ),
        Rule(
            "vision-grids",
            lambda r: bool(r.image_urls) and "Grid X" in r.prompt and "Y-much-better" in r.prompt,
            _grids,
        ),
    ]


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
                if not _is_image(data):
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


__all__ = ["image_check", "image_key", "image_parts", "image_problem", "vision_rules"]
