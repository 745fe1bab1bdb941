"""Embeddings of passages for the Fréchet-distance baseline, from a pluggable encoder.

- `PrecomputedEmbeddings`: a ``.npy`` matrix (one row per passage) with its ids, one per line,
  in a text file (by default beside it: ``X.npy`` → ``X.ids``);
- `SentenceTransformerEncoder`: any sentence-transformers model (optional extra
  ``reljudge[embeddings]``); it embeds passage texts on demand and caches them in memory.

Both offer ``lookup(docids, texts) -> (matrix, found_ids, missing_ids)``: passages that cannot
be embedded (no vector, or no text for an encoder) are returned as ``missing`` so callers can
report them instead of dropping them silently.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Protocol

import numpy as np

from reljudge.errors import InputError, ReljudgeError

EXTRA_HINT = "pip install 'reljudge[embeddings]'"


class MissingExtraError(ReljudgeError):
    """An optional dependency is not installed; the message names the extra to install."""


class EmbeddingSource(Protocol):
    name: str

    def lookup(
        self, docids: Sequence[str], texts: Mapping[str, str] | None = None
    ) -> tuple[np.ndarray, list[str], list[str]]: ...


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

    @classmethod
    def load(cls, path: str | Path, ids_path: str | Path | None = None) -> PrecomputedEmbeddings:
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
        return cls(ids, vectors, name=path.name)

    def lookup(
        self, docids: Sequence[str], texts: Mapping[str, str] | None = None
    ) -> tuple[np.ndarray, list[str], list[str]]:
        found = [d for d in docids if d in self.index]
        missing = [d for d in docids if d not in self.index]
        rows = np.fromiter((self.index[d] for d in found), dtype=np.int64, count=len(found))
        return self.vectors[rows], found, missing


class SentenceTransformerEncoder:
    """Embeds passage texts with a sentence-transformers model (needs the ``embeddings`` extra)."""

    def __init__(self, model_name: str, *, batch_size: int = 64, device: str | None = None):
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError:
            raise MissingExtraError(
                f"the encoder {model_name!r} needs sentence-transformers, which is not installed; "
                f"install the optional extra with: {EXTRA_HINT} (or pass precomputed vectors with --embeddings)"
            ) from None
        self.model = SentenceTransformer(model_name, device=device)
        self.name = model_name
        self.batch_size = batch_size
        self._cache: dict[str, np.ndarray] = {}

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        return np.asarray(
            self.model.encode(list(texts), batch_size=self.batch_size, convert_to_numpy=True),
            dtype=np.float32,
        )

    def lookup(
        self, docids: Sequence[str], texts: Mapping[str, str] | None = None
    ) -> tuple[np.ndarray, list[str], list[str]]:
        texts = texts or {}
        todo = [d for d in dict.fromkeys(docids) if d not in self._cache and d in texts]
        if todo:
            for d, v in zip(todo, self.encode([texts[d] for d in todo]), strict=True):
                self._cache[d] = v
        found = [d for d in docids if d in self._cache]
        missing = [d for d in docids if d not in self._cache]
        if not found:
            return np.zeros((0, 0), dtype=np.float32), found, missing
        return np.stack([self._cache[d] for d in found]), found, missing
