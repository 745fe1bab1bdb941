"""Qrels derived record by record at the end of a run (`StreamedLabels`, `derive_streamed`) are
the qrels the list-based scorer (`label_scores`, `derive_qrels`) gives on the same records."""

from __future__ import annotations

import random

import pytest
from typer.testing import CliRunner

from reljudge.aggregation.qrels import label_scores
from reljudge.aggregation.streamed import NotPointwise, StreamedLabels
from reljudge.cli import app
from reljudge.io.judgments import LabelView, read_judgments
from reljudge.io.trec import read_qrels
from reljudge.judges.registry import get_judge
from reljudge.run.derive import derive_qrels, streamed_labels
from reljudge.testing import AutoResponder, MockLLMServer, MockReply


def view(qid: str, docid: str, label: int | None, status: str = "ok", method: str = "binary") -> LabelView:
    return LabelView(qid, docid, None, None, method, label if status == "ok" else None, status)


def random_records(seed: int) -> tuple[dict[str, list[str]], list[LabelView]]:
    """A pool of 4 topics and records over it and beyond it: failures, retried failures, exact
    repeats, documents outside the pool, a topic outside the pool."""
    rng = random.Random(seed)
    pool = {f"q{t}": [f"d{t}-{k}" for k in rng.sample(range(40), 25)] for t in range(4)}
    labels = {(q, d): rng.randint(0, 3) for q, docs in pool.items() for d in docs}
    for k in range(5):
        labels[("q1", f"extra{k}")] = rng.randint(0, 3)  # judged earlier with a larger limit
        labels[("q9", f"x{k}")] = rng.randint(0, 3)  # a topic no longer pooled
    records = []
    for (q, d), label in labels.items():
        for _ in range(rng.choice([1, 1, 1, 2, 3])):
            roll = rng.random()
            if roll < 0.2:
                records.append(view(q, d, None, rng.choice(["unparsed", "api_error"])))
            elif roll < 0.9:
                records.append(view(q, d, label))
    rng.shuffle(records)
    return pool, records


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("on_failure", ["exclude", "zero"])
def test_streamed_labels_equal_label_scores(seed, on_failure):
    pool, records = random_records(seed)
    expected = label_scores(records, on_failure=on_failure)
    streamed = StreamedLabels(pool, on_failure=on_failure, methods=["binary"])
    for r in records:
        streamed.add(r)
    got = streamed.scores()
    assert got.scores == expected.scores
    a, b = got.exclusions, expected.exclusions
    assert (a.failed, a.zeroed, a.superseded, a.duplicates) == (
        b.failed,
        b.zeroed,
        b.superseded,
        b.duplicates,
    )
    assert sorted(a.failed_keys) == sorted(b.failed_keys)
    # the pool's topics in the pool's order, then the others; inside a pooled topic the pool's order
    order = list(got.scores)
    assert order[: len([q for q in pool if q in got.scores])] == [q for q in pool if q in got.scores]
    assert [d for d in got.scores["q0"]] == [d for d in pool["q0"] if d in got.scores["q0"]]


def test_conflicts_and_shapes_are_reported_like_label_scores():
    records = [view("q0", "d0", 1), view("q0", "d0", 2)]
    with pytest.raises(ValueError, match="conflicting"):
        label_scores(records)
    streamed = StreamedLabels({"q0": ["d0"]})
    streamed.add(records[0])
    with pytest.raises(ValueError, match="conflicting"):
        streamed.add(records[1])
    with pytest.raises(NotPointwise):
        StreamedLabels({}).add(LabelView("q0", "d0", "d1", None, "pairwise", 1, "ok"))
    mixed = StreamedLabels({})
    mixed.add(view("q0", "d0", 1, method="a"))
    with pytest.raises(NotPointwise):
        mixed.add(view("q0", "d1", 1, method="b"))
    ignored = StreamedLabels({}, methods=["binary"])
    ignored.add(LabelView("q0", None, None, None, "exam-question", None, "ok"))  # not a label method
    assert ignored.scores().scores == {}


def test_only_pointwise_shape_scored_judges_stream():
    assert streamed_labels(get_judge("binary"), {}) is not None
    assert streamed_labels(get_judge("umbrela"), {}) is not None
    for method in ("pairwise", "exam", "nuggets"):
        assert streamed_labels(get_judge(method), {}) is None


@pytest.mark.slow
def test_run_qrels_equal_the_list_based_derivation(tmp_path):
    """A run with failures, resumed with a larger limit and --retry-failed (records replaced by
    later ones): its qrels.txt is what `derive_qrels` gives on the latest records."""
    auto = AutoResponder()
    broken = {"on": True}

    def flaky(req):
        if broken["on"] and req.index % 4 == 0:
            return MockReply(status=500, error="mock outage")
        return auto(req)

    out = tmp_path / "run"
    common = ["run", "--model", "openai/mock-model", "--output", str(out), "--no-cache", "--method", "binary"]
    common += ["--dataset", "dl19-sample", "--max-attempts", "1", "--max-failure-rate", "1"]
    with MockLLMServer() as srv:
        srv.responder = flaky
        env = {"OPENAI_API_KEY": "sk-test-not-a-key"}
        for extra in (["--limit", "30"], ["--limit", "60", "--retry-failed"]):
            result = CliRunner().invoke(app, [*common, "--base-url", srv.openai_url, *extra], env=env)
            assert result.exit_code == 0, result.output
            broken["on"] = False
    records = read_judgments(out / "judgments.jsonl")
    assert len(records) > 60  # some keys judged twice: the failures retried
    latest = {r.key: r for r in records}  # the latest record of each key
    expected, _ = derive_qrels(get_judge("binary"), list(latest.values()), "round")
    written = read_qrels(out / "qrels.txt")
    assert written == expected
    assert sum(len(d) for d in written.values()) == sum(r.ok for r in latest.values())
