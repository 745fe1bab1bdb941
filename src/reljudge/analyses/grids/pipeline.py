"""``judge grids`` from paths: the vectors of the images (a ``.npy`` pair, or an image encoder over
an images table), the inputs read and cross-checked (`reljudge.analyses.grids.files`), every grid
measured (`reljudge.analyses.grids.evaluate`)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from reljudge.analyses.grids.evaluate import GridReport, GridSettings, evaluate_grids
from reljudge.analyses.grids.files import load_inputs
from reljudge.errors import InputError


def image_vectors(
    grids: str | Path,
    *,
    embeddings: str | Path | None = None,
    ids: str | Path | None = None,
    encoder: str | None = None,
    images: str | Path | None = None,
    targets: str | Path | None = None,
    batch_size: int = 32,
    device: str | None = None,
    notify: Callable[[str], None] | None = None,
) -> tuple[tuple[list[str], Any], str]:
    """``((ids, matrix), name)``: precomputed vectors, or the grid and target images encoded."""
    from reljudge.io.grids import read_embeddings

    if (embeddings is None) == (encoder is None):
        raise InputError("give exactly one of --embeddings FILE.npy or --encoder MODEL (with --images FILE)")
    if embeddings is not None:
        return read_embeddings(embeddings, ids), str(embeddings)
    assert encoder is not None
    if images is None:
        raise InputError("--encoder encodes image files: give --images FILE (image<TAB>path)")
    if targets is None:
        raise InputError("--encoder needs the targets as image ids (--targets FILE), not --target-embeddings")
    from reljudge.io.grids import read_grids, read_images, read_targets
    from reljudge.vectors.images import ImageEncoder

    table = read_images(images)
    wanted = sorted(
        set(read_grids(grids).images()) | {i for ids_ in read_targets(targets).values() for i in ids_}
    )
    model = ImageEncoder(encoder, batch_size=batch_size, device=device)
    if notify:
        notify(f"encoding {len(wanted)} image(s) with {model.name}")
    return (wanted, model.encode_files(wanted, table)), f"encoder {model.name}"


def grids_from_paths(
    grids: str | Path,
    *,
    embeddings: str | Path | None = None,
    ids: str | Path | None = None,
    encoder: str | None = None,
    images: str | Path | None = None,
    targets: str | Path | None = None,
    target_embeddings: str | Path | None = None,
    salience: str | Path | None = None,
    preferences: str | Path | None = None,
    settings: GridSettings = GridSettings(),
    batch_size: int = 32,
    device: str | None = None,
    notify: Callable[[str], None] | None = None,
) -> tuple[GridReport, dict[str, str]]:
    """The report of ``judge grids`` and the names of its inputs."""
    settings.check()
    vectors, name = image_vectors(
        grids,
        embeddings=embeddings,
        ids=ids,
        encoder=encoder,
        images=images,
        targets=targets,
        batch_size=batch_size,
        device=device,
        notify=notify,
    )
    inputs = load_inputs(
        grids,
        vectors=vectors,
        vectors_name=name,
        targets=targets,
        target_embeddings=target_embeddings,
        salience=salience,
        preferences=preferences,
    )
    report = evaluate_grids(
        inputs.grids,
        inputs.vectors,
        inputs.targets,
        salience=inputs.salience,
        preferences=inputs.preferences,
        settings=settings,
    )
    return report, inputs.sources


__all__ = ["grids_from_paths", "image_vectors"]
