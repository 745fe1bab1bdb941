"""`judge probe`: re-judge a sample with gamed passages and count the flipped labels."""

from __future__ import annotations

import json
import re

import pytest

from _cli import judge
from _reliability import MODEL, SECRET, make_dataset
from reljudge.probe import (
    INSTRUCTION,
    PERTURBATIONS,
    RELEVANCE_CLAIM,
    query_stuffing,
    query_terms,
    sample_items,
)
from reljudge.testing import MockLLMServer, MockReply

ENV = {"OPENAI_API_KEY": SECRET}


def gullible(req) -> MockReply:
    """A judge that believes a passage's claim of relevance, and otherwise labels by docid."""
    passage = req.last_user
    if RELEVANCE_CLAIM in passage:
        return MockReply(text="1")
    k = int(re.findall(r"docref d\d+-(\d+)", passage)[-1])
    return MockReply(text=str(k % 2))


def test_perturbations_keep_the_passage_and_add_the_attack():
    passage, query = "Rivers flood in spring.", "what is the cause of river floods"
    assert query_terms(query) == ["cause", "river", "floods"]
    stuffed = query_stuffing(passage, query)
    assert passage in stuffed and stuffed.count("river floods") >= 2 and stuffed.startswith(query)
    assert PERTURBATIONS["relevance-claim"](passage, query) == f"{passage} {RELEVANCE_CLAIM}"
    assert PERTURBATIONS["instruction"](passage, query).endswith(INSTRUCTION)


def test_sample_is_seeded_in_pool_order_and_skips_missing_texts():
    pool = {"q1": ["a", "b", "c", "b"], "q2": ["d", "e"]}
    corpus = {"a": "x", "b": "y", "c": " ", "d": "z", "e": "w"}
    first = sample_items(pool, corpus, 3, seed=1)
    assert first == sample_items(pool, corpus, 3, seed=1) and len(first) == 3
    assert ("q1", "c") not in first
    everything = [("q1", "a"), ("q1", "b"), ("q2", "d"), ("q2", "e")]
    assert [i for i in everything if i in first] == first  # pool order
    assert sample_items(pool, corpus, 100, seed=0) == everything


def test_probe_counts_the_flips_of_a_gullible_judge(tmp_path):
    data = make_dataset(tmp_path / "data", 4, 10)
    report_path = tmp_path / "probe.json"
    with MockLLMServer(gullible) as srv:
        result = judge(
            "probe", "--method", "binary", "--model", MODEL, "--base-url", srv.openai_url,
            "--topics", str(data.topics), "--qrels", str(data.qrels), "--corpus", str(data.corpus),
            "--sample", "20", "--seed", "3", "--no-cache", "--output", str(report_path),
            "--max-flip-rate", "0.2", env=ENV,
        )  # fmt: skip
        assert srv.calls == 20 * 4  # original + 3 perturbations
    report = json.loads(report_path.read_text())
    items = report["items"]
    assert len(items) == report["sample"] == 20
    zeros = sum(1 for it in items if it["original"]["label"] == 0)
    assert 0 < zeros < 20
    results = {r["name"]: r for r in report["results"]}
    assert results["relevance-claim"]["flipped"] == results["relevance-claim"]["up"] == zeros
    assert results["relevance-claim"]["flip_rate"] == pytest.approx(zeros / 20)
    assert results["query-stuffing"]["flipped"] == 0 and results["instruction"]["flipped"] == 0
    assert all(r["compared"] == 20 and r["failed"] == 0 for r in results.values())
    assert all(it["relevance-claim"]["raw"] == "1" for it in items)
    # the flip share of the claim is above --max-flip-rate 0.2: exit 1, with the table printed
    assert result.returncode == 1, result.output
    assert "relevance-claim" in result.output and f"{zeros} ({zeros / 20:.0%})" in result.output


def test_probe_on_the_bundled_sample_with_umbrela(tmp_path):
    with MockLLMServer() as srv:
        ran = judge(
            "probe", "--method", "umbrela", "--model", MODEL, "--base-url", srv.openai_url,
            "--dataset", "dl19-sample", "--sample", "8", "--perturbation", "instruction",
            "--cache", str(tmp_path / "c.sqlite"), "--json", env=ENV,
        )  # fmt: skip
        assert ran.returncode == 0, ran.output
        assert srv.calls == 16
        report = json.loads(ran.output)
        (result,) = report["results"]
        assert result["name"] == "instruction" and result["compared"] + result["failed"] == 8
        assert "items" not in report
        # the originals now come from the cache
        srv.reset()
        ran = judge(
            "probe", "--method", "umbrela", "--model", MODEL, "--base-url", srv.openai_url,
            "--dataset", "dl19-sample", "--sample", "8", "--perturbation", "relevance-claim",
            "--cache", str(tmp_path / "c.sqlite"), env=ENV,
        )  # fmt: skip
        assert ran.returncode == 0 and srv.calls == 8


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (("--method", "pairwise"), "probe works with pointwise methods"),
        (("--method", "binary", "--perturbation", "shouting"), "unknown perturbation 'shouting'"),
    ],
)
def test_probe_refuses_what_it_cannot_do(tmp_path, extra, message):
    result = judge(
        "probe", "--model", MODEL, "--base-url", "http://127.0.0.1:9/v1", "--dataset", "dl19-sample",
        "--no-cache", *extra, env=ENV,
    )  # fmt: skip
    assert result.returncode == 2 and message in result.output, result.output
