"""The mock server and images (`reljudge.testing.vision`): its answers to the vision prompts
(deterministic, flipped with the grids' order), its check of a request's image parts, and hostile
answers with image parts, which the client survives."""

from __future__ import annotations

import asyncio
import base64

import httpx
import pytest

from _images import png
from reljudge.llm import ClientConfig, LLMClient
from reljudge.testing import MockLLMServer
from reljudge.testing.exchange import MockRequest
from reljudge.testing.responders import named
from reljudge.testing.responders.images import image_problem
from reljudge.testing.vision import vision_rules


def _data_url(data: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(data).decode()


def _request(content: list, text: str = "") -> MockRequest:
    return MockRequest("openai", "m", [{"role": "user", "content": content}], {}, 0, 0)


def _grids_request(first: list[bytes], second: list[bytes]) -> MockRequest:
    parts: list = [{"type": "text", "text": "Prompt: a fox\n\nGrid X:\n"}]
    parts += [{"type": "image_url", "image_url": {"url": _data_url(d)}} for d in first]
    parts += [{"type": "text", "text": "\nGrid Y:\n"}]
    parts += [{"type": "image_url", "image_url": {"url": _data_url(d)}} for d in second]
    parts += [{"type": "text", "text": "X-much-better, X-better, same, Y-better, Y-much-better"}]
    return _request(parts)


def test_the_rules_answer_from_the_images_and_flip_with_the_order():
    grade, grids = vision_rules()
    flips = {"X-much-better": "Y-much-better", "X-better": "Y-better", "same": "same"}
    flips.update({v: k for k, v in flips.items()})
    seen = set()
    for n in range(12):
        a = [png(4, 3, (n, 1, 2)), png(4, 3, (n, 3, 4))]
        b = [png(4, 3, (9, n, 2)), png(4, 3, (9, n, 4))]
        forward, backward = _grids_request(a, b), _grids_request(b, a)
        assert grids.match(forward) and not grade.match(forward)
        assert grids.reply(forward) == grids.reply(_grids_request(a, b))  # deterministic
        assert grids.reply(backward) == flips[grids.reply(forward)]
        seen.add(grids.reply(forward))
    assert len(seen) >= 3
    one = _request(
        [
            {"type": "text", "text": "Prompt: a fox\nFinal grade: N"},
            {"type": "image_url", "image_url": {"url": _data_url(png())}},
        ]
    )
    assert grade.match(one) and grade.reply(one) in {f"Final grade: {g}" for g in range(4)}
    assert "base64" not in one.prompt and one.image_urls[0].startswith("data:image/png")


def test_the_request_check_names_each_bad_image_part():
    def part(url) -> list:
        return [{"type": "image_url", "image_url": {"url": url}}]

    assert image_problem(_request(part(_data_url(png()))), 10_000) is None
    assert image_problem(_request(part("https://example.org/a.png")), 10) is None
    cases = {
        "not valid base64": part("data:image/png;base64,@@@"),
        "not a PNG": part(_data_url(b"hello there")),
        "larger than": part(_data_url(png() * 50)),
        "must be base64": part("data:image/png,rawbytes"),
        "http(s) or a data URL": part("file:///etc/passwd"),
        "no url string": [{"type": "image_url", "image_url": {"url": 3}}],
        "not an object": ["just a string"],
    }
    for message, content in cases.items():
        assert message in (image_problem(_request(content), 1000) or ""), message


def test_the_image_check_mode_refuses_a_bad_image_with_a_400():
    with MockLLMServer(named("image-check:1")) as srv:
        body = {"model": "m", "messages": [{"role": "user", "content": [
            {"type": "text", "text": "Prompt: x\nFinal grade: N"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
        ]}]}  # fmt: skip
        bad = httpx.post(srv.openai_url + "/chat/completions", json=body, timeout=30)
        assert bad.status_code == 400 and "Invalid image" in bad.text
        body["messages"][0]["content"][1]["image_url"]["url"] = _data_url(png())
        good = httpx.post(srv.openai_url + "/chat/completions", json=body, timeout=30)
        assert good.status_code == 200 and "Final grade" in good.text


@pytest.mark.slow
def test_hostile_image_parts_in_an_answer_never_crash_the_client(tmp_path):
    messages = [{"role": "user", "content": [
        {"type": "text", "text": "Prompt: a fox\nFinal grade: N"},
        {"type": "image_url", "image_url": {"url": _data_url(png())}},
    ]}]  # fmt: skip

    async def ask(url: str):
        config = ClientConfig(model="openai/m", base_url=url, use_cache=False, max_attempts=1)
        async with LLMClient(config) as client:
            return await client.chat(messages)

    with MockLLMServer(named("image-parts:malformed")) as srv:
        result = asyncio.run(ask(srv.openai_url))
        assert result.status == "ok" and result.text.startswith("Final grade: ")  # the image parts skipped
    with MockLLMServer(named("image-parts:huge")) as srv:
        result = asyncio.run(ask(srv.openai_url))
        assert result.status == "api_error" and result.error_kind == "invalid_response"
        assert "too large" in (result.error or "")
