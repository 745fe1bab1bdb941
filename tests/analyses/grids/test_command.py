"""``judge grids`` on files: the tables and figures written, the report printed, bad input a
``FILE:LINE`` error with exit 2 and nothing written."""

from __future__ import annotations

import json

import pytest

from _cli import judge
from _grids_synthetic import synthetic

pytestmark = pytest.mark.slow  # the command's imports and the bootstrap (1-3 s)


@pytest.fixture
def files(tmp_path):
    synthetic().write(tmp_path, synthetic().generate(prompts=8))
    return tmp_path


def args(**extra):
    base = ["grids", "grids.tsv", "--embeddings", "embeddings.npy", "--targets", "targets.tsv"]
    for key, value in extra.items():
        base += [f"--{key.replace('_', '-')}", value]
    return base


def test_tables_and_agreement(files):
    done = judge(
        *args(salience="salience.tsv", preferences="preferences.tsv", out="out", bootstrap="200"), cwd=files
    )
    assert done.returncode == 0, done.output
    assert "Plackett-Luce over normalised salience" in done.stdout
    assert "agreement with the human preferences" in done.stdout and "human ties" in done.stdout
    per_system = (files / "out" / "per_system.tsv").read_text().splitlines()
    assert per_system[0].split("\t") == [
        "system", "prompts", "relevance", "RBP", "RBP_delta_u", "RBP_delta", "ERR", "ERR_delta_u", "ERR_delta",
        "diversity", "FID",
    ]  # fmt: skip
    assert len(per_system) == 4
    assert len((files / "out" / "per_prompt.tsv").read_text().splitlines()) == 1 + 8 * 3
    agreement = (files / "out" / "agreement.tsv").read_text().splitlines()
    assert len(agreement) == 1 + 2 * 9
    data = json.loads((files / "out" / "grids.json").read_text())
    assert data["settings"]["trajectory"] == "salience" and data["settings"]["samples"] == 100


def test_without_salience_the_list_is_read_in_order_and_exact_works(files):
    done = judge(*args(), "--exact", "--json", cwd=files)
    assert done.returncode == 0, done.output
    data = json.loads(done.stdout)
    assert data["settings"]["trajectory"] == "row-major"
    assert data["settings"]["expectation"].startswith("exact")
    assert data["agreement"] == []


def test_target_vectors_instead_of_target_images(files):
    import numpy as np

    ids = (files / "embeddings.ids").read_text().split()
    matrix = np.load(files / "embeddings.npy")
    rows = [i for i, name in enumerate(ids) if "-target" in name]
    np.save(files / "targets.npy", matrix[rows])
    (files / "targets.ids").write_text("".join(ids[i].split("-")[0] + "\n" for i in rows))
    by_ids = judge(*args(), "--json", cwd=files)
    by_vectors = judge(
        "grids",
        "grids.tsv",
        "--embeddings",
        "embeddings.npy",
        "--target-embeddings",
        "targets.npy",
        "--json",
        cwd=files,
    )
    assert by_vectors.returncode == 0, by_vectors.output
    assert json.loads(by_vectors.stdout)["per_system"] == json.loads(by_ids.stdout)["per_system"]


def test_plots(files):
    done = judge(*args(preferences="preferences.tsv", out="out", bootstrap="50"), "--plot", cwd=files)
    assert done.returncode == 0, done.output
    assert (files / "out" / "grids_systems.png").stat().st_size > 1000
    assert (files / "out" / "grids_agreement.png").stat().st_size > 1000


def test_bad_inputs_are_file_line_errors_and_nothing_is_written(files):
    grids = files / "grids.tsv"
    lines = grids.read_text().splitlines()
    grids.write_text("\n".join([*lines, "p00\tA\t9\textra"]) + "\n")
    done = judge(*args(out="out"), cwd=files)
    assert done.returncode == 2 and done.stderr.startswith("error: grids.tsv:")
    assert "every grid of a file has the same size" in done.stderr or "no image at position" in done.stderr
    assert not (files / "out").exists()
    grids.write_text("\n".join([*lines[:-1], lines[-1].rsplit("\t", 1)[0] + "\tunknown-image"]) + "\n")
    done = judge(*args(out="out"), cwd=files)
    assert done.returncode == 2 and "has no vector in embeddings.npy" in done.stderr
    grids.write_text("\n".join(lines) + "\n")
    prefs = files / "preferences.tsv"
    prefs.write_text(prefs.read_text() + "p00\tA\tZ\t1\n")
    done = judge(*args(preferences="preferences.tsv"), cwd=files)
    assert done.returncode == 2 and done.stderr.startswith(
        f"error: preferences.tsv:{1 + 8 * 3 + 1}: no grid of system 'Z'"
    )
    done = judge(*args(), "--trajectory", "salience", cwd=files)
    assert done.returncode == 2 and "needs salience" in done.stderr
    done = judge("grids", "grids.tsv", "--targets", "targets.tsv", cwd=files)
    assert done.returncode == 2 and "--embeddings" in done.stderr
