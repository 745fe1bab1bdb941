"""``judge mock-server``: the mock LLM server (`reljudge.testing`) on the command line."""

from __future__ import annotations

import signal
import sys
from typing import TYPE_CHECKING

import typer

from reljudge.errors import InputError

if TYPE_CHECKING:
    from reljudge.testing import AutoResponder


def mock_server_cmd(
    host: str = typer.Option(
        "127.0.0.1", "--host", help="Loopback address to listen on (other hosts are refused)."
    ),
    port: int = typer.Option(0, "--port", help="Port (0 = any free port)."),
    responder: str = typer.Option(
        "auto",
        "--responder",
        help="auto (answers in the format each published prompt asks for), echo, fixed:TEXT, or a "
        "hostile shape: echo-all, prompt-plus, list-content, int-content, dict-content, "
        "absurd-usage[:1e400|1.5|negative|1e30], usage-details[:1e400|negative|over|1.5|string|shape|null] "
        "(cached and reasoning tokens), huge[:MB], gzip-bomb[:MB], think-bomb, nesting-bomb, "
        "unauthorized, not-found, blackhole, key-echo, redirect[:other-host|same-host|URL]; "
        "label-logprobs (scripted log-probabilities at the label), no-logprobs.",
    ),
    latency: float = typer.Option(0.0, "--latency", help="Seconds added to every answer."),
    rate_429: float = typer.Option(
        0.0, "--rate-429", help="Share of requests answered 429 (with Retry-After)."
    ),
    rate_5xx: float = typer.Option(0.0, "--rate-5xx", help="Share of requests answered 500/503."),
    rate_hang: float = typer.Option(0.0, "--rate-hang", help="Share of requests that never answer."),
    rate_garbled: float = typer.Option(
        0.0, "--rate-garbled", help="Share of answers replaced by unparseable text."
    ),
    rate_empty: float = typer.Option(0.0, "--rate-empty", help="Share of empty answers."),
    retry_after: float = typer.Option(
        1.0, "--retry-after", help="Retry-After seconds sent with injected 429s."
    ),
    seed: int = typer.Option(0, "--seed", help="Seed of the deterministic fault draws."),
    rpm: float = typer.Option(
        None, "--rpm", help="Server-side limit of requests per minute (429 with Retry-After over it)."
    ),
    tpm: float = typer.Option(None, "--tpm", help="Server-side limit of tokens per minute."),
    max_connections: int = typer.Option(
        None, "--max-connections", help="Server-side limit of requests served at the same time."
    ),
    rate_headers: bool = typer.Option(
        True,
        "--rate-headers/--no-rate-headers",
        help="Send x-ratelimit-* headers with the server-side limit (--no-rate-headers: only 429 + "
        "Retry-After, like vLLM, Ollama and LiteLLM proxies).",
    ),
    grades_from: str = typer.Option(
        None,
        "--grades-from",
        help="Human qrels: answer the nugget assignment prompt by the human grade of the judged text "
        "(3 support, 2 mostly support, 1 mostly partial_support, 0 or unknown not_support), and the citation-support "
        "prompt by the cited passage's grade (3 full, 1-2 partial, 0 no_support); needs --corpus.",
    ),
    corpus: str = typer.Option(
        None, "--corpus", help="With --grades-from: the passages (docid<TAB>text, or JSON Lines)."
    ),
    topics: str = typer.Option(
        None, "--topics", help="With --grades-from: the topics (qid<TAB>query), to grade per query."
    ),
    batch_delay: float = typer.Option(
        0.0, "--batch-delay", help="Batch API: seconds before a batch completes (at the earliest)."
    ),
    batch_failure_share: float = typer.Option(
        0.0,
        "--batch-failure-share",
        help="Batch API: share of requests that fail (a 500 line in the error file) the first time they "
        "are submitted.",
    ),
    batch_hostile: bool = typer.Option(
        False,
        "--batch-hostile",
        help="Batch API: absurd request counts, the caller's key echoed in an answer, and junk lines "
        "(not JSON, nested, 9 MiB long, unknown or repeated custom_id) in every output file.",
    ),
) -> None:
    """Serve a mock LLM (OpenAI /v1, its Files and Batches APIs, and Ollama /api) for tests and dry
    runs, until interrupted.

    The first line printed is ``openai_base_url=URL``, the second ``ollama_base_url=URL``.
    """
    import time

    from reljudge.testing import FaultInjector, MockLLMServer, responders

    try:
        inner = responders.named(responder)
    except ValueError as err:
        raise InputError(f"--responder: {err}") from None
    if grades_from is not None:
        inner = _by_grade(inner, grades_from, corpus, topics)
    elif corpus is not None or topics is not None:
        raise InputError("--corpus and --topics go with --grades-from")
    rates = {
        "--rate-429": rate_429,
        "--rate-5xx": rate_5xx,
        "--rate-hang": rate_hang,
        "--rate-garbled": rate_garbled,
        "--rate-empty": rate_empty,
    }
    for name, value in rates.items():
        if not 0.0 <= value <= 1.0:
            raise InputError(f"{name} must be between 0 and 1, not {value}")
    if sum(rates.values()) > 1.0:
        raise InputError("the --rate-* options must sum to at most 1")
    if latency < 0:
        raise InputError(f"--latency must be >= 0, not {latency}")
    if batch_delay < 0:
        raise InputError(f"--batch-delay must be >= 0, not {batch_delay}")
    if not 0.0 <= batch_failure_share <= 1.0:
        raise InputError(f"--batch-failure-share must be between 0 and 1, not {batch_failure_share}")
    for name, limit in (("--rpm", rpm), ("--tpm", tpm), ("--max-connections", max_connections)):
        if limit is not None and not limit > 0:
            raise InputError(f"{name} must be > 0, not {limit}")
    if any(rates.values()):
        inner = FaultInjector(
            inner,
            rate_429=rate_429,
            rate_5xx=rate_5xx,
            rate_hang=rate_hang,
            rate_garbled=rate_garbled,
            rate_empty=rate_empty,
            seed=seed,
            retry_after=retry_after,
        )
    try:
        server = MockLLMServer(
            inner,
            host=host,
            port=port,
            latency_s=latency,
            rpm=rpm,
            tpm=tpm,
            max_connections=max_connections,
            rate_headers=rate_headers,
            batch_delay_s=batch_delay,
            batch_failure_share=batch_failure_share,
            batch_hostile=batch_hostile,
        )
    except ValueError as err:
        raise InputError(f"--host: {err}") from None
    try:
        server.start()
    except OSError as err:
        raise InputError(f"cannot listen on {host}:{port}: {err.strerror or err}") from None
    typer.echo(f"openai_base_url={server.openai_url}")
    typer.echo(f"ollama_base_url={server.ollama_url}")
    typer.echo("serving; press Ctrl+C to stop", err=True)
    sys.stdout.flush()

    def stop(signum: int, frame: object) -> None:
        raise KeyboardInterrupt  # SIGTERM stops it like Ctrl+C: the counts are printed

    signal.signal(signal.SIGTERM, stop)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
        batch = server.batches
        typer.echo(
            f"stopped after {server.calls} chat requests and {sum(batch.submissions.values())} batch requests "
            f"({batch.resubmitted} submitted more than once)",
            err=True,
        )


def _by_grade(inner: object, qrels: str, corpus: str | None, topics: str | None) -> AutoResponder:
    """The auto responder with the nugget assigner that follows the human grade in front."""
    from reljudge.testing import AutoResponder
    from reljudge.testing.grades import GradeBook

    if not isinstance(inner, AutoResponder):
        raise InputError("--grades-from works with --responder auto")
    if corpus is None:
        raise InputError("--grades-from needs --corpus (the judged passages' texts)")
    try:
        book = GradeBook(qrels, corpus, topics)
    except (OSError, ValueError) as err:
        raise InputError(f"--grades-from: {err}") from None
    for rule in (book.rule(), book.citation_rule()):
        inner.register(rule.name, rule.match, rule.reply)
    return inner
