"""Expected relevance from log-probabilities (`reljudge.judges.expected`), end to end against the
mock server with scripted log-probabilities: exact expected grades, the mass outside the scale,
the label position taken from the model's own answer, and a provider without log-probabilities."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from typer.testing import CliRunner

import _cli
from reljudge.cli import app
from reljudge.io.judgments import read_judgments
from reljudge.judges.expected import label_distribution, one_token_scale
from reljudge.judges.registry import get_judge
from reljudge.judges.scoring import judgments_to_scores, score_sets
from reljudge.testing import AutoResponder, MockLLMServer, responders
from reljudge.testing.responders import scripted_logprobs

MODEL = "openai/mock-model"


@pytest.fixture(scope="module")
def server():
    with MockLLMServer() as srv:
        yield srv


def run(srv: MockLLMServer, out: Path, *args: str) -> tuple[int, str]:
    argv = ["run", "--model", MODEL, "--base-url", srv.openai_url, "--output", str(out), "--no-cache", *args]
    ran = _cli.judge(*argv, env={"OPENAI_API_KEY": "sk-test"})
    return ran.returncode, ran.output


#: a known distribution per answer: 0.5 / 0.25 / 0.125 / 0.0625 over 3 / 2 / 1 / 0, and 0.0625
#: on a word off the scale
UMBRELA_DIST = {"3": 0.5, "2": 0.25, "1": 0.125, "0": 0.0625, "maybe": 0.0625}


def test_umbrela_expected_exact_and_outside_mass(server, tmp_path):
    server.responder = responders.label_logprobs(AutoResponder(), lambda req, text: UMBRELA_DIST)
    server.reset()
    code, output = run(
        server,
        tmp_path / "r",
        "--method",
        "umbrela",
        "--dataset",
        "dl19-sample",
        "--limit",
        "6",
        "--scores",
        "expected",
    )
    assert code == 0, output
    assert "expected relevance: 6 answers with a grade distribution (score set umbrela-expected)" in output
    bodies = [r.body for r in server.requests]
    assert all(b.get("logprobs") is True and b.get("top_logprobs") == 20 for b in bodies)
    records = read_judgments(tmp_path / "r")
    valid = 0.5 + 0.25 + 0.125 + 0.0625
    want = (3 * 0.5 + 2 * 0.25 + 1 * 0.125) / valid
    for r in records:
        info = r.extra["expected"]
        assert abs(info["expected"] - want) < 1e-9
        assert abs(info["outside"] - 0.0625) < 1e-9
        assert abs(info["p"]["3"] - 0.5 / valid) < 1e-9
        assert abs(sum(info["p"].values()) - 1) < 1e-9
        assert info["scale"] == [0, 1, 2, 3]
        # the label token is the model's own grade after the marker, not a digit of the prompt
        assert r.raw is not None and r.raw.rstrip().endswith(info["token"].strip())
    sets = score_sets(records)
    assert set(sets) == {"umbrela", "umbrela-expected"}
    expected = sets["umbrela-expected"]
    assert all(abs(v - want) < 1e-9 for d in expected.scores.values() for v in d.values())
    assert expected.details["scale"] == [0, 3]
    again = judgments_to_scores(records, "umbrela-expected")
    assert again.scores == expected.scores


def test_binary_yes_no_expected(server, tmp_path):
    dist = {"Yes": 0.7, "No": 0.2, "Maybe": 0.1}
    server.responder = responders.label_logprobs(lambda req: "Yes", lambda req, text: dist)
    server.reset()
    code, output = run(
        server,
        tmp_path / "b",
        "--method",
        "binary",
        "-o",
        "prompt=binary/faggioli-yesno",
        "--dataset",
        "dl19-sample",
        "--limit",
        "3",
        "--scores",
        "expected",
    )
    assert code == 0, output
    for r in read_judgments(tmp_path / "b"):
        assert r.label == 1
        assert abs(r.extra["expected"]["expected"] - 0.7 / 0.9) < 1e-9
        assert abs(r.extra["expected"]["outside"] - 0.1) < 1e-9


def test_no_logprobs_gives_argmax_labels_and_a_clear_message(server, tmp_path):
    server.responder = responders.no_logprobs()
    server.reset()
    code, output = run(
        server,
        tmp_path / "n",
        "--method",
        "umbrela",
        "--dataset",
        "dl19-sample",
        "--limit",
        "4",
        "--scores",
        "expected",
    )
    assert code == 0, output
    assert "the provider returned no log-probabilities (4 answers)" in output
    assert "no umbrela-expected score set" in output
    records = read_judgments(tmp_path / "n")
    assert all(r.status == "ok" and r.label is not None and "expected" not in r.extra for r in records)
    assert set(score_sets(records)) == {"umbrela"}
    # the qrels are the parsed labels
    qrels = (tmp_path / "n" / "qrels.txt").read_text().split("\n")
    assert len([q for q in qrels if q]) == 4


def test_label_position_is_the_parsed_label_not_an_earlier_digit():
    from reljudge.prompts import get_prompt

    template = get_prompt("umbrela/bing-zeroshot")
    parse = template.output.parse
    text = "The passage scores 3 on depth.\n##final score: 1"
    dist = {"0": 0.1, "1": 0.6, "2": 0.2, "3": 0.1}
    logprobs = scripted_logprobs(text, dist)  # puts the distribution at the last grade token
    # an adversarial server puts a different distribution on the earlier "3" too
    for item in logprobs:
        if item["token"].strip() == "3":
            item["top_logprobs"] = [{"token": " 3", "logprob": 0.0}]

    def read(t):
        parsed = parse(t)
        return parsed.label if parsed.status == "ok" else None

    found = label_distribution(text, logprobs, 1, (0, 1, 2, 3), read)
    assert found["token"].strip() == "1"
    assert abs(found["expected"] - (0.6 + 0.4 + 0.3)) < 1e-9
    # tokens that do not spell the answer: no distribution, never a guess
    bad = [{"token": "##final score: 2", "logprob": 0.0, "top_logprobs": []}]
    assert "unavailable" in label_distribution(text, bad, 1, (0, 1, 2, 3), read)
    # hostile numbers are clamped: a logprob > 0 is probability 1, NaN is 0
    odd = scripted_logprobs("1", {"1": 1.0})
    odd[0]["top_logprobs"] = [{"token": "1", "logprob": 5.0}, {"token": "0", "logprob": float("nan")}]
    got = label_distribution("1", odd, 1, (0, 1), read)
    assert got["expected"] == 1.0 and got["outside"] == 0.0


def test_one_token_scales_are_declared_by_the_judges():
    assert get_judge("binary").label_scale == (0, 1)
    assert get_judge("umbrela").label_scale == (0, 1, 2, 3)
    assert get_judge("custom", user="{query} {document}", output="graded:0-10").label_scale is None
    assert get_judge("custom", user="{query} {document}", output="graded:1-5").label_scale == (1, 2, 3, 4, 5)
    assert get_judge("exam").label_scale is None
    assert one_token_scale(
        get_judge("custom", user="{query} {documentA} {documentB}", output="pairwise").output
    ) == (1, 2)


def test_evaluate_threshold_on_the_judges_own_scale(server, tmp_path):
    server.responder = responders.label_logprobs(AutoResponder(), lambda req, text: UMBRELA_DIST)
    server.reset()
    code, output = run(
        server,
        tmp_path / "e",
        "--method",
        "umbrela",
        "--dataset",
        "dl19-sample",
        "--limit",
        "20",
        "--scores",
        "expected",
    )
    assert code == 0, output

    def kappas(*extra: str) -> dict:
        out = tmp_path / "ev"
        result = CliRunner().invoke(
            app,
            [
                "evaluate",
                "--dataset",
                "dl19-sample",
                "--judgments",
                str(tmp_path / "e"),
                "--out",
                str(out),
                *extra,
            ],
        )
        assert result.exit_code == 0, result.output
        report = json.loads((out / "evaluation.json").read_text())
        return {s["name"]: s["kappa"] for s in report["sets"]}, result.output

    found, printed = kappas()
    # expected grades on the 0-3 scale are cut where they round to a relevant grade (>= 1.5)
    assert found["e:umbrela-expected"]["judge_threshold"] == ">= 1.5 (judge scale 0-3)"
    assert ">= 1.5 (judge scale 0-3)" in printed
    found, _ = kappas("--judge-threshold", "2.5")
    assert found["e:umbrela-expected"]["judge_threshold"] == ">= 2.5"
    assert not math.isnan(found["e:umbrela-expected"]["binary"])
