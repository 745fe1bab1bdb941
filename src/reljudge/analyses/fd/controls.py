"""Controls for FD's agreement with the human measure: how much of it comes by construction.

A run that retrieves a judged relevant passage gets a higher nDCG *and* puts the reference
passage's own vector into its retrieved set, which lowers FD whatever the vectors mean. Two
controls measure that part, each reported beside the real agreement (``controls`` in ``fd.json``):

- ``random_vectors``: FD recomputed with every passage's vector replaced by a random one
  (standard normal, as many dimensions as the real vectors, the same vector for the same passage
  wherever it appears, seeded by the passage id; `RandomVectors`). Only the identity of passages
  is left, so its agreement is the part that needs no semantics at all. One draw of random
  vectors varies a lot (DL21, 32 dimensions: τ-b 0.21 and 0.48 from two draws), so the control
  is the mean over several draws (`reljudge.analyses.fd.per_run.RANDOM_DRAWS`), with its range;
- ``reference_excluded``: FD with the real vectors, each run's top k taken after removing the
  topic's reference passages from its ranking (`retrieved_set`'s ``exclude``), so no retrieved
  vector is a reference vector. With ``--urr`` the runs already skip every judged passage and
  this control is the FD itself.

Both use the same orientation as the real figure (the measure against −FD: positive = agreement).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence

import numpy as np

from reljudge.vectors.embedding_source import EmbeddingSource

#: what each control is (stated in fd.json)
CONTROLS = {
    "random_vectors": "every passage's vector replaced by a random standard-normal one of the same dimension "
    "(the same passage keeps its vector): the agreement that needs no semantics, only shared passages; the mean "
    "over several draws of random vectors, with the range (_min, _max)",
    "reference_excluded": "real vectors; each run's top k taken after removing the topic's reference passages "
    "from its ranking, so no retrieved vector is a reference vector",
}


class RandomVectors:
    """An embedding source with a random vector for every passage the wrapped source has (so the
    same passages are found and missing), fixed by ``seed`` and the passage id."""

    def __init__(self, source: EmbeddingSource, seed: int = 0):
        self.source = source
        self.seed = seed
        self.name = f"random vectors (control for {getattr(source, 'name', '?')})"
        self._cache: dict[str, np.ndarray] = {}

    def _vector(self, docid: str, dim: int) -> np.ndarray:
        v = self._cache.get(docid)
        if v is None or v.size != dim:
            digest = hashlib.blake2b(f"{self.seed}\0{docid}".encode(), digest_size=16).digest()
            rng = np.random.default_rng(list(digest))
            v = self._cache[docid] = rng.standard_normal(dim)
        return v

    def lookup(
        self, docids: Sequence[str], texts: Mapping[str, str] | None = None
    ) -> tuple[np.ndarray, list[str], list[str]]:
        matrix, found, missing = self.source.lookup(docids, texts)
        if not found:
            return matrix, found, missing
        dim = matrix.shape[1]
        return np.stack([self._vector(d, dim) for d in found]), found, missing
