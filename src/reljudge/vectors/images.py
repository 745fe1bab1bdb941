"""Image vectors from image files, for ``judge grids --encoder`` (optional extra ``reljudge[embeddings]``
and Pillow).

`ImageEncoder` embeds local image files with a CLIP-style sentence-transformers model (one that
encodes images as well as texts, e.g. ``clip-ViT-B-32``), loaded the way the text encoder of
``judge fd`` loads its model (`reljudge.vectors.encoders.SentenceTransformerEncoder`: a local
directory, an installed weights package or a Hugging Face id; nothing is imported until the first
image is encoded). `encode_images` reads the files of an images table (`reljudge.io.grids.read_images`)
in batches and hands them to any function of PIL images, so its checks run without a model.

Only local files are read: a URL is an error that says to pass precomputed vectors
(``--embeddings``) instead; a missing file, a file over ``max_bytes`` (default 50 MB), a file
Pillow cannot read as an image and an image of more than `MAX_PIXELS` pixels are `InputError`
naming the image id and its file.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from reljudge.errors import InputError, MissingExtraError, clip

#: the largest image file read (bytes)
MAX_IMAGE_BYTES = 50 * 1024 * 1024
#: the largest image decoded (pixels): a small file may decompress to a huge image
MAX_PIXELS = 100_000_000


def open_image(image: str, where: str, *, max_bytes: int = MAX_IMAGE_BYTES) -> Any:
    """The image file ``where`` as an RGB PIL image (see the module docstring for the checks)."""
    try:
        from PIL import Image
    except ImportError:
        raise MissingExtraError("encoding images needs Pillow: pip install pillow") from None
    if "://" in where or where.startswith("data:"):
        raise InputError(
            f"image {clip(image)!r}: {clip(where)} is not a local file; only local files are encoded "
            "(pass precomputed vectors with --embeddings instead)"
        )
    path = Path(where)
    if not path.is_file():
        raise InputError(f"image {clip(image)!r}: file not found", path)
    size = path.stat().st_size
    if size > max_bytes:
        raise InputError(f"image {clip(image)!r}: {size:,} bytes, more than the {max_bytes:,} allowed", path)
    try:
        with Image.open(path) as opened:
            if opened.width * opened.height > MAX_PIXELS:
                raise InputError(
                    f"image {clip(image)!r}: {opened.width} × {opened.height} pixels, more than {MAX_PIXELS:,}",
                    path,
                )
            return opened.convert("RGB")
    except InputError:
        raise
    except Exception as err:  # Pillow raises UnidentifiedImageError, OSError, DecompressionBombError ...
        raise InputError(f"image {clip(image)!r}: not a readable image ({clip(str(err))})", path) from None


def encode_images(
    images: Sequence[str],
    table: Mapping[str, str],
    encode: Callable[[list[Any]], np.ndarray],
    *,
    batch_size: int = 32,
    max_bytes: int = MAX_IMAGE_BYTES,
) -> np.ndarray:
    """The vectors (one row per id of ``images``, in that order) of the files ``table`` names,
    ``encode`` applied to batches of at most ``batch_size`` PIL images."""
    missing = [i for i in images if i not in table]
    if missing:
        raise InputError(f"image {clip(missing[0])!r} is not in the images table ({len(missing)} missing)")
    rows: list[np.ndarray] = []
    for start in range(0, len(images), batch_size):
        batch = [open_image(i, table[i], max_bytes=max_bytes) for i in images[start : start + batch_size]]
        vectors = np.asarray(encode(batch), dtype=np.float32).reshape(len(batch), -1)
        rows.append(vectors)
    if not rows:
        return np.zeros((0, 0), dtype=np.float32)
    return np.vstack(rows)


class ImageEncoder:
    """A CLIP-style sentence-transformers model that encodes images (needs the ``embeddings``
    extra and Pillow); ``name`` identifies the model."""

    def __init__(self, model: str, *, batch_size: int = 32, device: str | None = None):
        from reljudge.vectors.encoders import SentenceTransformerEncoder

        self._model = SentenceTransformerEncoder(model, batch_size=batch_size, device=device)
        self.name = self._model.name
        self.batch_size = batch_size

    def encode_pil(self, batch: list[Any]) -> np.ndarray:
        vectors = self._model.load().encode(
            batch, batch_size=self.batch_size, convert_to_numpy=True, show_progress_bar=False
        )
        return np.asarray(vectors, dtype=np.float32)

    def encode_files(self, images: Sequence[str], table: Mapping[str, str]) -> np.ndarray:
        """The vectors of the images (ids of ``table``), one row each, in order."""
        return encode_images(images, table, self.encode_pil, batch_size=self.batch_size)


__all__ = ["MAX_IMAGE_BYTES", "MAX_PIXELS", "ImageEncoder", "encode_images", "open_image"]
