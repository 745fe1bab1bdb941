"""The mock server's answers to the vision judges' prompts (`vision_rules`, tried first by the
auto responder): a prompt that shows images and asks for ``Final grade: N`` gets a grade 0-3, and
one that shows grids X and Y and asks for one of the five labels (``X-much-better`` ..
``Y-much-better``) gets one. Both are deterministic hashes of what the request shows: the grade of
(the prompt's text, the image), the comparison of the two grids' scores, each a hash of the
prompt's text and its images in order -- so showing the grids the other way round flips the
answer, and the same request always gets the same one. An image is known by the SHA-256 of its
bytes (a data URL) or by its URL. The hostile image modes are in
`reljudge.testing.responders.images`.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re

from reljudge.testing.exchange import MockRequest
from reljudge.testing.rules import Rule, stable_choice

_MAGIC = (b"\x89PNG\r\n\x1a\n", b"\xff\xd8\xff", b"GIF87a", b"GIF89a")
_LABELS = ("X-much-better", "X-better", "same", "Y-better", "Y-much-better")
_PROMPT_LINE = re.compile(r"^Prompt:[ \t]*(.*)$", re.MULTILINE)


def is_image(data: bytes) -> bool:
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


__all__ = ["image_key", "is_image", "vision_rules"]
