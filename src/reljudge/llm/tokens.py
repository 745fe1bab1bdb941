"""Prompt tokens for estimates (``--dry-run``, the ``--max-cost`` reservation): the model's own
tokenizer where one is available offline, else about four characters a token.

OpenAI models are counted with tiktoken. tiktoken ships no BPE files: on first use it downloads
them (from ``openaipublic.blob.core.windows.net``) into its cache directory. reljudge never lets
it: `encoding_for` uses an encoding only when its file is already on this machine -- in
tiktoken's cache (``$TIKTOKEN_CACHE_DIR``, ``$DATA_GYM_CACHE_DIR``, ``<tmp>/data-gym-cache``) or
in the copies litellm bundles (``litellm/litellm_core_utils/tokenizers/``, which hold
``o200k_base`` and ``cl100k_base``) -- and its SHA-256 is the one tiktoken expects. Otherwise
(tiktoken or the file missing, a model tiktoken does not know: Claude, Llama, Qwen, ...) the
count falls back to ``max(1, (characters + 3) // 4) + 4`` per message, the estimate the judges'
dry-run uses (`reljudge.judges.base.estimate_tokens`).

A chat request's tokens follow OpenAI's rule for the gpt-4o/gpt-4 family: 3 per message, the
tokens of its role and content, and 3 that prime the answer.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import tempfile
import threading
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

#: tiktoken encodings reljudge loads offline: name -> (the file's name in tiktoken's cache, i.e.
#: the SHA-1 of its download URL; the SHA-256 tiktoken checks the file against)
ENCODING_FILES: dict[str, tuple[str, str]] = {
    "o200k_base": (
        "fb374d419588a4632f3f557e76b4b70aebbca790",
        "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
    ),
    "cl100k_base": (
        "9b5ad71b2ce5302211f9c61530b329a4922fc6a4",
        "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
    ),
}
#: tokens of each message beyond its role and content, and of the answer's priming
TOKENS_PER_MESSAGE = 3
REPLY_PRIMING_TOKENS = 3
#: the fallback's tokens of a message beyond its content (`reljudge.judges.token_count.prompt_tokens`)
FALLBACK_MESSAGE_TOKENS = 4

_env_lock = threading.Lock()


def chars_tokens(text: str) -> int:
    """About four characters a token (the fallback)."""
    return max(1, (len(text) + 3) // 4)


def _cache_dirs() -> Iterator[Path]:
    for name in ("TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR"):
        value = os.environ.get(name)
        if value:
            yield Path(value)
    yield Path(tempfile.gettempdir()) / "data-gym-cache"
    import importlib.util

    with contextlib.suppress(ImportError, ValueError):
        spec = importlib.util.find_spec("litellm")  # finds the package without importing it
        for location in (spec.submodule_search_locations or []) if spec is not None else []:
            yield Path(location) / "litellm_core_utils" / "tokenizers"


def encoding_file(name: str) -> Path | None:
    """The local file of tiktoken encoding ``name`` with the expected SHA-256, or None."""
    if name not in ENCODING_FILES:
        return None
    cache_name, sha256 = ENCODING_FILES[name]
    for directory in _cache_dirs():
        path = directory / cache_name
        try:
            data = path.read_bytes()
        except OSError:
            continue
        if hashlib.sha256(data).hexdigest() == sha256:
            return path
    return None


def encoding_name(model: str) -> str | None:
    """The tiktoken encoding of a model as the user names it (``gpt-4o``, ``openai/gpt-4o``,
    ``litellm/openai/gpt-4o-mini``), None for a model tiktoken does not know."""
    try:
        from tiktoken.model import encoding_name_for_model
    except ImportError:
        return None
    try:
        return encoding_name_for_model(model.rsplit("/", 1)[-1])
    except KeyError:
        return None


@functools.lru_cache(maxsize=8)
def encoding_for(model: str) -> Any | None:
    """The tiktoken `Encoding` of ``model`` when its file is on this machine (never downloaded,
    see the module docstring), else None."""
    name = encoding_name(model)
    path = encoding_file(name) if name is not None else None
    if name is None or path is None:
        return None
    import tiktoken

    # tiktoken reads an encoding from its cache directory when the file there has the expected
    # hash (checked above), and downloads only when it does not: point it at this file's directory
    with _env_lock:
        saved = os.environ.get("TIKTOKEN_CACHE_DIR")
        os.environ["TIKTOKEN_CACHE_DIR"] = str(path.parent)
        try:
            return tiktoken.get_encoding(name)
        except Exception:  # a broken file or tiktoken: fall back, never fail an estimate
            return None
        finally:
            if saved is None:
                os.environ.pop("TIKTOKEN_CACHE_DIR", None)
            else:
                os.environ["TIKTOKEN_CACHE_DIR"] = saved


@functools.lru_cache(maxsize=1 << 16)
def _exact_tokens(encoding: Any, text: str) -> int:
    """Tokens of ``text`` under ``encoding``, each text counted once while it is among the 65,536
    most recently counted: a sweep's dry run estimates the same passages and queries in every
    cell (480 cells of the prompt-sensitivity study: 323,368 counts of a few thousand texts)."""
    return len(encoding.encode(text, disallowed_special=()))


class TokenCounter:
    """Counts prompt tokens for one model: exactly with its tokenizer (``exact``) or by the
    four-characters fallback. ``source`` says which, for the dry-run's text."""

    def __init__(self, model: str) -> None:
        self.encoding = encoding_for(model)
        self.exact = self.encoding is not None
        self.source = (
            f"tiktoken {self.encoding.name}" if self.encoding is not None else "~4 characters a token"
        )

    def text(self, text: str) -> int:
        """Tokens of a text (no message overhead)."""
        if self.encoding is None:
            return chars_tokens(text)
        return _exact_tokens(self.encoding, text)

    def messages(self, messages: Sequence[Mapping[str, Any] | Any]) -> int:
        """Prompt tokens of a chat request with these messages."""
        images = sum(_image_tokens(m) for m in messages)  # the tile rule (`reljudge.llm.images`)
        if self.encoding is None:
            return images + sum(chars_tokens(_content(m)) + FALLBACK_MESSAGE_TOKENS for m in messages)
        total = REPLY_PRIMING_TOKENS + images
        for m in messages:
            total += TOKENS_PER_MESSAGE + self.text(_role(m)) + self.text(_content(m))
        return total


def _raw_content(message: Any) -> Any:
    if isinstance(message, Mapping):
        return message.get("content", "")
    return getattr(message, "content", message)


def _content(message: Any) -> str:
    """The text of a message (the text parts of a content list)."""
    from reljudge.llm.images import content_text

    return content_text(_raw_content(message))


def _image_tokens(message: Any) -> int:
    from reljudge.llm.images import content_image_tokens

    return content_image_tokens(_raw_content(message))


def _role(message: Any) -> str:
    if isinstance(message, Mapping):
        return str(message.get("role", "user"))
    return str(getattr(message, "role", "user"))
