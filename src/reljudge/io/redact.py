"""Keep secrets out of what reljudge writes (manifests, judgment files, reports).

Three rules, applied recursively to dicts, lists and strings:

1. a field whose *name* marks a secret (``api_key``, ``apikey``, ``key``, ``*_key``, ``token``,
   ``*_token``, ``secret``, ``password``, ``authorization``, ``credentials``, ...) has its value
   replaced by ``"***"``. Counters such as ``max_tokens`` or ``prompt_tokens`` are not secrets
   (the rule matches whole words), nor are fields naming *where* a secret lives
   (``api_key_env``: the name of an environment variable);
2. a string that *looks* like a credential (``sk-...``, ``Bearer ...``, ``hf_...``, ``ghp_...``,
   ``AKIA...``, ``AIza...``, ``xox?-...``, ``key=``/``token=`` URL parameters, the password of
   a URL's ``scheme://user:password@`` part) is masked;
3. the current value of any environment variable whose name contains KEY, TOKEN, SECRET or
   PASSWORD (values of 8+ characters) is masked wherever it occurs.

Command lines get rule 1 for ``--api-key X`` / ``--api-key=X`` style options, and for
``NAME=VALUE`` option values (``--param api_key=X``, ``--param=api_key=X``).

Counters are not secrets: in a dict named like a counter (`COUNTER_FIELDS`: ``failure_causes``,
``retry_causes``, ``failures``, ``statuses``, ...) a number stays a number even under a
secret-looking key (``{"auth": 3}``: three authentication failures). Any other value there is
scrubbed as usual.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from typing import Any

MASK = "***"

_SECRET_NAME = re.compile(
    r"(?:^|[_\-.])(?:api[_\-]?key|apikey|key|token|access[_\-]?token|secret|secrets|password|passwd|"
    r"authorization|auth|credential|credentials|cookie)(?:$|[_\-.])",
    re.IGNORECASE,
)
_NOT_SECRET_NAME = re.compile(r"[_\-.](?:env|env[_\-]var|var|variable|file|path|name)$", re.IGNORECASE)
_SECRET_VALUE = re.compile(
    r"(?:\bsk-(?:proj-|ant-)?[A-Za-z0-9_\-]{16,}"
    r"|\bBearer\s+[A-Za-z0-9._\-~+/=]{8,}"
    r"|\bhf_[A-Za-z0-9]{20,}"
    r"|\bgh[pousr]_[A-Za-z0-9]{20,}"
    r"|\bAKIA[0-9A-Z]{16}\b"
    r"|\bAIza[0-9A-Za-z_\-]{30,}"
    r"|\bxox[abprs]-[A-Za-z0-9\-]{10,}"
    r"|\bgsk_[A-Za-z0-9]{20,})"
)
_URL_PARAM = re.compile(r"(?i)([?&](?:api[_\-]?key|key|token|access_token|secret)=)[^&#\s]+")
# scheme://user:password@host -> scheme://user:***@host (the user name stays: it says which account)
# (the scheme is at most 32 characters long: an unbounded one made every word boundary of a long
# dotted text scan to its end, quadratic in the length of the text)
_URL_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.\-]{0,31}://[^\s/?#@:]*):[^\s/?#@]+@")
_ENV_SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD", re.IGNORECASE)
#: dicts of counts keyed by an error kind, a status or a method (a kind such as ``auth`` looks
#: like a secret name; its count is not a secret)
COUNTER_FIELDS: frozenset[str] = frozenset(
    {
        "failure_causes",
        "retry_causes",
        "failures",
        "api_error_kinds",
        "statuses",
        "status",
        "failed",
        "fallbacks",
        "parse_fallbacks",
    }
)


def is_secret_name(name: str) -> bool:
    """Whether a field or option name (``api_key``, ``--hf-token``) holds a secret."""
    bare = name.lstrip("-")
    if _NOT_SECRET_NAME.search(bare):
        return False
    return bool(_SECRET_NAME.search(bare))


def _env_secrets() -> list[str]:
    values = {v for k, v in os.environ.items() if _ENV_SECRET_NAME.search(k) and len(v) >= 8}
    return sorted(values, key=len, reverse=True)


def redact_text(text: str, *, env_secrets: Sequence[str] | None = None) -> str:
    """Mask credential-like substrings and the values of secret environment variables."""
    for secret in _env_secrets() if env_secrets is None else env_secrets:
        if secret in text:
            text = text.replace(secret, MASK)
    text = _SECRET_VALUE.sub(MASK, text)
    text = _URL_USERINFO.sub(lambda m: f"{m.group(1)}:{MASK}@", text)
    return _URL_PARAM.sub(lambda m: m.group(1) + MASK, text)


def scrub_secrets(value: Any, *, _env: Sequence[str] | None = None, _counts: bool = False) -> Any:
    """A copy of ``value`` (dicts, lists, tuples, strings, scalars) with secrets masked."""
    env = _env_secrets() if _env is None else _env
    if isinstance(value, Mapping):
        out: dict[Any, Any] = {}
        for key, item in value.items():
            if _counts and _is_count(item):
                out[key] = item  # a count keyed by an error kind (``auth``): not a secret
                continue
            secret = isinstance(key, str) and is_secret_name(key) and item not in (None, "", [], {})
            counts = isinstance(key, str) and key in COUNTER_FIELDS
            out[key] = MASK if secret else scrub_secrets(item, _env=env, _counts=counts)
        return out
    if isinstance(value, (list, tuple)):
        return type(value)(scrub_secrets(item, _env=env) for item in value)
    if isinstance(value, str):
        return redact_text(value, env_secrets=env)
    return value


def _is_count(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _scrub_assignment(text: str) -> str | None:
    """``NAME=VALUE`` with a secret NAME, masked (``api_key=***``); None for anything else."""
    name, sep, value = text.partition("=")
    if sep and value and name.strip() and is_secret_name(name.strip()):
        return f"{name}={MASK}"
    return None


def scrub_argv(argv: Sequence[str]) -> list[str]:
    """A command line with the values of secret options (``--api-key X``, ``--token=X``) and of
    secret ``NAME=VALUE`` option values (``--param api_key=X``, ``--param=api_key=X``) masked."""
    env = _env_secrets()
    out: list[str] = []
    mask_next = False
    for arg in argv:
        if mask_next:
            out.append(MASK)
            mask_next = False
            continue
        if arg.startswith("-") and "=" in arg:
            name, _, value = arg.partition("=")
            if is_secret_name(name):
                out.append(f"{name}={MASK}")
                continue
            inner = _scrub_assignment(value)  # --param=api_key=X
            if inner is not None:
                out.append(f"{name}={inner}")
                continue
        elif arg.startswith("-") and is_secret_name(arg):
            out.append(arg)
            mask_next = True
            continue
        elif not arg.startswith("-"):
            masked = _scrub_assignment(arg)  # the value of --param / --option: api_key=X
            if masked is not None:
                out.append(masked)
                continue
        out.append(redact_text(arg, env_secrets=env))
    return out


def env_secret_values() -> list[str]:
    """The values rule 3 masks: those of environment variables whose name contains KEY, TOKEN,
    SECRET or PASSWORD (8+ characters), longest first."""
    return _env_secrets()


def url_credentials(url: str | None) -> list[str]:
    """The secrets a ``scheme://user:password@host`` URL carries: the password (as written and
    percent-decoded) and the base64 of ``user:password`` that HTTP Basic authentication sends.
    Empty for a URL without credentials."""
    import base64
    from urllib.parse import unquote, urlsplit

    if not url or "@" not in url:
        return []
    try:
        parts = urlsplit(url.strip())
        user, password = parts.username, parts.password
    except ValueError:
        return []
    if user is None and password is None:
        return []
    out = []
    if password:
        out += [password, unquote(password)]
    basic = f"{unquote(user or '')}:{unquote(password or '')}".encode()
    out.append(base64.b64encode(basic).decode("ascii"))
    return sorted(set(out), key=len, reverse=True)
