"""Retry policy (tenacity): which failures to retry and how long to wait.

Retried: rate limits (429), server errors (5xx), timeouts and connection errors. Never retried:
other 4xx, authentication, context-length and content-filter errors. The wait is exponential with
full jitter (uniform in ``[0, min(max, base * 2**(attempt-1))]``); when the server sent
``Retry-After`` (seconds), that value is honoured instead (capped). Attempts are bounded.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from tenacity import (
    AsyncRetrying,
    RetryCallState,
    retry_if_exception,
    stop_after_attempt,
)
from tenacity.wait import wait_base

from reljudge.llm.types import ProviderError


def is_retryable(exc: BaseException) -> bool:
    return isinstance(exc, ProviderError) and exc.retryable


class wait_retry_after_or_jitter(wait_base):
    """Honour ``ProviderError.retry_after`` if present, else exponential backoff with full jitter."""

    def __init__(
        self, base_s: float, max_s: float, retry_after_max_s: float, rng: random.Random | None = None
    ):
        self.base_s = base_s
        self.max_s = max_s
        self.retry_after_max_s = retry_after_max_s
        self.rng = rng or random.Random()

    def __call__(self, retry_state: RetryCallState) -> float:
        exc = retry_state.outcome.exception() if retry_state.outcome is not None else None
        if isinstance(exc, ProviderError) and exc.retry_after is not None and exc.retry_after >= 0:
            return min(exc.retry_after, self.retry_after_max_s)
        ceiling = min(self.max_s, self.base_s * (2 ** (retry_state.attempt_number - 1)))
        return self.rng.uniform(0, ceiling)


def make_retrying(
    max_attempts: int,
    base_s: float,
    max_s: float,
    retry_after_max_s: float,
    before_sleep: Callable[[RetryCallState], Any] | None = None,
) -> AsyncRetrying:
    return AsyncRetrying(
        stop=stop_after_attempt(max_attempts),
        wait=wait_retry_after_or_jitter(base_s, max_s, retry_after_max_s),
        retry=retry_if_exception(is_retryable),
        before_sleep=before_sleep,
        reraise=True,
    )


def parse_retry_after(value: str | None) -> float | None:
    """Seconds from a ``Retry-After`` (or ``retry-after-ms``) header value; HTTP dates are
    converted to a delay from now. None when absent or unreadable."""
    if value is None:
        return None
    text = str(value).strip()
    try:
        seconds = float(text)
        return seconds if seconds >= 0 else None
    except ValueError:
        pass
    from datetime import datetime, timezone
    from email.utils import parsedate_to_datetime

    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)  # noqa: UP017 (py3.10)
    return max(0.0, (when - datetime.now(timezone.utc)).total_seconds())  # noqa: UP017


def retry_after_from_headers(headers: Any) -> float | None:
    """Read ``retry-after-ms`` or ``retry-after`` from a headers mapping (case-insensitive)."""
    if headers is None:
        return None
    try:
        ms = headers.get("retry-after-ms")
        if ms is not None:
            value = parse_retry_after(ms)
            if value is not None:
                return value / 1000.0
        return parse_retry_after(headers.get("retry-after"))
    except AttributeError:
        return None
