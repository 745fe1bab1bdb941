"""``judge fd`` from paths: the Fréchet-distance pipeline, what the command and the Python API call.

`fd_paths` reads the qrels and runs, takes the passage vectors from precomputed embeddings or
encodes the passage texts of a corpus with a sentence-transformers model or an embeddings
endpoint (only the passages FD needs are read and encoded, in batches; the vectors are cached on
disk and reused on re-runs), and computes `reljudge.analyses.fd.per_run.fd_runs`.
`fd_variants_paths` (``judge fd --variants`` / ``--plot``) computes several variants of the same
runs (`reljudge.analyses.fd.variants`): each is `fd_paths` with its k and URR choice and the
same vectors: precomputed ones are read per variant; encoder vectors go through the embedding
cache (give ``--out`` or ``--embedding-cache``), so a passage is encoded once. The reports are
printed and written by `reljudge.analyses.fd.files`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from reljudge.analyses.fd.per_run import FDReport, fd_docids, fd_runs
from reljudge.analyses.fd.variants import (
    FDVariantsReport,
    measure_intervals,
    oriented,
    tau_matrix,
    variant_label,
)
from reljudge.errors import InputError, MissingExtraError


def fd_paths(
    qrels: str | Path,
    runs: str | Path,
    *,
    embeddings: str | Path | None = None,
    ids: str | Path | None = None,
    encoder: str | None = None,
    corpus: str | Path | None = None,
    batch_size: int = 64,
    device: str | None = None,
    embedding_cache: str | Path | None = None,
    cache_dir: str | Path | None = None,
    no_cache: bool = False,
    k: int = 10,
    max_per_topic: int | None = None,
    min_grade: float = 2,
    unjudged_only: bool = False,
    measure: str = "ndcg_cut_10",
    n_boot: int = 0,
    seed: int = 0,
    notify: Callable[[str], None] | None = None,
    base_url: str | None = None,
    pooling: str | None = None,
    max_length: int | None = None,
    controls: bool = True,
) -> FDReport:
    """FD@k of every run in the directory ``runs`` against the relevant passages of ``qrels``.

    The vectors come from exactly one of ``embeddings`` (a ``.npy`` file, ids in ``ids`` or
    beside it) or ``encoder`` (a sentence-transformers model; needs ``corpus``, the passage
    texts). Encoder vectors are cached in ``embedding_cache``, by default
    ``cache_dir/embeddings.<model>.npy`` (no cache without either, or with ``no_cache``).
    ``notify`` receives one line about the encoder before the computation and one about the
    encoding after it. ``controls``: also the random-vector and reference-excluded controls
    (`reljudge.analyses.fd.controls`; the latter reads and encodes the passages below each
    run's reference passages too)."""
    from reljudge.analyses.inputs import load_runs
    from reljudge.io.trec import read_qrels

    say = notify or (lambda _line: None)
    if (encoder is None) == (embeddings is None):
        raise InputError("give exactly one of --encoder NAME or --embeddings FILE")
    from reljudge.vectors.endpoint import is_endpoint_model

    if (pooling is not None or max_length is not None) and (encoder is None or is_endpoint_model(encoder)):
        raise InputError("--pooling and --max-length apply to a local or Hugging Face --encoder only")
    human = read_qrels(qrels)
    run_map = load_runs(runs)
    selection: dict[str, Any] = dict(
        k=k, max_per_topic=max_per_topic, min_grade=min_grade, unjudged_only=unjudged_only, seed=seed
    )
    if embeddings is not None:
        from reljudge.vectors.npy import load_embeddings

        source = load_embeddings(embeddings, ids)
        return fd_runs(human, run_map, source, measure=measure, n_boot=n_boot, controls=controls, **selection)
    from reljudge.io.corpus import load_corpus
    from reljudge.vectors.embedding_cache import TextEmbeddings, default_cache_path
    from reljudge.vectors.encoders import SentenceTransformerEncoder

    if corpus is None:
        raise InputError("--encoder needs --corpus with the passage texts")
    needed = fd_docids(human, run_map, controls=controls, **selection)
    texts = load_corpus(corpus, docids=needed)
    from reljudge.vectors.endpoint import EndpointEncoder

    try:
        if is_endpoint_model(encoder):  # type: ignore[arg-type]
            model = EndpointEncoder(encoder, base_url=base_url)  # type: ignore[arg-type]
        else:
            model = SentenceTransformerEncoder(  # type: ignore[assignment]
                encoder,  # type: ignore[arg-type]
                batch_size=batch_size,
                device=device,
                pooling=pooling,
                max_length=max_length,
            )
    except MissingExtraError as err:
        raise InputError(str(err)) from None
    cache_file = None
    if not no_cache:
        cache_file = embedding_cache or (
            default_cache_path(cache_dir, model.name) if cache_dir is not None else None
        )
    text_source = TextEmbeddings(model, cache_path=cache_file, batch_size=batch_size)
    with_text = sum(1 for d in needed if d in texts)
    say(
        f"encoder {model.name} ({model.location}); {with_text} of {len(needed)} passages FD needs "
        f"have text in {corpus}; {text_source.cache_status}"
    )
    try:
        report = fd_runs(
            human,
            run_map,
            text_source,
            texts=texts,
            measure=measure,
            n_boot=n_boot,
            controls=controls,
            **selection,
        )
    finally:
        close = getattr(model, "close", None)
        if close is not None:
            close()
    report.settings.update(
        encoder_location=model.location,
        pooling=getattr(model, "pooling", "the model's own (sentence-transformers modules)"),
        max_length=getattr(model, "max_length", None),
    )
    st = text_source.stats()
    rate = f" ({st['passages_per_second']:.1f} passages/s)" if st["encoded"] else ""
    loaded = f"model loaded in {model.load_seconds:.1f} s; " if model.loaded else "model not loaded; "
    say(
        loaded + f"encoded {st['encoded']} passage(s) in {st['encode_seconds']:.1f} s{rate}; "
        f"{st['reused_from_cache']} reused from the cache"
        + (f"; cache {st['cache']}" if st["cache"] else " (no cache: give --out or --embedding-cache)")
    )
    return report


def fd_variants_paths(
    qrels: str | Path,
    runs: str | Path,
    variants: Sequence[tuple[int, bool]],
    *,
    measure: str = "ndcg_cut_10",
    n_boot: int = 0,
    level: float = 0.95,
    seed: int = 0,
    **fd_options,
) -> FDVariantsReport:
    """Every variant's FD report, the human measure's intervals and the τ matrix."""
    from reljudge.analyses.inputs import load_runs
    from reljudge.io.trec import read_qrels
    from reljudge.metrics.measures import system_measures

    reports = {
        variant_label(k, urr): fd_paths(
            qrels, runs, k=k, unjudged_only=urr, measure=measure, n_boot=n_boot, seed=seed, **fd_options
        )
        for k, urr in variants
    }
    first = next(iter(reports.values()))
    per_topic = system_measures(read_qrels(qrels), load_runs(runs), measure)
    topics = {
        name: r.topics for name, r in first.runs.items()
    }  # the reference topics: the same in every variant
    intervals = measure_intervals(per_topic, topics, n_boot=n_boot, level=level, seed=seed)
    columns = {
        measure: first.human_measure,
        **{label: {n: r.fd for n, r in rep.runs.items()} for label, rep in reports.items()},
    }
    settings = {
        "variants": list(reports),
        "measure": measure,
        "n_boot": n_boot,
        "level": level,
        "seed": seed,
        "encoder": first.settings.get("encoder"),
        "max_per_topic": first.settings.get("max_per_topic"),
        "min_grade": first.settings.get("min_grade"),
        "topics": first.settings.get("topics"),
        "tau": "Kendall tau-b (scipy) with its two-sided p-value over the runs valued in both; FD is lower-better "
        "and enters as -FD, so tau(measure, FD) > 0 means agreement (FD-vs-FD cells are unchanged)",
        "measure_interval": "percentile bootstrap of the mean over each run's FD topics (scipy.stats.bootstrap)",
    }
    matrix = tau_matrix(oriented(columns, lower_is_better=list(reports)))
    return FDVariantsReport(reports, measure, dict(first.human_measure), intervals, matrix, settings)
