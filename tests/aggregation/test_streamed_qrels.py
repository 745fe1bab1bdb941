"""Pointwise labels gathered record by record over a job's pool (`PointwiseLabels`, what the end
of a run gives every pointwise judge) are the labels `label_scores` gives without a pool, in the
pool's order; and a run's qrels.txt is what scoring its latest records gives."""

from __future__ import annotations

import random

import pytest

from _cli import judge
from reljudge.io.judgments import BareRecord, read_judgments
from reljudge.io.qrels_formats import to_qrels
from reljudge.io.trec import read_qrels
from reljudge.judges.registry import get_judge
from reljudge.judges.scoring import judgments_to_scores
from reljudge.judges.shape_scoring import PointwiseLabels, label_scores
from reljudge.records import Judgment
from reljudge.testing import AutoResponder, MockLLMServer, MockReply


def view(qid: str, docid: str, label: int | None, status: str = "ok", method: str = "binary") -> BareRecord:
    return BareRecord(qid, docid, None, None, method, label if status == "ok" else None, status)


def random_records(seed: int) -> tuple[dict[str, list[str]], list[BareRecord]]:
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
def test_labels_over_a_pool_equal_label_scores(seed, on_failure):
    pool, records = random_records(seed)
    expected = label_scores(records, on_failure=on_failure)
    assert isinstance(expected.scores, dict)  # without a pool: a dictionary, in the records' order
    pooled = PointwiseLabels(pool, on_failure=on_failure)
    for r in records:
        pooled.add(r)
    got = pooled.score_set("binary")
    assert got.scores == expected.scores
    assert got == label_scores(iter(records), on_failure=on_failure, order=pool)
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
    assert dict(got.scores.items()) == {q: got.scores[q] for q in got.scores}
    assert len(got.scores) == len(expected.scores) and "q-none" not in got.scores


def test_label_scores_keep_the_order_of_the_records():
    records = [
        view("q2", "x", None, "api_error"),
        view("q1", "a", 1),
        view("q2", "y", 2),
        view("q2", "x", 3),  # the failure retried
        view("q3", "z", None, "unparsed"),
    ]
    result = label_scores(records, on_failure="zero")
    assert list(result.scores.items()) == [("q1", {"a": 1}), ("q2", {"y": 2, "x": 3}), ("q3", {"z": 0})]
    assert result.exclusions.failed_keys == [("q3", "z")] and result.exclusions.superseded == 1


def test_conflicts_shapes_and_mixed_methods_are_errors():
    records = [view("q0", "d0", 1), view("q0", "d0", 2)]
    for order in (None, {"q0": ["d0"]}):
        with pytest.raises(ValueError, match="conflicting"):
            label_scores(records, order=order)
    with pytest.raises(ValueError, match="not a pointwise record"):
        PointwiseLabels({}).add(BareRecord("q0", "d0", "d1", None, "pairwise", 1, "ok"))
    # every record is read before an error is raised: a mix of methods comes first
    mixed = [
        view("q0", "d0", 1, method="a"),
        view("q0", "d0", 2, method="a"),
        view("q0", "d1", 1, method="b"),
    ]
    with pytest.raises(ValueError, match="several methods mixed: a, b"):
        label_scores(mixed)


def test_every_judge_scores_a_stream_of_its_records():
    """The end of a run hands every judge one pass over its records: the shape scorer reads them as
    they come (the pool orders the documents); a judge with a scorer of its own gets a list."""
    records = [view("q1", "d2", 1, method="umbrela"), view("q1", "d1", 3, method="umbrela")]
    sets = get_judge("umbrela").score_sets(iter(records), {"order": {"q1": ["d1", "d2"]}})
    assert list(sets["umbrela"].scores.items()) == [("q1", {"d1": 3, "d2": 1})]
    grades = [
        Judgment(qid="q1", docid="d1", item_id="q1/x", method="exam", label=1),
        Judgment(qid="q1", docid="d1", item_id="q1/y", method="exam", label=0),
    ]
    exam = get_judge("exam").score_sets(iter(grades), {"order": {"q1": ["d1"]}})
    assert exam["exam-binary"].scores == {"q1": {"d1": 0.5}}


@pytest.mark.slow
def test_run_qrels_equal_the_list_based_derivation(tmp_path):
    """A run with failures, resumed with a larger limit and --retry-failed (records replaced by
    later ones): its qrels.txt is what scoring the latest records gives."""
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
            result = judge(*common, "--base-url", srv.openai_url, *extra, env=env)
            assert result.returncode == 0, result.output
            broken["on"] = False
    records = read_judgments(out / "judgments.jsonl")
    assert len(records) > 60  # some keys judged twice: the failures retried
    latest = {r.key: r for r in records}  # the latest record of each key
    expected = to_qrels(judgments_to_scores(list(latest.values()), "binary").scores)
    written = read_qrels(out / "qrels.txt")
    assert written == expected
    assert sum(len(d) for d in written.values()) == sum(r.ok for r in latest.values())


@pytest.mark.parametrize("method", ["umbrela", "exam"])
def test_a_fresh_run_scores_its_records_as_it_writes_them(tmp_path, monkeypatch, method):
    """A run that starts on an empty directory hands each record to the judge's scorer as it is
    written and reads nothing back at the end; its qrels and manifest are those that reading the
    records back gives (the same directory finished again, nothing left to judge)."""
    import json

    import reljudge.io.judgments as judgments_io
    from _cli import judge

    out = tmp_path / "run"
    args = ["run", "--model", "openai/mock-model", "--output", str(out), "--no-cache", "--method", method]
    args += ["--dataset", "dl19-sample", "--limit", "6"]
    env = {"OPENAI_API_KEY": "sk-test-not-a-key"}
    read_back = judgments_io.scan_bare_records

    def never(*a, **k):
        raise AssertionError("a fresh run read its records back")

    with MockLLMServer() as srv:
        monkeypatch.setattr(judgments_io, "scan_bare_records", never)
        first = judge(*args, "--base-url", srv.openai_url, env=env)
        assert first.returncode == 0, first.output
        fresh_qrels = (out / "qrels.txt").read_bytes()
        manifest = json.loads((out / "manifest.json").read_text())
        fresh = manifest["extra"]["qrels"], manifest["records"]
        monkeypatch.setattr(judgments_io, "scan_bare_records", read_back)
        again = judge(*args, "--base-url", srv.openai_url, env=env)
        assert again.returncode == 0, again.output
    assert fresh_qrels and (out / "qrels.txt").read_bytes() == fresh_qrels
    manifest = json.loads((out / "manifest.json").read_text())
    assert (manifest["extra"]["qrels"], manifest["records"]) == fresh and fresh[0]["pairs"] > 0
