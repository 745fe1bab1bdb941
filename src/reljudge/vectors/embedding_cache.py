"""Texts encoded on demand, the vectors cached in memory and on disk: `TextEmbeddings`, an
embedding source (`reljudge.vectors.embedding_source`) that embeds passage texts with a
`TextEncoder` (e.g. `reljudge.vectors.encoders.SentenceTransformerEncoder`) on demand, in
batches (with a progress bar for big sets), keeps the vectors in memory and, with
``cache_path``, on disk. `vector_source` gives a command its vectors: from a ``.npy`` file
(`reljudge.vectors.npy`) or encoded through this cache.

Passages that cannot be embedded (no vector, or no text for an encoder) are returned as
``missing`` so callers can report them instead of dropping them silently.

**Disk cache** (``TextEmbeddings(cache_path=P)`` with ``P = X.npy``): three files, each
replaced atomically, written in this order: ``X.npy`` (float32 rows), ``X.ids`` (one docid a
line, so the pair also works as ``--embeddings X.npy``), ``X.json`` (encoder identity,
dimension, and the SHA-256 prefix of the text each row was computed from). A cache whose
files disagree (e.g. an interrupted write), that came from another encoder, or that cannot be
read is ignored and rebuilt (``cache_status`` says why); a row whose text changed is
re-encoded. Vectors computed before an error or Ctrl-C are saved.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import numpy as np

from reljudge.errors import InputError, MissingExtraError
from reljudge.vectors.embedding_source import TextEncoder
from reljudge.vectors.npy import load_embeddings

CACHE_FORMAT = 1
_TEXT_HASH_CHARS = 16  # 64 bits of SHA-256: enough to notice a changed passage text


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:_TEXT_HASH_CHARS]


def default_cache_path(directory: str | Path, encoder_name: str) -> Path:
    """``DIRECTORY/embeddings.<encoder>.npy`` with the encoder name made file-safe."""
    name = encoder_name.rstrip("/\\")
    base = Path(name).name if Path(name).is_absolute() else name.replace("/", "__")
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", base).strip("._") or "encoder"
    return Path(directory) / f"embeddings.{slug}.npy"


class TextEmbeddings:
    """An embedding source that encodes passage texts with ``encoder`` and caches the vectors.

    ``prepare(docids, texts)`` encodes, in one batched pass, every listed passage that has a
    text and no valid cached vector; ``lookup`` calls it for what it has not seen yet, so
    `fd_runs` (which prepares everything first) and `fd_at_k` both work. A docid with no text
    in ``texts`` is missing, even if the disk cache holds a vector for it.
    ``progress``: True/False, or None for a bar on a terminal when at least
    ``progress_min`` passages are to be encoded.
    """

    def __init__(
        self,
        encoder: TextEncoder,
        *,
        cache_path: str | Path | None = None,
        batch_size: int = 64,
        progress: bool | None = None,
        progress_min: int = 256,
    ):
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        self.encoder = encoder
        self.name = encoder.name
        self.batch_size = batch_size
        self.progress = progress
        self.progress_min = progress_min
        self.cache_path = Path(cache_path) if cache_path is not None else None
        self._vectors: dict[str, np.ndarray] = {}
        self._hashes: dict[str, str] = {}
        self._valid: dict[str, str] = {}  # docid -> the text its vector was checked against
        self._dirty = False
        self._dim: int | None = None
        self._counted: set[str] = set()  # docids already counted as reused
        self.encoded = 0  # passages encoded in this session
        self.reused = 0  # passages taken from the disk cache
        self.encode_seconds = 0.0
        self.cache_status = "no disk cache"
        if self.cache_path is not None:
            self.cache_status = self._load_cache()

    # disk cache

    def _sidecars(self) -> tuple[Path, Path, Path]:
        assert self.cache_path is not None
        return self.cache_path, self.cache_path.with_suffix(".ids"), self.cache_path.with_suffix(".json")

    def _load_cache(self) -> str:
        npy, ids_path, meta_path = self._sidecars()
        present = [p.exists() for p in (npy, ids_path, meta_path)]
        if not any(present):
            return f"new cache {npy}"
        if not all(present):
            return f"ignored incomplete cache {npy} (a file is missing); rebuilding"
        try:
            meta = json.loads(meta_path.read_text(encoding="utf-8"))
            ids = ids_path.read_text(encoding="utf-8").splitlines()
            vectors = np.load(npy, allow_pickle=False)
        except (OSError, ValueError) as err:
            return f"ignored unreadable cache {npy} ({err}); rebuilding"
        hashes = meta.get("text_sha256") if isinstance(meta, dict) else None
        if not isinstance(meta, dict) or meta.get("format") != CACHE_FORMAT:
            return f"ignored cache {npy} (unknown format); rebuilding"
        if meta.get("encoder") != self.name:
            return f"ignored cache {npy} (made by encoder {meta.get('encoder')!r}); rebuilding"
        n = len(ids)
        if (
            vectors.ndim != 2
            or vectors.shape[0] != n
            or not isinstance(hashes, list)
            or len(hashes) != n
            or meta.get("rows") != n
            or meta.get("dim") != vectors.shape[1]
            or len(set(ids)) != n
        ):
            return f"ignored inconsistent cache {npy} (files disagree, e.g. an interrupted write); rebuilding"
        vectors = vectors.astype(np.float32, copy=False)
        self._dim = int(vectors.shape[1])
        for i, (docid, h) in enumerate(zip(ids, hashes, strict=True)):
            self._vectors[docid] = vectors[i]
            self._hashes[docid] = str(h)
        return f"loaded {n} cached vectors from {npy}"

    def save(self) -> Path | None:
        """Write the disk cache (all vectors known, old and new) if anything changed."""
        if self.cache_path is None or not self._dirty:
            return None
        from reljudge.io.atomic import atomic_write, write_text_atomic

        npy, ids_path, meta_path = self._sidecars()
        ids = list(self._vectors)
        matrix = np.stack([self._vectors[d] for d in ids]).astype(np.float32, copy=False)
        with atomic_write(npy, "wb") as handle:
            np.save(handle, matrix, allow_pickle=False)
        write_text_atomic(ids_path, "".join(f"{d}\n" for d in ids))
        meta = {
            "format": CACHE_FORMAT,
            "encoder": self.name,
            "dim": int(matrix.shape[1]),
            "rows": len(ids),
            "text_sha256": [self._hashes[d] for d in ids],
        }
        write_text_atomic(meta_path, json.dumps(meta) + "\n")
        self._dirty = False
        return npy

    # encoding

    def _is_valid(self, docid: str, text: str) -> bool:
        seen = self._valid.get(docid)
        if seen is not None and (seen is text or seen == text):
            return True
        if docid in self._vectors and self._hashes.get(docid) == text_hash(text):
            self._valid[docid] = text
            return True
        return False

    def prepare(self, docids: Iterable[str], texts: Mapping[str, str]) -> int:
        """Encode every listed passage that has a text and no valid vector; returns how many."""
        todo: list[str] = []
        for d in dict.fromkeys(docids):
            text = texts.get(d)
            if text is None:
                continue
            if self._is_valid(d, text):
                if d not in self._counted:
                    self._counted.add(d)
                    self.reused += 1
                continue
            todo.append(d)
        if not todo:
            return 0
        todo.sort(key=lambda d: len(texts[d]), reverse=True)  # similar lengths share a batch
        if self.progress is not None:
            disable: bool | None = not self.progress
        else:  # auto: big sets only, and only on a terminal (tqdm's None)
            disable = None if len(todo) >= self.progress_min else True
        from tqdm import tqdm

        load = getattr(self.encoder, "load", None)
        if callable(load):  # a lazily loaded model: load it before the encoding clock starts
            load()
        bar = tqdm(total=len(todo), unit="passage", desc="encoding", disable=disable, leave=False)
        start = time.perf_counter()
        done = 0
        try:
            for i in range(0, len(todo), self.batch_size):
                chunk = todo[i : i + self.batch_size]
                vectors = np.asarray(self.encoder.encode([texts[d] for d in chunk]), dtype=np.float32)
                if vectors.ndim != 2 or vectors.shape[0] != len(chunk):
                    raise ValueError(
                        f"encoder {self.name!r} returned shape {vectors.shape} for {len(chunk)} texts"
                    )
                if self._dim is not None and vectors.shape[1] != self._dim:
                    raise ValueError(
                        f"encoder {self.name!r} returned {vectors.shape[1]}-d vectors, expected {self._dim}-d"
                    )
                self._dim = int(vectors.shape[1])
                for d, v in zip(chunk, vectors, strict=True):
                    self._vectors[d] = v
                    self._hashes[d] = text_hash(texts[d])
                    self._valid[d] = texts[d]
                    self._counted.add(d)
                self._dirty = True
                done += len(chunk)
                bar.update(len(chunk))
        finally:
            bar.close()
            self.encode_seconds += time.perf_counter() - start
            self.encoded += done
            self.save()
        return done

    def lookup(
        self, docids: Sequence[str], texts: Mapping[str, str] | None = None
    ) -> tuple[np.ndarray, list[str], list[str]]:
        if texts is not None:
            self.prepare(docids, texts)
            found = [d for d in docids if d in texts and self._is_valid(d, texts[d])]
        else:
            found = [d for d in docids if d in self._vectors]
        keep = set(found)
        missing = [d for d in docids if d not in keep]
        if not found:
            return np.zeros((0, 0), dtype=np.float32), found, missing
        return np.stack([self._vectors[d] for d in found]), found, missing

    def stats(self) -> dict:
        rate = self.encoded / self.encode_seconds if self.encode_seconds > 0 else float("nan")
        return {
            "encoder": self.name,
            "encoded": self.encoded,
            "reused_from_cache": self.reused,
            "encode_seconds": round(self.encode_seconds, 3),
            "passages_per_second": rate,
            "cache": str(self.cache_path) if self.cache_path is not None else None,
            "cache_status": self.cache_status,
        }


def vector_source(encoder, embeddings, ids, texts, needed, *, batch_size, device, cache_file, say):
    """The vectors of ``needed`` (passages and answers): from a ``.npy`` file (``embeddings``) or
    encoded with the sentence-transformers ``encoder`` from ``texts``, cached in ``cache_file``.
    Returns ``(source, model)``; close the model when done (None for a file)."""
    if embeddings is not None:
        return load_embeddings(embeddings, ids), None
    from reljudge.vectors.encoders import SentenceTransformerEncoder

    try:
        model = SentenceTransformerEncoder(encoder, batch_size=batch_size, device=device)
    except MissingExtraError as err:
        raise InputError(str(err)) from None
    source = TextEmbeddings(model, cache_path=cache_file, batch_size=batch_size)
    say(f"encoder {model.name} ({model.location}); {len(needed)} texts; {source.cache_status}")
    source.prepare(needed, texts)
    st = source.stats()
    say(f"encoded {st['encoded']} text(s) in {st['encode_seconds']:.1f} s; {st['reused_from_cache']} reused")
    return source, model
