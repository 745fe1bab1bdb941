"""Precomputed vectors from files: a ``.npy`` matrix (one row per passage) with its ids, one per
line, in a text file (by default beside it: ``X.npy`` → ``X.ids``), read as a
`reljudge.vectors.embedding_source.PrecomputedEmbeddings` (``--embeddings X.npy``, ``--ids``).
The embedding cache (`reljudge.vectors.embedding_cache`) writes the same pair, so a cache also
works as ``--embeddings``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from reljudge.errors import InputError
from reljudge.vectors.embedding_source import PrecomputedEmbeddings


def load_embeddings(path: str | Path, ids_path: str | Path | None = None) -> PrecomputedEmbeddings:
    """Precomputed vectors from a ``.npy`` matrix and its ids, one per line (by default beside
    it: ``X.npy`` → ``X.ids``); every problem is an `InputError` naming the file."""
    path = Path(path)
    ids_path = Path(ids_path) if ids_path is not None else path.with_suffix(".ids")
    if not path.exists():
        raise InputError("embeddings file not found", path)
    if not ids_path.exists():
        raise InputError(f"ids file not found (one docid per line, row order of {path.name})", ids_path)
    try:
        vectors = np.load(path, allow_pickle=False)
    except (OSError, ValueError) as err:
        raise InputError(f"cannot read embeddings: {err}", path) from None
    ids = [line.strip() for line in ids_path.read_text(encoding="utf-8").splitlines() if line.strip()]
    if vectors.ndim != 2:
        raise InputError(f"expected a 2-D array, found shape {vectors.shape}", path)
    if len(ids) != vectors.shape[0]:
        raise InputError(f"{len(ids)} ids for {vectors.shape[0]} vectors in {path.name}", ids_path)
    if len(set(ids)) != len(ids):
        raise InputError("duplicate ids", ids_path)
    return PrecomputedEmbeddings(ids, vectors, name=path.name)
