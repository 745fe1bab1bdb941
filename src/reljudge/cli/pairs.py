"""``judge pairs sample``: the thesis's pair samples as a pairs file (``qid docidA docidB``)."""

from __future__ import annotations

from pathlib import Path

import typer

from reljudge.console import DATASET_HELP
from reljudge.errors import InputError

app = typer.Typer(help="Pair samples for preference judging (judge run --pairs FILE).", no_args_is_help=True)


@app.command("sample")
def sample_cmd(
    scheme: str = typer.Option(
        ...,
        "--scheme",
        help="unacceptable: Unacceptable vs other documents, max(|bad|,|good|) pairs per topic; "
        "sampler-round0: the first round of the preference sampler over the documents above Unacceptable.",
    ),
    qrels: Path | None = typer.Option(None, "--qrels", help="Human qrels (qid iter docid grade)."),
    dataset: str | None = typer.Option(None, "--dataset", help=DATASET_HELP + "."),
    unacceptable: float | None = typer.Option(
        None, "--unacceptable", help="Highest Unacceptable grade [default: 0; the dataset's lowest grade]."
    ),
    seed: int = typer.Option(0, "--seed", help="Seed of the shuffles and of the sampler."),
    p: int = typer.Option(7, "--p", min=1, help="sampler-round0: pairings per document."),
    out: Path = typer.Option(
        ..., "--out", "--output", help="The pairs file to write (qid docidA docidB), atomically."
    ),
) -> None:
    """Write the pair sample of a scheme; judge it with judge run --pairs FILE."""
    from reljudge.io.atomic import write_text_atomic
    from reljudge.judges.pairwise.alignment_pairs import SCHEMES, sample_pairs

    if scheme not in SCHEMES:
        raise InputError(f"--scheme must be {' or '.join(SCHEMES)}, got {scheme!r}")
    if (qrels is None) == (dataset is None):
        raise InputError("give exactly one of --qrels and --dataset")
    if qrels is not None:
        from reljudge.io.trec import read_qrels

        grades = read_qrels(qrels)
        low = 0.0
    else:
        from reljudge.datasets import load_dataset

        ds = load_dataset(dataset, passages=False)
        grades = ds.qrels
        low = float(ds.min_grade)
    pairs = sample_pairs(
        grades, scheme, unacceptable=low if unacceptable is None else unacceptable, seed=seed, p=p
    )
    write_text_atomic(out, "".join(f"{q} {a} {b}\n" for q, a, b in pairs))
    typer.echo(f"wrote {len(pairs)} pairs of {len({q for q, _, _ in pairs})} topics to {out}", err=True)
