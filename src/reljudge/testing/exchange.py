"""What passes between the mock server and its responder: the request as received
(`MockRequest`), the reply to send (`MockReply`), and the `Responder` that maps one to the other.

Token counts are word/punctuation counts (`count_tokens`), so they are deterministic.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

TOKEN = re.compile(r"\w+|[^\w\s]")
#: the path prefix under which every chat route also answers (the target of redirects)
MOVED_PREFIX = "/moved"


class _NotSet:
    def __repr__(self) -> str:
        return "NOT_SET"


NOT_SET: Any = _NotSet()


@dataclass
class MockRequest:
    """One chat request as the server received it."""

    api: str  # "openai", "ollama" or "anthropic"
    model: str
    messages: list[dict[str, Any]]
    body: dict[str, Any]
    index: int  # 0-based number of this chat request on the server
    seen: int  # how many identical (model, messages) requests came before this one
    headers: dict[str, str] = field(default_factory=dict)  # lower-case names; authorization redacted
    path: str = ""  # the request path, e.g. /v1/chat/completions or /moved/v1/chat/completions
    #: the Authorization header as received: set only while the responder runs (``key-echo``
    #: answers with it); recorded requests never keep it
    raw_authorization: str | None = field(default=None, repr=False, compare=False)

    @property
    def prompt(self) -> str:
        """All message contents joined by newlines (of a list of content parts, its text parts)."""
        return "\n".join(message_text(m.get("content", "")) for m in self.messages)

    @property
    def last_user(self) -> str:
        for m in reversed(self.messages):
            if m.get("role") == "user":
                return message_text(m.get("content", ""))
        return ""

    @property
    def image_urls(self) -> list[str]:
        """The URLs of the image parts of every message, in order (a data URL whole); a part
        whose URL is not a string counts as ``""``."""
        found = []
        for m in self.messages:
            content = m.get("content")
            for part in content if isinstance(content, list) else ():
                if isinstance(part, dict) and part.get("type") == "image_url":
                    inner = part.get("image_url")
                    url = inner.get("url") if isinstance(inner, dict) else None
                    found.append(url if isinstance(url, str) else "")
        return found

    @property
    def content_key(self) -> str:
        """SHA-256 of (model, messages): identical prompts share it."""
        blob = json.dumps([self.model, self.messages], sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()

    @property
    def max_tokens(self) -> int | None:
        if self.api in ("openai", "anthropic"):
            value = self.body.get("max_completion_tokens", self.body.get("max_tokens"))
        else:
            value = (self.body.get("options") or {}).get("num_predict")
        return int(value) if isinstance(value, (int, float)) and value >= 0 else None

    @property
    def wants_logprobs(self) -> bool:
        return bool(self.body.get("logprobs"))


@dataclass
class MockReply:
    """What the server answers. ``status`` != 200 sends an error body with ``error`` as message.

    ``hang=True`` never answers (until the server stops or ``hang_s`` passes);
    ``finish_reason`` defaults to "stop" (or "length" when cut by max_tokens).
    ``content`` (any JSON value) is sent as the message content instead of ``text``;
    ``no_usage=True`` sends no token counts at all;
    ``usage_literals`` = (prompt, completion) are sent verbatim as the token counts (JSON number
    text such as ``"1e400"`` or ``"-5"``); ``detail_literals`` = (prompt details, completion
    details) are sent verbatim (JSON text) as OpenAI's ``usage.prompt_tokens_details`` and
    ``usage.completion_tokens_details`` (``'{"cached_tokens": 96}'``); ``body`` is sent as the exact response body (with
    ``status`` and ``headers``), bypassing everything else.
    """

    text: str = ""
    status: int = 200
    error: str | None = None
    error_code: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0
    hang: bool = False
    finish_reason: str | None = None
    refusal: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    content: Any = NOT_SET
    usage_literals: tuple[str, str] | None = None
    #: send no usage at all (no ``usage`` object; Ollama: no eval counts)
    no_usage: bool = False
    detail_literals: tuple[str, str] | None = None
    body: bytes | None = None
    #: the token log-probabilities sent when the request asks for them: a list of
    #: ``{"token", "logprob", "top_logprobs": [{"token", "logprob"}]}`` sent as they are, None
    #: for a provider that never returns any; unset: made up from the answer's words
    logprobs: Any = NOT_SET

    def __call__(self, req: MockRequest) -> MockReply:
        """A reply is also a responder that always gives itself: ``MockLLMServer(error(500))``."""
        return self


Responder = Callable[[MockRequest], "MockReply | str"]


def message_text(content: Any) -> str:
    """A message's text: a string, or the text parts of a list of content parts joined by
    newlines (image parts are not text)."""
    if isinstance(content, list):
        return "\n".join(
            str(p.get("text", "")) for p in content if isinstance(p, dict) and p.get("type") == "text"
        )
    return str(content)


def count_tokens(text: str) -> int:
    return len(TOKEN.findall(text))
