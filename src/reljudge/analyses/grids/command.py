"""``judge grids``: offline set-based evaluation of text-to-image grids (thesis §5.2), computed by
`reljudge.analyses.grids.pipeline`, printed and written by `reljudge.analyses.grids.files`."""

from __future__ import annotations

from pathlib import Path

import typer

from reljudge.console import echo_json


def grids_cmd(
    grids: Path = typer.Argument(
        ...,
        metavar="GRIDS",
        help="Grids: prompt<TAB>system<TAB>position<TAB>image (position 1..k, row-major).",
    ),
    embeddings: Path | None = typer.Option(
        None, "--embeddings", help="Image vectors: NAME.npy (n x d) with NAME.ids (one image id per line)."
    ),
    ids: Path | None = typer.Option(
        None, "--ids", help="Ids of the rows of --embeddings (default NAME.ids)."
    ),
    encoder: str | None = typer.Option(
        None,
        "--encoder",
        help="Encode the image files of --images with a CLIP-style sentence-transformers model (extra 'embeddings' "
        "and Pillow; a local directory, an installed weights package or a Hugging Face id).",
    ),
    images: Path | None = typer.Option(
        None, "--images", help="Images table for --encoder: image<TAB>path-or-url."
    ),
    targets: Path | None = typer.Option(
        None, "--targets", help="Target images per prompt: prompt<TAB>image (several lines per prompt)."
    ),
    target_embeddings: Path | None = typer.Option(
        None,
        "--target-embeddings",
        help="Target vectors: NAME.npy with NAME.ids holding prompt ids (repeatable ids).",
    ),
    target_aggregate: str = typer.Option(
        "max", "--target-aggregate", help="Several targets: max (default) or mean of the clipped cosines."
    ),
    salience: Path | None = typer.Option(
        None, "--salience", help="Per-image salience: image<TAB>value (>= 0); Plackett-Luce trajectories."
    ),
    preferences: Path | None = typer.Option(
        None,
        "--preferences",
        help="Human grid preferences: prompt<TAB>system_x<TAB>system_y<TAB>pref[<TAB>set], pref -2 (X much better) "
        ".. +2 (Y much better).",
    ),
    gamma: float = typer.Option(
        0.9, "--gamma", help="Probability of going on to the next image (0 < gamma <= 1)."
    ),
    samples: int = typer.Option(100, "--samples", min=1, help="Sampled trajectories per prompt."),
    exact: bool = typer.Option(
        False, "--exact", help="Exact expectation over all k! orders (k <= 8) instead."
    ),
    trajectory: str | None = typer.Option(
        None,
        "--trajectory",
        help="Law of the non-u measures: salience (Plackett-Luce) or row-major; default salience when --salience "
        "is given, else row-major.",
    ),
    seed: int = typer.Option(0, "--seed", help="Seed of the trajectories and of the bootstrap."),
    bootstrap: int = typer.Option(
        1000, "--bootstrap", min=1, help="Bootstrap replicates of the agreement interval."
    ),
    batch_size: int = typer.Option(32, "--batch-size", min=1, help="Images per encoder batch."),
    device: str | None = typer.Option(None, "--device", help="Encoder device (cpu, cuda, ...)."),
    out: Path | None = typer.Option(
        None,
        "--out",
        "--output",
        help="Write per_prompt.tsv, per_system.tsv, agreement.tsv and grids.json here.",
    ),
    plot: bool = typer.Option(
        False,
        "--plot",
        help="Also write OUT/grids_systems.png and OUT/grids_agreement.png (needs --out; matplotlib).",
    ),
    title: str = typer.Option("", "--title", help="Title of the --plot figures."),
    json_output: bool = typer.Option(False, "--json", help="Print the result as JSON."),
) -> None:
    """Measure image grids by the set-based measures of thesis 5.2: RBP and ERR over trajectories
    (Eq. 5.1, 5.2), relevance as the cosine to the prompt's target images (Eq. 5.3), the novelty
    discount (Eq. 5.4), uniform or salience (Plackett-Luce) trajectories, the six variants of
    Table 5.5, Diversity and FID; with --preferences, each measure's agreement with human grid
    preferences per prompt set, with a bootstrap interval over prompts."""
    from reljudge.analyses.grids.evaluate import GridSettings
    from reljudge.analyses.grids.files import format_report, report_data, write_outputs
    from reljudge.analyses.grids.pipeline import grids_from_paths
    from reljudge.errors import InputError

    if plot and out is None:
        raise InputError("--plot writes figures into --out DIR: give --out")
    settings = GridSettings(
        gamma=gamma,
        samples=samples,
        seed=seed,
        exact=exact,
        targets=target_aggregate,
        trajectory=trajectory,
        n_boot=bootstrap,
    )
    report, sources = grids_from_paths(
        grids,
        embeddings=embeddings,
        ids=ids,
        encoder=encoder,
        images=images,
        targets=targets,
        target_embeddings=target_embeddings,
        salience=salience,
        preferences=preferences,
        settings=settings,
        batch_size=batch_size,
        device=device,
        notify=lambda line: typer.echo(line, err=True),
    )
    if json_output:
        echo_json(report_data(report, sources))
    else:
        typer.echo(format_report(report))
    if out is not None:
        written = write_outputs(out, report, sources)
        if plot:
            from reljudge.analyses.grids.plots import plot_agreement, plot_systems

            written.append(plot_systems(report, out / "grids_systems.png", title))
            if report.agreement:
                written.append(plot_agreement(report, out / "grids_agreement.png", title))
        typer.echo(f"wrote {', '.join(str(w) for w in written)}", err=True)
