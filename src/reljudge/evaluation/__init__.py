"""Evaluation: the application layer over `reljudge.metrics` behind ``judge fd``.

It reads the inputs (qrels, runs, embeddings, corpora), computes, and writes and prints the
reports; `reljudge.metrics` only computes.

- ``judge fd``: `fd_paths`, then `format_fd_report` and `write_fd_report`; vectors from
  `load_embeddings` or `TextEmbeddings` (an on-disk cache) over a `SentenceTransformerEncoder`
  (`resolve_model`: a local model directory, an installed weights package or a hub id).

``judge evaluate`` is `reljudge.analyses.evaluate`, ``judge calibrate``
`reljudge.analyses.calibrate`, ``judge combine`` `reljudge.analyses.combine`; their inputs
(judgment sets, human labels, runs) are `reljudge.analyses.inputs`.

Heavy dependencies (scipy, matplotlib, sentence-transformers) are imported on use.
"""

from __future__ import annotations

from reljudge.errors import MissingExtraError
from reljudge.evaluation.embeddings import TextEmbeddings, default_cache_path, load_embeddings
from reljudge.evaluation.encoders import SentenceTransformerEncoder, resolve_model
from reljudge.evaluation.fd import fd_paths, format_fd_report, write_fd_report

__all__ = [
    "MissingExtraError",
    "SentenceTransformerEncoder",
    "TextEmbeddings",
    "default_cache_path",
    "fd_paths",
    "format_fd_report",
    "load_embeddings",
    "resolve_model",
    "write_fd_report",
]
