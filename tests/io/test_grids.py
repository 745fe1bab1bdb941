"""The image-grid input formats (`reljudge.io.grids`): grids, images, embeddings, targets,
salience and human preferences, each bad shape a ``FILE:LINE`` error."""

from __future__ import annotations

import numpy as np
import pytest

from reljudge.errors import InputError
from reljudge.io.grids import (
    read_embeddings,
    read_grids,
    read_images,
    read_preferences,
    read_salience,
    read_target_embeddings,
    read_targets,
)


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_grids_in_position_order_whatever_the_line_order(tmp_path):
    path = write(
        tmp_path,
        "grids.tsv",
        "# a comment\nprompt\tsystem\tposition\timage\n"
        "q2\tB\t2\tb2\nq1\tA\t2\ta2\nq1\tA\t1\ta1\nq2\tB\t1\tb1\n\nq1\tB\t1\tc1\nq1\tB\t2\tc1\n",
    )
    grids = read_grids(path)
    assert grids.k == 2
    assert grids.grids == {("q1", "A"): ("a1", "a2"), ("q1", "B"): ("c1", "c1"), ("q2", "B"): ("b1", "b2")}
    assert list(grids.grids) == sorted(grids.grids)
    assert grids.prompts == ["q1", "q2"] and grids.systems == ["A", "B"]
    assert grids.images() == ["a1", "a2", "b1", "b2", "c1"]


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        ("q\tA\t1\ta\nq\tA\t1\tb\n", 2, "given twice"),
        ("q\tA\t1\ta\nq\tA\t3\tb\n", 2, "no image at position 2"),
        ("q\tA\t1\ta\nq\tA\tx\tb\n", 2, "must be an integer"),
        ("q\tA\t1\ta\nq\tA\t1.5\tb\n", 2, "must be an integer"),
        ("q\tA\t0\ta\n", 1, "must be >= 1"),
        ("q\tA\t1\ta\nq\tA\t2\tb\nr\tA\t1\tc\n", 3, "every grid of a file has the same size"),
        ("q\tA\t1\n", 1, "expected 4 tab-separated columns"),
        ("q\t\t1\ta\n", 1, "column 2 is empty"),
    ],
)
def test_bad_grids_are_file_line_errors(tmp_path, text, line, words):
    path = write(tmp_path, "grids.tsv", text)
    with pytest.raises(InputError) as err:
        read_grids(path)
    assert err.value.line == line and words in str(err.value) and str(path) in str(err.value)


def test_an_empty_grids_file_is_an_error(tmp_path):
    with pytest.raises(InputError, match="no grids"):
        read_grids(write(tmp_path, "g.tsv", "# only a comment\n"))


def test_images_resolve_relative_paths_and_keep_urls(tmp_path):
    (tmp_path / "sub").mkdir()
    path = write(
        tmp_path / "sub",
        "images.tsv",
        "image\tpath\na\tpics/a.png\nb\thttps://x.org/b.png\nc\tdata:image/png;base64,AA\n",
    )
    images = read_images(path)
    assert images["a"] == str((tmp_path / "sub" / "pics" / "a.png").resolve())
    assert images["b"] == "https://x.org/b.png" and images["c"].startswith("data:")
    with pytest.raises(InputError) as err:
        read_images(write(tmp_path, "i.tsv", "a\tx.png\na\ty.png\n"))
    assert err.value.line == 2


def save(tmp_path, name, matrix, ids):
    np.save(tmp_path / f"{name}.npy", matrix)
    (tmp_path / f"{name}.ids").write_text("".join(f"{i}\n" for i in ids), encoding="utf-8")
    return tmp_path / f"{name}.npy"


def test_embeddings_are_memory_mapped_with_their_ids(tmp_path):
    path = save(tmp_path, "emb", np.eye(3, dtype=np.float32), ["a", "b", "c"])
    ids, matrix = read_embeddings(path)
    assert ids == ["a", "b", "c"] and isinstance(matrix, np.memmap) and matrix.shape == (3, 3)


@pytest.mark.parametrize(
    ("matrix", "ids", "words"),
    [
        (np.zeros((3,)), ["a", "b", "c"], "n × d matrix"),
        (np.zeros((2, 2)), ["a", "b", "c"], "3 ids for the 2 rows"),
        (np.array([[1.0, np.nan], [0.0, 1.0]]), ["a", "b"], "row 1 (id 'a') holds NaN"),
        (np.array([[1.0, 0.0], [np.inf, 1.0]]), ["a", "b"], "row 2 (id 'b')"),
        (np.zeros((2, 2), dtype=np.int64), ["a", "b"], "float vectors"),
        (np.zeros((2, 2)), ["a", "a"], "given twice"),
    ],
)
def test_bad_embeddings_are_errors(tmp_path, matrix, ids, words):
    path = save(tmp_path, "emb", matrix, ids)
    with pytest.raises(InputError) as err:
        read_embeddings(path)
    assert words in str(err.value)


def test_missing_ids_file_and_unreadable_npy(tmp_path):
    np.save(tmp_path / "x.npy", np.zeros((1, 2)))
    with pytest.raises(InputError, match="ids file not found"):
        read_embeddings(tmp_path / "x.npy")
    (tmp_path / "y.npy").write_bytes(b"not an array")
    (tmp_path / "y.ids").write_text("a\n")
    with pytest.raises(InputError, match="cannot read embeddings"):
        read_embeddings(tmp_path / "y.npy")


def test_targets_salience_and_target_vectors(tmp_path):
    targets = read_targets(write(tmp_path, "t.tsv", "q2\tx\nq1\ty\nq1\tz\n"))
    assert targets == {"q1": ("y", "z"), "q2": ("x",)}
    with pytest.raises(InputError) as err:
        read_targets(write(tmp_path, "t2.tsv", "q\tx\nq\tx\n"))
    assert err.value.line == 2
    assert read_salience(write(tmp_path, "s.tsv", "a\t0.5\nb\t0\n")) == {"a": 0.5, "b": 0.0}
    for bad in ("a\t-1\n", "a\tnan\n", "a\tlots\n"):
        with pytest.raises(InputError) as err:
            read_salience(write(tmp_path, "s2.tsv", bad))
        assert err.value.line == 1
    vectors = read_target_embeddings(save(tmp_path, "tv", np.eye(3), ["q1", "q2", "q1"]))
    assert vectors["q1"].shape == (2, 3) and vectors["q2"].shape == (1, 3)


def test_preferences(tmp_path):
    prefs = read_preferences(
        write(tmp_path, "p.tsv", "prompt\tx\ty\tpref\nq2\tA\tB\t-2\nq1\tA\tB\t+1\tcoco\n")
    )
    assert [(p.prompt, p.pref, p.prompt_set) for p in prefs] == [("q2", -2, "all"), ("q1", 1, "coco")]
    for bad, words in [
        ("q\tA\tB\t3\n", "-2..2"),
        ("q\tA\tB\t1.0\n", "integer"),
        ("q\tA\tA\t0\n", "with itself"),
        ("q\tA\tB\t0\nq\tB\tA\t1\n", "given twice"),
    ]:
        with pytest.raises(InputError, match=words):
            read_preferences(write(tmp_path, "p2.tsv", bad))
