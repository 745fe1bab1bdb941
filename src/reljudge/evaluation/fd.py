"""``judge fd``: the Fréchet-distance pipeline from files, and its report.

`fd_paths` reads the qrels and runs, takes the passage vectors from precomputed embeddings or
encodes the passage texts of a corpus with a sentence-transformers model (only the passages FD
needs are read and encoded, in batches; the vectors are cached on disk and reused on re-runs),
and computes `reljudge.metrics.fd.fd_runs`. `format_fd_report` is the console table,
`write_fd_report` writes ``fd.json`` and ``fd.csv``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from reljudge.errors import InputError, MissingExtraError
from reljudge.evaluation.report import format_table
from reljudge.metrics.fd import FDReport, coverage, fd_docids, fd_runs
from reljudge.metrics.registry import ranking_measures


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
) -> FDReport:
    """FD@k of every run in the directory ``runs`` against the relevant passages of ``qrels``.

    The vectors come from exactly one of ``embeddings`` (a ``.npy`` file, ids in ``ids`` or
    beside it) or ``encoder`` (a sentence-transformers model; needs ``corpus``, the passage
    texts). Encoder vectors are cached in ``embedding_cache``, by default
    ``cache_dir/embeddings.<model>.npy`` (no cache without either, or with ``no_cache``).
    ``notify`` receives one line about the encoder before the computation and one about the
    encoding after it."""
    from reljudge.analyses.inputs import load_runs
    from reljudge.io.trec import read_qrels

    say = notify or (lambda _line: None)
    if (encoder is None) == (embeddings is None):
        raise InputError("give exactly one of --encoder NAME or --embeddings FILE")
    from reljudge.evaluation.endpoint_encoder import is_endpoint_model

    if (pooling is not None or max_length is not None) and (encoder is None or is_endpoint_model(encoder)):
        raise InputError("--pooling and --max-length apply to a local or Hugging Face --encoder only")
    human = read_qrels(qrels)
    run_map = load_runs(runs)
    selection: dict[str, Any] = dict(
        k=k, max_per_topic=max_per_topic, min_grade=min_grade, unjudged_only=unjudged_only, seed=seed
    )
    if embeddings is not None:
        from reljudge.evaluation.embeddings import load_embeddings

        source = load_embeddings(embeddings, ids)
        return fd_runs(human, run_map, source, measure=measure, n_boot=n_boot, **selection)
    from reljudge.evaluation.embeddings import TextEmbeddings, default_cache_path
    from reljudge.evaluation.encoders import SentenceTransformerEncoder
    from reljudge.io.corpus import load_corpus

    if corpus is None:
        raise InputError("--encoder needs --corpus with the passage texts")
    needed = fd_docids(human, run_map, **selection)
    texts = load_corpus(corpus, docids=needed)
    from reljudge.evaluation.endpoint_encoder import EndpointEncoder

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
            human, run_map, text_source, texts=texts, measure=measure, n_boot=n_boot, **selection
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


def _agreement_text(report: FDReport) -> str:
    """``: Kendall tau-b(measure, FD) = v [low, high], Spearman = v, ...`` for the registry's fd measures."""
    a = report.agreement
    measures = [m for m in ranking_measures("fd") if m.name in a]
    if not measures:
        return ""
    parts = []
    for i, m in enumerate(measures):
        text = (
            f"{m.label}({report.measure}, FD) = {a[m.name]:.3f}" if i == 0 else f"{m.label} = {a[m.name]:.3f}"
        )
        low, high = m.interval_columns
        if m.interval and low in a:
            text += f" [{a[low]:.3f}, {a[high]:.3f}]"
        parts.append(text)
    return f": {', '.join(parts)} (negative tau: lower FD goes with higher {report.measure})"


def _fd_rows(report: FDReport) -> list[dict]:
    rows = []
    for name, r in report.runs.items():
        row = {"run": name, **r.as_dict(), report.measure: report.human_measure.get(name, float("nan"))}
        rows.append(row)
    rows.sort(key=lambda row: (row["fd"] != row["fd"], row["fd"]))
    return rows


def format_fd_report(report: FDReport) -> str:
    """A table of FD per run (best first) and the agreement with the human measure."""
    rows = _fd_rows(report)
    boot = any("ci_low" in r for r in rows)
    headers = [
        "run",
        "FD",
        *(["95% CI"] if boot else []),
        report.measure,
        "ref",
        "retrieved",
        "missing ref",
        "missing ret",
    ]
    table = []
    for r in rows:
        ci = (
            [f"[{r['ci_low']:.3f}, {r['ci_high']:.3f}]"]
            if boot and "ci_low" in r
            else (["-"] if boot else [])
        )
        table.append(
            [
                r["run"],
                r["fd"],
                *ci,
                r[report.measure],
                r["n_reference"],
                r["n_retrieved"],
                r["missing_reference"],
                r["missing_retrieved"],
            ]
        )
    s = report.settings
    head = (
        f"FD@{s['k']}{'-URR' if s['unjudged_only'] else ''} (encoder {s['encoder']}, relevant: grade >= {s['min_grade']:g}, "
        f"at most {s['max_per_topic'] or 'all'} per topic, {s['topics']} topics)"
    )
    tail = f"{report.agreement.get('runs', 0)} runs" + _agreement_text(report)
    cov = coverage(report.runs)
    ret_total = cov["retrieved_used"] + cov["retrieved_missing"]
    ref_total = cov["reference_used"] + cov["reference_missing"]
    if cov["retrieved_missing"] or cov["reference_missing"]:
        tail += (
            f"\ncoverage: {cov['retrieved_used']} of {ret_total} retrieved passages (all runs"
            f"{', ' + format(cov['retrieved_used'] / ret_total, '.1%') if ret_total else ''}) and "
            f"{cov['reference_used']} of {ref_total} reference passages had an embedding or text; "
            "the rest were left out of FD"
        )
    if report.agreement.get("runs", 0) == 0 and report.runs:
        tail += "\nno run has FD (fewer than two retrieved or reference passages with a vector)"
    return head + "\n" + format_table(headers, table) + "\n" + tail


def fd_data(report: FDReport) -> dict[str, Any]:
    """The content of ``fd.json`` (what ``judge fd --json`` prints)."""
    return {
        "settings": report.settings,
        "measure": report.measure,
        "agreement": report.agreement,
        "runs": {
            name: {
                **r.as_dict(),
                "missing_reference_ids": [list(x) for x in r.missing_reference],
                "missing_retrieved_ids": [list(x) for x in r.missing_retrieved],
            }
            for name, r in report.runs.items()
        },
        "human_measure": report.human_measure,
        "coverage": coverage(report.runs),
    }


def write_fd_report(report: FDReport, out_dir: str | Path) -> list[Path]:
    """Write ``fd.json`` (with the missing passages listed) and ``fd.csv``."""
    from reljudge.io.atomic import write_text_atomic
    from reljudge.io.tables import csv_text, json_ready

    out_dir = Path(out_dir)
    paths = [out_dir / "fd.json", out_dir / "fd.csv"]
    write_text_atomic(paths[0], json.dumps(json_ready(fd_data(report)), indent=1) + "\n")
    write_text_atomic(paths[1], csv_text(_fd_rows(report)))
    return paths
