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

`credential_field` finds a credential among request fields (``--param``, a sweep's ``extra``),
which reljudge refuses: a request field is written in clear to batch request files (and uploaded),
to ``judge batch export`` files and into cache keys, so a key belongs in an environment variable
(``--api-key-env``), never in a request field. Fields named like a secret but known not to be one
(`NOT_CREDENTIALS`: OpenAI's ``prompt_cache_key``) are allowed.

`KnownSecrets` serves the LLM client, which knows its secrets by value (the API key, the
password and Basic credentials of a ``user:pass@`` base URL, the values of rule 3): it masks them
in a provider's error messages (with rules 2 and 3 and short ``sk-...`` keys) and, by exact match
only, in the model's answers and their token logprobs.
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
#: an OpenAI-style key in a provider's error message: ``sk-`` and 6+ characters (shorter than
#: rule 2 asks: an error that quotes a rejected key may quote it cut short)
_SHORT_KEY = re.compile(r"\bsk-[A-Za-z0-9_\-]{6,}")
#: known secrets shorter than this are not looked for in answers: placeholders such as "EMPTY" or
#: "ollama" are no secrets, and masking them would change what the model said
MIN_ANSWER_SECRET_CHARS = 8
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


#: request fields named like a secret that are not credentials
NOT_CREDENTIALS: frozenset[str] = frozenset({"prompt_cache_key", "cache_key", "idempotency_key"})


def credential_field(fields: Any, where: str = "") -> str | None:
    """The dotted name of the first credential in request ``fields`` (nested dicts and lists
    included): a secret name (`is_secret_name`, unless in `NOT_CREDENTIALS`) with a value, or a
    value that looks like a credential (rules 2 and 3); None when there is none."""
    if isinstance(fields, Mapping):
        for key, value in fields.items():
            name = f"{where}.{key}" if where else str(key)
            if (
                isinstance(key, str)
                and key not in NOT_CREDENTIALS
                and is_secret_name(key)
                and value not in (None, "", [], {})
            ):
                return name
            found = credential_field(value, name)
            if found:
                return found
    elif isinstance(fields, (list, tuple)):
        for i, value in enumerate(fields):
            found = credential_field(value, f"{where}[{i}]")
            if found:
                return found
    elif isinstance(fields, str) and redact_text(fields) != fields:
        return where or "a value"
    return None


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


def _replace_all(text: str, secrets: Sequence[str]) -> str:
    for secret in secrets:
        if secret in text:
            text = text.replace(secret, MASK)
    return text


class KnownSecrets:
    """What one LLM client never lets through: its API key, the values rule 3 masks, and the
    password and Basic credentials of a ``user:pass@`` base URL (`url_credentials`), longest
    first, collected once (``all``; ``in_answers``: those of `MIN_ANSWER_SECRET_CHARS` or more)."""

    def __init__(self, api_key: str | None = None, base_url: str | None = None) -> None:
        found = {api_key} if api_key else set()
        found.update(_env_secrets())
        found.update(url_credentials(base_url))
        self.all: list[str] = sorted(found, key=len, reverse=True)
        self.in_answers: list[str] = [x for x in self.all if len(x) >= MIN_ANSWER_SECRET_CHARS]

    def message(self, text: str, limit: int) -> str:
        """An error message fit to keep: the known secrets masked (exact match, on the whole
        text), cut to ``limit`` characters, then credential-looking strings masked (`redact_text`
        and short ``sk-`` keys; run on the cut text only, since these patterns cost more than
        linear time on long hostile input)."""
        text = _replace_all(text, self.all)
        if len(text) > limit:
            text = text[:limit] + "..."
        text = redact_text(text, env_secrets=())
        return _SHORT_KEY.sub(MASK, text)

    def answer(self, text: str) -> str:
        """A model's answer with the known secrets (``in_answers``) replaced by ``***``: exact
        matches only (linear time; an answer is the model's words, so no pattern rewrites it)."""
        return _replace_all(text, self.in_answers)

    def logprobs(self, items: list[dict[str, Any]] | None) -> list[dict[str, Any]] | None:
        """Token logprobs (``[{"token", "top_logprobs": [{"token"}, ...]}, ...]``), or None when
        their tokens spell a known secret (a secret spread over tokens cannot be masked token by
        token)."""
        if not items or not self.in_answers:
            return items
        tokens = "".join(item["token"] for item in items)
        tops = "\n".join(top["token"] for item in items for top in item.get("top_logprobs") or ())
        if any(secret in tokens or secret in tops for secret in self.in_answers):
            return None
        return items
