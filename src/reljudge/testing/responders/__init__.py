"""Scripted responders for `MockLLMServer`: fixed answers, sequences, errors, a deterministic
fault injector, and the hostile shapes a client must survive.

A responder is any callable ``(MockRequest) -> MockReply | str``; these helpers build common ones.
`named` builds one from a name, as ``judge mock-server --responder NAME[:ARG]`` does; `NAMES` lists
them:

=================  ==========================================================================
``auto``           the built-in answers in each prompt's format (`AutoResponder`)
``echo``           the last user message
``echo-all``       all messages joined (servers that return the prompt)
``prompt-plus``    the prompt followed by the auto answer (servers returning prompt + completion)
``fixed:TEXT``     always TEXT
``list-content``   the auto answer as OpenAI content parts ``[{"type": "text", ...}, ...]``
``int-content``    the content is the number 3
``dict-content``   the content is an object ``{"type": "text", "text": "##final score: 3"}``
``absurd-usage``   token counts 1e400 / 1.5 / negative / 10^30 (``:VARIANT`` picks one, or
                   ``:1e12``; without, the first four take turns)
``no-usage``       the auto answer with no usage at all
``usage-x[:N]``    the auto answer reporting N times the tokens it used (default 10)
``late[:S]``       the auto answer after S seconds (default 2): past a client's timeout
``usage-details``  the auto answer with OpenAI's usage details: half the prompt tokens cached,
                   16 reasoning tokens (``:VARIANT``: absurd details, 1e400 / negative / over /
                   1.5 / string / shape / null)
``huge[:MB]``      an answer of MB mebibytes (default 16)
``gzip-bomb[:MB]`` a ~MB KiB gzip body (``Content-Encoding: gzip``) inflating to MB MiB (default 200)
``think-bomb``     ``<think>`` x 15000 and a marker
``nesting-bomb``   ``<output>`` x 1000, ``3``, ``</output>`` x 1000
``unauthorized``   401, with the message OpenAI sends for a wrong key
``not-found``      404, model not found
``blackhole``      reads the request and never answers (until the server stops)
``key-echo``       an answer containing the Authorization header it received
``label-logprobs`` the auto answer with scripted log-probabilities: a known distribution at the
                   label token (`scripted_logprobs`; with "maybe", off every scale)
``no-logprobs``    the auto answer, never with log-probabilities (a provider without them)
``image-check[:MB]`` a 400 ``invalid_image`` for a request whose image parts are malformed or
                   over MB mebibytes (default 20), else the auto answer (`reljudge.testing.responders.images`)
``image-parts[:V]`` the auto answer as content parts with a hostile image part: ``malformed``
                   (default) or ``huge`` (over the client's response bound)
``redirect[:TO]``  307 to another host (``other-host``, the default: the same server under its
                   other loopback name), to this host (``same-host``), or to the URL TO;
                   requests under ``/moved/`` get the auto answer
=================  ==========================================================================
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from reljudge.testing.exchange import Responder
from reljudge.testing.responders.hostile import (
    ABSURD_DETAILS,
    ABSURD_USAGE,
    REASONING_TOKENS,
    _auto,
    absurd_usage,
    blackhole,
    dict_content,
    echo_all,
    gzip_bomb,
    gzip_bomb_body,
    huge,
    inflated_usage,
    int_content,
    key_echo,
    late,
    list_content,
    nesting_bomb,
    no_usage,
    not_found,
    prompt_plus,
    redirect,
    think_bomb,
    unauthorized,
    usage_details,
)
from reljudge.testing.responders.logprobs import label_logprobs, no_logprobs, scripted_logprobs, tokens_of
from reljudge.testing.responders.scripted import (
    FaultInjector,
    PerPrompt,
    Scripted,
    context_too_long,
    echo,
    error,
    fixed,
    from_prompt,
    garble,
    hang,
    rate_limited,
    refused,
    server_error,
    truncated,
)

__all__ = [
    "ABSURD_USAGE",
    "FaultInjector",
    "NAMES",
    "PerPrompt",
    "Scripted",
    "absurd_usage",
    "blackhole",
    "context_too_long",
    "dict_content",
    "echo",
    "echo_all",
    "error",
    "fixed",
    "from_prompt",
    "garble",
    "gzip_bomb",
    "gzip_bomb_body",
    "hang",
    "huge",
    "inflated_usage",
    "int_content",
    "key_echo",
    "label_logprobs",
    "no_logprobs",
    "scripted_logprobs",
    "tokens_of",
    "late",
    "list_content",
    "no_usage",
    "named",
    "nesting_bomb",
    "not_found",
    "prompt_plus",
    "rate_limited",
    "redirect",
    "refused",
    "server_error",
    "think_bomb",
    "truncated",
    "unauthorized",
    "usage_details",
    "ABSURD_DETAILS",
    "REASONING_TOKENS",
]


def _vision() -> Any:
    from reljudge.testing.responders import images

    return images


def _number(arg: str, name: str) -> float:
    try:
        value = float(arg)
    except ValueError:
        raise ValueError(f"{name}: {arg!r} is not a number") from None
    if not 0 < value <= 4096:
        raise ValueError(f"{name}: {arg!r} must be in (0, 4096]")
    return value


#: name -> the responder built from the optional ``:ARG``
_BUILDERS: dict[str, Callable[[str | None], Responder]] = {
    "auto": lambda arg: _auto(),
    "echo": lambda arg: echo,
    "echo-all": lambda arg: echo_all,
    "prompt-plus": lambda arg: prompt_plus(),
    "list-content": lambda arg: list_content(),
    "int-content": lambda arg: int_content,
    "dict-content": lambda arg: dict_content,
    "absurd-usage": lambda arg: absurd_usage(arg),
    "no-usage": lambda arg: no_usage(),
    "usage-x": lambda arg: inflated_usage(_number(arg, "usage-x") if arg else 10),
    "late": lambda arg: late(_number(arg, "late") if arg else 2.0),
    "usage-details": lambda arg: usage_details(arg),
    "huge": lambda arg: huge(_number(arg, "huge") if arg else 16),
    "gzip-bomb": lambda arg: gzip_bomb(int(_number(arg, "gzip-bomb")) if arg else 200),
    "think-bomb": lambda arg: think_bomb(),
    "nesting-bomb": lambda arg: nesting_bomb(),
    "unauthorized": lambda arg: unauthorized,
    "not-found": lambda arg: not_found,
    "blackhole": lambda arg: blackhole,
    "key-echo": lambda arg: key_echo,
    "redirect": lambda arg: redirect(arg or "other-host"),
    "image-check": lambda arg: _vision().image_check(_number(arg, "image-check") if arg else 20),
    "image-parts": lambda arg: _vision().image_parts(arg or "malformed"),
    "label-logprobs": lambda arg: label_logprobs(),
    "no-logprobs": lambda arg: no_logprobs(),
}
NAMES: tuple[str, ...] = ("fixed", *_BUILDERS)


def named(spec: str) -> Responder:
    """The responder ``NAME`` or ``NAME:ARG`` (``fixed:TEXT``, ``huge:MB``, ...); see the module
    docstring. ValueError for an unknown name."""
    name, sep, arg = spec.partition(":")
    if name == "fixed" and sep:
        return fixed(arg)
    builder = _BUILDERS.get(name)
    if builder is None:
        raise ValueError(f"unknown responder {spec!r} (expected one of: {', '.join(NAMES)}; fixed:TEXT)")
    return builder(arg if sep else None)
