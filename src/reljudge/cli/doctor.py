"""``judge doctor``: is everything in place for ``judge run --model M``?

One line per check, ``ok``, ``WARN`` or ``FAIL`` with a hint: the model string (its backend, as
``judge run`` routes it), the API key (present, from which variable; never shown), the
endpoint (reached with ``GET /models``, bounded in time and size, no redirect followed), the
models it serves (is M among them?), M's price (which entry of the price map; a warning when it
is another model's), and the cache and data folders. Exit code 0 when no check fails, else 1.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import typer

#: the most bytes of a model list read (a real one is a few hundred KB at most)
MAX_LIST_BYTES = 4_000_000
#: model names shown from the list
SHOWN_MODELS = 8


class Check:
    """One check's outcome: ``status`` ok, WARN or FAIL, its name and what it found."""

    def __init__(self, status: str, name: str, text: str) -> None:
        self.status, self.name, self.text = status, name, text

    def line(self) -> str:
        return f"{self.status:<4}  {self.name:<9} {self.text}"


def doctor_cmd(
    model: str | None = typer.Option(
        None,
        "--model",
        help="The model to check, as for 'judge run' (e.g. gpt-4o, openai/<name>, ollama/llama3.2).",
    ),
    base_url: str | None = typer.Option(
        None, "--base-url", help="Server URL, as for 'judge run' (default: the backend's own address)."
    ),
    api_key_env: str | None = typer.Option(
        None,
        "--api-key-env",
        help="Name of the variable holding the key (default: the backend's, e.g. OPENAI_API_KEY).",
    ),
    timeout: float = typer.Option(
        10.0, "--timeout", min=0.1, help="Seconds for reaching the endpoint, in all."
    ),
    cache: Path | None = typer.Option(None, "--cache", help="Response cache file, as for 'judge run'."),
) -> None:
    """Check the key, the endpoint, its models, the model's price and the folders; exit 1 if one fails."""
    checks: list[Check] = []

    def say(check: Check) -> None:
        checks.append(check)
        typer.echo(check.line())

    resolved = _model_check(model, say)
    backend = resolved.backend if resolved is not None else "openai"
    key = _key_check(backend, base_url, api_key_env, say)
    served = _endpoint_check(backend, base_url, key, timeout, say)
    if resolved is not None and served is not None:
        _served_check(resolved.model, served, key, say)
    if resolved is not None:
        _price_check(resolved, say)
    _folder_checks(cache, say)
    failed = sum(c.status == "FAIL" for c in checks)
    typer.echo(f"{failed} check(s) failed" if failed else "all checks passed", err=True)
    raise typer.Exit(1 if failed else 0)


def _model_check(model: str | None, say: Any) -> Any:
    from reljudge.llm.routing import resolve_model

    if model is None:
        say(Check("ok", "model", "none given (--model M checks that the endpoint serves M, and its price)"))
        return None
    try:
        resolved = resolve_model(model)
    except ValueError as err:
        say(Check("FAIL", "model", f"{model!r}: {err}"))
        return None
    say(Check("ok", "model", f"{model!r}: backend {resolved.backend}, sent as {resolved.model!r}"))
    return resolved


def _key_check(backend: str, base_url: str | None, api_key_env: str | None, say: Any) -> str | None:
    from reljudge.llm.backends import capabilities

    facts = capabilities(backend)
    if facts.key_not_checked is not None and api_key_env is None:
        say(Check("ok", "key", facts.key_not_checked))
        return None
    variable = api_key_env or facts.key_variable
    key = os.environ.get(variable)
    if key:
        say(Check("ok", "key", f"from ${variable} ({len(key)} characters; never shown)"))
        return key
    if base_url is not None or os.environ.get("OPENAI_BASE_URL"):
        say(Check("ok", "key", f"${variable} is not set: none is sent (a local server needs none)"))
        return None
    say(Check("FAIL", "key", f"${variable} is not set: export {variable}=... (or --api-key-env NAME)"))
    return None


def _endpoint_check(
    backend: str, base_url: str | None, key: str | None, timeout: float, say: Any
) -> list[str] | None:
    """GET the model list within ``timeout`` seconds in all; the names it lists, None on failure."""
    import json

    import httpx

    from reljudge.llm.backends import capabilities
    from reljudge.llm.backends.base import normalise_base_url

    facts = capabilities(backend)
    listed = facts.model_list(base_url)
    if listed is None:
        say(Check("ok", "endpoint", f"{backend} routes to the provider itself; not checked"))
        return None
    url, where = listed
    shown = normalise_base_url(url)  # without credentials in the URL
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    start = time.monotonic()
    deadline = start + timeout
    try:
        with httpx.Client(follow_redirects=False, timeout=timeout) as http:
            with http.stream("GET", url, headers=headers) as response:
                body = bytearray()
                for chunk in response.iter_bytes():
                    body += chunk
                    if len(body) > MAX_LIST_BYTES:
                        raise ValueError(f"the model list is over {MAX_LIST_BYTES // 1_000_000} MB")
                    if time.monotonic() > deadline:
                        raise TimeoutError
    except (httpx.TimeoutException, TimeoutError):
        say(
            Check("FAIL", "endpoint", f"{shown} ({where}): no answer within {timeout:g} s; is the server up?")
        )
        return None
    except httpx.HTTPError as err:
        reason = type(err).__name__ if not str(err) else str(err).replace(key or "\0", "***")
        hint = "check the host and port (is the server running?) or the network"
        say(Check("FAIL", "endpoint", f"{shown} ({where}): cannot connect ({_clip(reason)}); {hint}"))
        return None
    except ValueError as err:
        say(Check("FAIL", "endpoint", f"{shown} ({where}): {err}"))
        return None
    elapsed = time.monotonic() - start
    status = response.status_code
    if 300 <= status < 400:
        target = normalise_base_url(response.headers.get("location", "?"))
        say(
            Check(
                "FAIL", "endpoint", f"{shown}: redirected (HTTP {status}) to {_clip(target)}; give that URL"
            )
        )
        return None
    if status in (401, 403):
        say(
            Check(
                "FAIL",
                "endpoint",
                f"{shown}: HTTP {status}, the key is refused; check it (and --api-key-env)",
            )
        )
        return None
    if status == 404:
        hint = facts.list_not_found_hint()
        say(Check("FAIL", "endpoint", f"{shown}: HTTP 404, no model list there; {hint}"))
        return None
    if status != 200:
        say(Check("FAIL", "endpoint", f"{shown}: HTTP {status}"))
        return None
    try:
        data = json.loads(bytes(body))
        names = facts.served_names(data)
    except (ValueError, TypeError, KeyError):
        say(Check("FAIL", "endpoint", f"{shown}: HTTP 200 but not a model list; is this the API's base URL?"))
        return None
    say(Check("ok", "endpoint", f"{shown} ({where}) answers: HTTP 200 in {elapsed:.2f} s"))
    return [name.replace(key, "***") if key else name for name in names]


def _served_check(model: str, served: list[str], key: str | None, say: Any) -> None:
    import difflib

    listed = ", ".join(_clip(n, 60) for n in served[:SHOWN_MODELS])
    more = f" and {len(served) - SHOWN_MODELS} more" if len(served) > SHOWN_MODELS else ""
    names = {n.split(":")[0] for n in served} | set(served)  # ollama: llama3.2 is llama3.2:latest
    if model in names:
        say(Check("ok", "models", f"{len(served)} served, {model!r} among them ({listed}{more})"))
        return
    close = difflib.get_close_matches(model, served, n=1, cutoff=0.6)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    say(Check("FAIL", "models", f"{model!r} is not among the {len(served)} served ({listed}{more}){hint}"))


def _price_check(resolved: Any, say: Any) -> None:
    from reljudge.llm.pricing import PriceTable
    from reljudge.run.prepare import price_warning

    table = PriceTable()
    quote = table.quote(resolved)
    warning = price_warning(table, resolved)
    if warning is not None:
        say(Check("WARN", "price", warning))
    elif quote.free:
        say(Check("ok", "price", "a local model: free"))
    elif quote.price is None:
        say(Check("WARN", "price", f"unknown ({quote.source}): costs count as 0; --prices FILE sets it"))
    else:
        p = quote.price
        say(Check("ok", "price", f"${p.input:g} in, ${p.output:g} out per 1M tokens ({quote.source})"))


def _folder_checks(cache: Path | None, say: Any) -> None:
    from reljudge.datasets import DATA_DIR_ENV, KNOWN_DATASETS, data_roots
    from reljudge.llm.types import default_cache_path

    path = cache or default_cache_path()
    where = "--cache" if cache else "$RELJUDGE_CACHE" if os.environ.get("RELJUDGE_CACHE") else "default"
    if path.exists():
        say(Check("ok", "cache", f"{path} ({where}; {path.stat().st_size / 1e6:.1f} MB)"))
    elif _writable(path.parent):
        say(Check("ok", "cache", f"{path} ({where}; made on first use)"))
    else:
        say(
            Check(
                "FAIL", "cache", f"{path} ({where}): its folder cannot be made or written; set RELJUDGE_CACHE"
            )
        )
    roots = data_roots()
    found: dict[str, list[str]] = {}
    for root in roots:
        names = [name for name in KNOWN_DATASETS if (root / name).is_dir()]
        if names:
            found[str(root)] = names
    env = os.environ.get(DATA_DIR_ENV)
    if env and not Path(env).expanduser().is_dir():
        say(Check("FAIL", "data", f"${DATA_DIR_ENV}={env} is not a folder"))
    elif found:
        shown = "; ".join(f"{', '.join(names)} in {root}" for root, names in found.items())
        say(Check("ok", "data", f"{shown} (${DATA_DIR_ENV} {'set' if env else 'not set'})"))
    else:
        searched = ", ".join(str(r) for r in roots)
        say(Check("ok", "data", f"only the bundled dl19-sample (searched {searched}); set ${DATA_DIR_ENV}"))


def _writable(folder: Path) -> bool:
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    return os.access(folder, os.W_OK)


def _clip(text: str, most: int = 160) -> str:
    return text if len(text) <= most else text[: most - 3] + "..."
