"""Pieces shared by ``judge evaluate``, ``judge fd`` and the sweep analysis: the pairwise
classifier, the measures of many runs, and the JSON/CSV table helpers."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from reljudge.errors import InputError
from reljudge.io.tables import csv_text, json_ready
from reljudge.metrics.alignment import classify_preferences, preference_alignment
from reljudge.metrics.measures import per_topic_measure, system_measures
from reljudge.sweep.analysis import pairwise_outcomes, system_scores
from reljudge.sweep.labels import CellLabels, pair_key

QRELS = {"q": {"best": 3, "ok": 1, "bad": 0, "bad2": 0}}
PREFS = [
    ("q", "best", "bad", 1),  # BvU agree
    ("q", "bad", "ok", 1),  # AvU disagree
    ("q", "ok", "best", 0),  # BvA tie
    ("q", "bad", "bad2", 2),  # same category: skipped
    ("q", "best", "unjudged", 1),  # missing
]


def test_one_classifier_for_evaluate_and_sweep() -> None:
    found = list(classify_preferences(QRELS, PREFS))
    assert found == [
        ("q", "best", "bad", "BvU", "agree"),
        ("q", "bad", "ok", "AvU", "disagree"),
        ("q", "ok", "best", "BvA", "tie"),
        ("q", "best", "unjudged", None, None),
    ]
    result = preference_alignment(QRELS, PREFS)
    assert (result.counts["BvU"].agree, result.counts["AvU"].disagree, result.counts["BvA"].tie) == (1, 1, 1)
    assert result.missing == 1
    cell = CellLabels(dataset="d", model="m", task="pairwise", prompt="p", group="g")
    pairwise_outcomes(cell, QRELS, PREFS)
    assert cell.outcomes == {
        pair_key("q", "best", "bad"): "agree",
        pair_key("q", "bad", "ok"): "disagree",
        pair_key("q", "ok", "best"): "tie",
    }
    assert sorted(cell.comparisons.values()) == ["AvU", "BvA", "BvU"]
    with pytest.raises(ValueError, match="0, 1 or 2"):
        list(classify_preferences(QRELS, [("q", "best", "bad", 3)]))


def test_system_measures_one_policy_for_all_callers() -> None:
    qrels = {"q1": {"a": 1, "b": 0}, "q2": {"a": 0, "b": 1.0}, "empty": {}}
    runs = {
        "r1": {"q1": {"a": 2.0, "b": 1.0}, "q2": {"a": 2.0, "b": 1.0}, "other": {"a": 1.0}},
        "r2": {"q1": {"a": np.float32(1.0), "b": 2}},  # numpy and int scores are fine
        "none": {"other": {"a": 1.0}},
    }
    values = system_measures(qrels, runs, "P@1")
    assert values == {"r1": {"q1": 1.0, "q2": 0.0}, "r2": {"q1": 0.0}, "none": {}}
    assert per_topic_measure(qrels, runs["r1"], "P@1") == values["r1"]
    means = system_scores(qrels, runs, "P@1")
    assert means["r1"] == 0.5 and means["r2"] == 0.0 and math.isnan(means["none"])
    # a fractional grade is refused everywhere, never rounded or truncated behind the caller's back
    for call in (system_measures, system_scores):
        with pytest.raises(InputError, match="not an integer"):
            call({"q1": {"a": 0.5}}, runs, "P@1")


def test_json_ready_and_csv_text() -> None:
    data = {1: (np.float64(math.nan), np.int64(3), math.inf), "a": [np.arange(2)], "b": None}
    assert json.dumps(json_ready(data)) == '{"1": [null, 3, null], "a": [[0, 1]], "b": null}'
    assert csv_text([]) == ""
    assert csv_text([{"x": 1.5, "y": math.nan}, {"z": "t", "x": -math.inf}]) == "x,y,z\n1.5,,\n,,t\n"
