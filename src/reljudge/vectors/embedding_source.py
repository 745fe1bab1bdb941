"""Passage vectors as the analyses read them (FD, answer similarity, the common scale). Pure.

An *embedding source* is any object with a ``name`` and
``lookup(docids, texts) -> (matrix, found_ids, missing_ids)``: the vectors of the passages it
has (one row each, in ``docids`` order) and the ids it has none for, so that callers report
them instead of dropping them silently. It may also have ``prepare(docids, texts)``, which FD
calls once with every passage it will look up (to encode them in one batched pass).

`PrecomputedEmbeddings` is the in-memory source (vectors keyed by docid). Reading vectors from
files (`reljudge.vectors.npy`), encoding texts with a model (`reljudge.vectors.encoders`,
`reljudge.vectors.endpoint`) and caching the vectors on disk (`reljudge.vectors.embedding_cache`)
are the other modules of this package.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

import numpy as np


class EmbeddingSource(Protocol):
    name: str

    def lookup(
        self, docids: Sequence[str], texts: Mapping[str, str] | None = None
    ) -> tuple[np.ndarray, list[str], list[str]]: ...


class TextEncoder(Protocol):
    """Turns texts into vectors; ``name`` identifies the model (cache entries are keyed by it)."""

    name: str

    def encode(self, texts: Sequence[str]) -> np.ndarray: ...


class PrecomputedEmbeddings:
    """Vectors keyed by docid (rows of a matrix)."""

    def __init__(self, ids: Sequence[str], vectors: np.ndarray, name: str = "precomputed"):
        vectors = np.asarray(vectors, dtype=np.float32)
        if vectors.ndim != 2:
            raise ValueError("embeddings must be a 2-D array (passages × dimensions)")
        if len(ids) != vectors.shape[0]:
            raise ValueError(f"{len(ids)} ids for {vectors.shape[0]} vectors")
        self.index = {docid: i for i, docid in enumerate(ids)}
        if len(self.index) != len(ids):
            raise ValueError("duplicate ids in embeddings")
        self.vectors = vectors
        self.name = name

    @property
    def dim(self) -> int:
        return int(self.vectors.shape[1])

    def lookup(
        self, docids: Sequence[str], texts: Mapping[str, str] | None = None
    ) -> tuple[np.ndarray, list[str], list[str]]:
        found = [d for d in docids if d in self.index]
        missing = [d for d in docids if d not in self.index]
        rows = np.fromiter((self.index[d] for d in found), dtype=np.int64, count=len(found))
        return self.vectors[rows], found, missing
