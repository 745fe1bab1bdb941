"""Image vectors from image files (`reljudge.vectors.images`): the files are checked and read in
batches without a model (a stand-in encoder of PIL images); the CLIP-style model itself is tried
only where sentence-transformers is installed."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from reljudge.errors import InputError
from reljudge.vectors.images import ImageEncoder, encode_images, open_image

Image = pytest.importorskip("PIL.Image")


def mean_colour(batch):
    return np.array([np.asarray(image, dtype=float).reshape(-1, 3).mean(axis=0) for image in batch])


def png(path, colour, size=(4, 3)):
    Image.new("RGB", size, colour).save(path)
    return str(path)


def test_images_are_encoded_in_batches_in_order(tmp_path):
    table = {"red": png(tmp_path / "r.png", (255, 0, 0)), "blue": png(tmp_path / "b.png", (0, 0, 255))}
    table["grey"] = png(tmp_path / "g.png", (10, 10, 10))
    calls = []

    def encode(batch):
        calls.append(len(batch))
        return mean_colour(batch)

    vectors = encode_images(["blue", "red", "grey"], table, encode, batch_size=2)
    assert calls == [2, 1]
    assert vectors.tolist() == [[0, 0, 255], [255, 0, 0], [10, 10, 10]]


def test_bad_images_are_errors_naming_the_image(tmp_path):
    (tmp_path / "notes.png").write_text("not an image")
    big = png(tmp_path / "big.png", (1, 2, 3), size=(64, 64))
    cases = {
        "url": ("https://example.org/a.png", "not a local file"),
        "missing": (str(tmp_path / "nowhere.png"), "file not found"),
        "text": (str(tmp_path / "notes.png"), "not a readable image"),
    }
    for image, (where, words) in cases.items():
        with pytest.raises(InputError, match=words) as err:
            open_image(image, where)
        assert repr(image) in str(err.value)
    with pytest.raises(InputError, match="bytes, more than the 10 allowed"):
        open_image("big", big, max_bytes=10)
    with pytest.raises(InputError, match="not in the images table"):
        encode_images(["other"], {"big": big}, mean_colour)


@pytest.mark.skipif(
    importlib.util.find_spec("sentence_transformers") is not None, reason="sentence-transformers is installed"
)
def test_the_model_needs_the_embeddings_extra():
    from reljudge.errors import MissingExtraError

    with pytest.raises(MissingExtraError, match="reljudge\\[embeddings\\]"):
        ImageEncoder("clip-ViT-B-32")
