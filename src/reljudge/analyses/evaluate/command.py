"""``judge evaluate`` (judgment sets against human labels) and ``judge plot-summary`` (alignment
against agreement over several evaluations)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from reljudge.console import DATASET_HELP, echo_json
from reljudge.errors import InputError


def evaluate_cmd(
    qrels: Path | None = typer.Option(None, "--qrels", help="Human qrels (qid iter docid grade)."),
    dataset: str | None = typer.Option(
        None,
        "--dataset",
        help=DATASET_HELP + ".",
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
    rel_threshold: int | None = typer.Option(
        None,
        "--rel-threshold",
        "--rel-level",
        min=0,
        help="Human grades >= this are relevant for binary measures (map, P@10, RR@10, R-prec: trec_eval -l); "
        "default the level of --dataset (2 for TREC DL, 3 for ANTIQUE), else 1.",
    ),
    complete: bool = typer.Option(
        False,
        "--complete",
        "-c",
        help="As trec_eval -c: a run missing a topic of the qrels scores 0 on it, and means are over all "
        "the qrels' topics (default: each run's own topics).",
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
        help="Judge scores >= this are relevant for binary kappa, for every set (default: the cut each set's judge "
        "declares, printed; for a set no judge declares, 1 for 0/1 labels, the human threshold for other whole numbers, "
        "else > 0).",
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
    from reljudge.analyses.evaluate.files import write_outputs
    from reljudge.analyses.evaluate.pipeline import evaluate_paths
    from reljudge.analyses.evaluate.summary import coverage_warnings, off_scale_warnings, summary, warnings

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
        relevance_level=rel_threshold,
        complete=complete,
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
    for note in notes + coverage_warnings(report) + off_scale_warnings(report):
        typer.echo(note, err=True)
    written = write_outputs(report, out, plot=plot)
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
    from reljudge.analyses.evaluate.files import read_points, write_summary

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
