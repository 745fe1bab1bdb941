"""``judge answers``: check generated-answer files, convert between their formats, and measure
answers against judged passages (``similarity``: `reljudge.analyses.answers.pipeline`)."""

from __future__ import annotations

from pathlib import Path

import typer

from reljudge.console import DATASET_HELP

app = typer.Typer(
    help="Check answer files (TREC RAG 2024 JSON Lines, system<TAB>qid<TAB>answer TSV) and convert them.",
    no_args_is_help=True,
)

FORMATS = ("tsv", "rag24")


@app.command("check")
def answers_check_cmd(
    files: list[Path] = typer.Argument(
        ..., metavar="FILE...", help="Answer files (.jsonl: TREC RAG 2024; else TSV)."
    ),
) -> None:
    """Read answer files strictly, as every command reads them; print systems, topics and answers
    per file. A malformed file, or a system answering a topic in two files, is 'error: FILE:LINE:
    what is wrong' and exit 2."""
    from reljudge.io.answer_sets import read_answer_files

    per_file: dict[tuple[str, str], list[int]] = {}
    for sourced in read_answer_files(files):
        per_file.setdefault((sourced.file, sourced.system), []).append(sourced.answer.length)
    for (path, system), lengths in per_file.items():
        typer.echo(f"{path}: system {system}: {len(lengths)} topic(s), {sum(lengths):,} words")


@app.command("convert")
def answers_convert_cmd(
    files: list[Path] = typer.Argument(..., metavar="FILE...", help="Answer files to read (either format)."),
    out: Path = typer.Option(..., "--out", "--output", help="The file to write (atomically)."),
    to: str = typer.Option("tsv", "--to", help="Output format: tsv (every system) or rag24 (one system)."),
) -> None:
    """Convert answer files: several TREC RAG 2024 runs into one TSV, or a TSV of one system into
    TREC RAG 2024 (sentences and citations are not in a TSV: each answer is one sentence)."""
    from reljudge.errors import InputError
    from reljudge.io.answer_sets import read_answer_files
    from reljudge.io.answers import write_answers_tsv, write_rag24

    if to not in FORMATS:
        raise InputError(f"--to {to!r}: expected tsv or rag24")
    answers = [sourced.answer for sourced in read_answer_files(files)]
    if to == "rag24":
        systems = sorted({a.system for a in answers})
        if len(systems) != 1:
            raise InputError(f"--to rag24 writes one run per file; the input holds {len(systems)} systems")
        count = write_rag24(answers, out)
    else:
        count = write_answers_tsv(answers, out)
    typer.echo(f"{count} answer(s) -> {out}")


@app.command("similarity")
def answers_similarity_cmd(
    files: list[Path] | None = typer.Argument(
        None, metavar="FILE", help="Answer files (TREC RAG 2024 .jsonl or TSV); optional with --runs."
    ),
    qrels: Path | None = typer.Option(None, "--qrels", help="Human relevance labels (TREC qrels)."),
    dataset: str | None = typer.Option(
        None, "--dataset", help=DATASET_HELP + "; also its passages when --corpus is not given."
    ),
    corpus: Path | None = typer.Option(None, "--corpus", help="Passage texts (needed with --encoder)."),
    encoder: str | None = typer.Option(
        None, "--encoder", help="A sentence-transformers model (name or local path) for passages and answers."
    ),
    embeddings: Path | None = typer.Option(
        None,
        "--embeddings",
        help="Precomputed vectors (.npy); answer rows have the id 'answer<TAB>system<TAB>qid'.",
    ),
    ids: Path | None = typer.Option(None, "--ids", help="Ids of the rows of --embeddings."),
    runs: Path | None = typer.Option(
        None,
        "--runs",
        help="Directory of TREC runs: their common-scale score (cosine of each top-grade passage to the run's "
        "first other passage), nDCG@10, their tau-b, and FD@k, beside the answers.",
    ),
    anchors: list[Path] = typer.Option(
        [],
        "--anchors",
        help="Retrieval runs (directories or run files; repeatable) whose top-1 passages stand in for the "
        "judged ones: score(answers, anchor), the mean over anchors and the ordering stability.",
    ),
    k: int = typer.Option(10, "--k", min=1, help="Retrieved passages per topic for the runs' FD."),
    min_grade: float = typer.Option(2, "--min-grade", help="Lowest grade that counts as relevant."),
    max_rel: int | None = typer.Option(
        None, "--max-rel", min=1, help="At most this many reference passages per topic (FD)."
    ),
    target: str = typer.Option(
        "random", "--target", help="Cross-grade target per topic: random or top-grade-first."
    ),
    average: str = typer.Option(
        "micro",
        "--average",
        help="Common-scale score: micro over (topic, target) pairs, or macro over topics.",
    ),
    seed: int = typer.Option(0, "--seed", help="Seed of the target choice and the reference sample."),
    batch_size: int = typer.Option(64, "--batch-size", min=1, help="Texts per encoder batch."),
    device: str | None = typer.Option(None, "--device", help="Encoder device (cpu, cuda, ...)."),
    embedding_cache: Path | None = typer.Option(
        None, "--embedding-cache", help="Cache of encoder vectors (default OUT/embeddings.<model>.npy)."
    ),
    out: Path | None = typer.Option(
        None, "--out", "--output", help="Write similarity.json, similarity.csv and cross_grade.csv here."
    ),
    plot: bool = typer.Option(
        False,
        "--plot",
        help="Also write OUT/cross_grade.png and, with --runs, OUT/common_scale.png (needs --out; matplotlib).",
    ),
    title: str = typer.Option("", "--title", help="Title of the --plot figures."),
    json_output: bool = typer.Option(False, "--json", help="Print the result as JSON."),
) -> None:
    """Answers against judged passages (thesis 5.1): cross-grade validation of the encoder, per-grade
    similarity of each system's answers, its score (mean cosine to the top-grade passages) and the
    FD of its answers (k = 1) against the same reference set as the runs. With --runs, runs and
    answers on one scale (thesis Fig. 5.4); with --anchors, the no-judgment variant (Fig. 5.5)."""
    from reljudge.analyses.answers.files import format_similarity, write_similarity
    from reljudge.analyses.answers.pipeline import answer_similarity_paths
    from reljudge.analyses.inputs import load_human_labels
    from reljudge.errors import InputError

    if average not in ("micro", "macro"):
        raise InputError(f"--average {average!r}: expected micro or macro")
    human = load_human_labels(qrels, dataset)
    if corpus is None and encoder is not None:
        corpus = human.corpus_path
    if plot and out is None:
        raise InputError("--plot needs --out")
    cache = embedding_cache
    if cache is None and out is not None and encoder is not None:
        from reljudge.vectors.embedding_cache import default_cache_path

        cache = default_cache_path(out, encoder)
    data = answer_similarity_paths(
        human.qrels, files or [], corpus=corpus, encoder=encoder, embeddings=embeddings, ids=ids, runs=runs,
        anchors=anchors, k=k, min_grade=min_grade, max_per_topic=max_rel, target=target,
        macro=average == "macro", seed=seed,
        batch_size=batch_size, device=device, embedding_cache=cache,
        notify=lambda line: typer.echo(line, err=True),
    )  # fmt: skip
    if json_output:
        from reljudge.console import echo_json

        echo_json(data)
    else:
        typer.echo(format_similarity(data))
    if out is not None:
        written = write_similarity(data, out)
        if plot:
            from reljudge.analyses.answers.plots import plot_cross_grade

            written.append(plot_cross_grade(data, out / "cross_grade.png", title))
            if runs is not None:
                from reljudge.analyses.answers.plots import plot_common_scale

                scale = {"systems": data["systems"], **data["common_scale"]}
                written.append(plot_common_scale(scale, out / "common_scale.png", title))
        typer.echo(f"wrote {', '.join(map(str, written))}", err=True)
