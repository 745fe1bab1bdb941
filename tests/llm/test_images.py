"""Images in chat messages (`reljudge.llm.images`, `reljudge.io.image_files`): content parts, the
hashed and wire forms (no base64 kept), bounds and types by magic bytes, the tile rule, and the
client sending them to the mock server -- or refusing for a backend that cannot."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json

import pytest

from _images import gif, jpeg, png, webp
from reljudge.errors import InputError
from reljudge.io.image_files import check_url, describe_image_file, dimensions, read_image_file, sniff
from reljudge.llm import ClientConfig, LLMClient
from reljudge.llm.image_messages import attach_images, placeholder
from reljudge.llm.images import (
    ImageChanged,
    ImagePart,
    TextPart,
    content_image_tokens,
    image_bound,
    image_from_bytes,
    image_from_file,
    image_from_url,
    image_tokens,
    tiles,
)
from reljudge.llm.tokens import TokenCounter
from reljudge.llm.types import Message
from reljudge.llm.usage_bound import bytes_bound
from reljudge.records import messages_sha256
from reljudge.testing import MockLLMServer


def test_types_by_magic_bytes_and_sizes_from_headers():
    cases = {
        "image/png": png(7, 5),
        "image/gif": gif(9, 4),
        "image/jpeg": jpeg(640, 480),
        "image/webp": webp(300, 200),
    }
    sizes = {"image/png": (7, 5), "image/gif": (9, 4), "image/jpeg": (640, 480), "image/webp": (300, 200)}
    for media_type, data in cases.items():
        assert sniff(data) == media_type
        assert dimensions(data, media_type) == sizes[media_type]
    assert sniff(b"%PDF-1.7") is None and sniff(b"") is None
    assert dimensions(b"\x89PNG\r\n\x1a\n", "image/png") is None  # a header cut short: unknown


def test_a_file_is_read_once_bounded_and_checked(tmp_path):
    good = tmp_path / "a.png"
    good.write_bytes(png())
    assert read_image_file(good) == png()
    named = tmp_path / "b.jpg"  # the name says JPEG, the bytes say PNG: the bytes win
    named.write_bytes(png())
    assert image_from_bytes(read_image_file(named)).media_type == "image/png"
    cases = {
        "missing.png": ("image file not found", None),
        "text.png": ("not a PNG, JPEG, WebP or GIF", b"hello"),
        "empty.png": ("an empty file", b""),
        "big.png": ("more than the 100", png() + b"\0" * 200),
    }
    for name, (message, data) in cases.items():
        if data is not None:
            (tmp_path / name).write_bytes(data)
        with pytest.raises(ValueError, match=message):
            read_image_file(tmp_path / name, max_bytes=100)
    with pytest.raises(ValueError, match="is a directory"):
        read_image_file(tmp_path)


def test_only_http_urls_are_sent_as_urls():
    assert check_url("https://example.org/a.png") == "https://example.org/a.png"
    for bad in ("file:///etc/passwd", "ftp://host/a.png", "javascript:alert(1)", "http://", "s3://b/k"):
        with pytest.raises(ValueError):
            check_url(bad)


def test_hashed_form_covers_the_bytes_and_holds_no_base64():
    image = image_from_bytes(png(4, 3, (1, 2, 3)))
    other = image_from_bytes(png(4, 3, (1, 2, 4)))
    message = Message("user", (TextPart("Grade this:"), ImagePart(image)))
    hashed = json.dumps(message.to_dict())
    wire = message.to_wire()
    payload = base64.b64encode(png(4, 3, (1, 2, 3))).decode()
    assert payload not in hashed and image.sha256 in hashed and '"width": 4' in hashed
    assert wire["content"][1]["image_url"]["url"] == f"data:image/png;base64,{payload}"
    changed = Message("user", (TextPart("Grade this:"), ImagePart(other)))
    assert messages_sha256([message]) != messages_sha256([changed])
    assert messages_sha256([message]) == messages_sha256(
        [Message("user", (TextPart("Grade this:"), ImagePart(image)))]
    )
    url = Message("user", (ImagePart(image_from_url("https://example.org/x.png")),))
    assert url.to_wire()["content"][0]["image_url"]["url"] == "https://example.org/x.png"
    # OpenAI-shaped dicts are coerced (and checked) the same way
    coerced = Message.coerce(
        {
            "role": "user",
            "content": [{"type": "image_url", "image_url": {"url": f"data:image/png;base64,{payload}"}}],
        }
    )
    assert coerced.to_dict()["content"][0]["image_url"]["sha256"] == image.sha256
    with pytest.raises(ValueError):
        Message.coerce(
            {
                "role": "user",
                "content": [{"type": "image_url", "image_url": {"url": "data:image/png;base64,!!"}}],
            }
        )
    with pytest.raises(ValueError):
        Message.coerce(
            {"role": "user", "content": [{"type": "image_url", "image_url": {"url": "file:///x.png"}}]}
        )
    with pytest.raises(TypeError):
        Message("user", ())


@pytest.mark.slow  # loads tiktoken's encoding
def test_tile_rule_estimate_and_bound():
    assert tiles(512, 512) == 1 and tiles(1024, 1024) == 4  # 1024 -> 768: 2 x 2 tiles
    assert tiles(2048, 4096) == 6  # 1024 x 2048 -> 768 x 1536: 2 x 3
    assert tiles(None, None) == 8 and tiles(4000, 1500) == 8  # unknown: the largest, 2048 x 768
    small = ImagePart(image_from_bytes(png(4, 3)))
    assert image_tokens(small) == 85 + 170 and image_bound(small) == 2833 + 5667
    assert image_tokens(ImagePart(small.image, "low")) == 85
    assert image_tokens(ImagePart(image_from_url("https://x.org/a.png"))) == 85 + 170 * 8
    message = Message("user", (TextPart("hi"), small, small))
    assert content_image_tokens(message.to_dict()["content"]) == 2 * 255
    # the client's bounds and counts see the images in the hashed form
    text_only = bytes_bound([{"role": "user", "content": "hi"}])
    assert bytes_bound([message.to_dict()]) == text_only + 2 * (2833 + 5667)
    counter = TokenCounter("gpt-4o-mini")
    assert (
        counter.messages([message.to_dict()]) == counter.messages([{"role": "user", "content": "hi"}]) + 510
    )


def test_markers_become_image_parts():
    marker = placeholder()
    image = ImagePart(image_from_bytes(png()))
    rendered = [
        {"role": "system", "content": "be careful"},
        {"role": "user", "content": f"Look:\n{marker}\nGrade it."},
    ]
    messages = attach_images(rendered, {marker: (TextPart("[1]"), image)})
    assert messages[0].content == "be careful"
    assert messages[1].content == (TextPart("Look:\n[1]"), image, TextPart("\nGrade it."))
    with pytest.raises(ValueError, match="not in the rendered prompt"):
        attach_images(rendered, {placeholder(): (image,)})


@pytest.mark.slow
def test_the_client_sends_images_and_a_backend_without_them_refuses(tmp_path):
    image = image_from_bytes(png())
    message = Message("user", (TextPart("Prompt: a fox\nFinal grade: N"), ImagePart(image)))
    with MockLLMServer() as srv:
        config = ClientConfig(model="openai/mock", base_url=srv.openai_url, cache_path=tmp_path / "c.sqlite")

        async def ask(cfg: ClientConfig):
            async with LLMClient(cfg) as client:
                return await client.chat([message])

        result = asyncio.run(ask(config))
        assert result.status == "ok" and result.text.startswith("Final grade: ")
        sent = srv.requests[0].messages[0]["content"]
        assert sent[1]["image_url"]["url"].startswith("data:image/png;base64,")
        assert base64.b64encode(png()).decode() not in json.dumps(result.prompt)
        again = asyncio.run(ask(config))  # the cache key covers the image: a hit
        assert again.cached and again.text == result.text and srv.calls == 1
        other = Message(
            "user", (TextPart("Prompt: a fox\nFinal grade: N"), ImagePart(image_from_bytes(png(5, 3))))
        )

        async def ask_other():
            async with LLMClient(config) as client:
                return await client.chat([other])

        assert not asyncio.run(ask_other()).cached and srv.calls == 2
        ollama = ClientConfig(model="ollama/llava", base_url=srv.ollama_url, use_cache=False)
        with pytest.raises(InputError, match="cannot send images"):
            asyncio.run(ask(ollama))
        assert srv.calls == 2


def test_a_file_image_holds_no_bytes_and_is_read_and_checked_when_its_request_is_built(tmp_path):
    path = tmp_path / "a.png"
    path.write_bytes(png(4, 3))
    image = image_from_file(describe_image_file(path))
    assert image.data == b"" and image.sha256 == hashlib.sha256(png(4, 3)).hexdigest()
    assert (image.media_type, image.size, image.width, image.height) == ("image/png", len(png(4, 3)), 4, 3)
    hashed = ImagePart(image).hashed()
    assert hashed == ImagePart(image_from_bytes(png(4, 3))).hashed()  # the same key as the bytes'
    wire = ImagePart(image).wire()["image_url"]["url"]
    assert wire == "data:image/png;base64," + base64.b64encode(png(4, 3)).decode()
    path.write_bytes(png(4, 3, (1, 1, 1)))  # changed after it was read: not sent under the old hash
    with pytest.raises(ImageChanged, match=r"a\.png changed after the run read it .*not sent"):
        ImagePart(image).wire()
    path.unlink()
    with pytest.raises(ImageChanged, match="cannot be read again.*not found"):
        ImagePart(image).wire()
    assert ImagePart(image).hashed() == hashed


@pytest.mark.slow
def test_the_client_reads_a_file_image_only_for_a_request_it_sends(tmp_path):
    path = tmp_path / "a.png"
    path.write_bytes(png(6, 2))
    image = image_from_file(describe_image_file(path))
    message = Message("user", (TextPart("Prompt: a fox\nFinal grade: N"), ImagePart(image)))
    with MockLLMServer() as srv:
        config = ClientConfig(model="openai/mock", base_url=srv.openai_url, cache_path=tmp_path / "c.sqlite")

        async def ask():
            async with LLMClient(config) as client:
                return await client.chat([message])

        first = asyncio.run(ask())
        assert first.status == "ok" and srv.calls == 1
        path.write_bytes(png(6, 2, (0, 0, 0)))  # a cache hit reads no file
        assert asyncio.run(ask()).cached and srv.calls == 1
        config = ClientConfig(model="openai/mock", base_url=srv.openai_url, use_cache=False)
        with pytest.raises(ImageChanged):  # a miss: nothing sent
            asyncio.run(ask())
        assert srv.calls == 1
