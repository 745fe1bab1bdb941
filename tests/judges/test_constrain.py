"""``judge run --constrain``: the backend's own constrained-output fields, derived from the judge's
declared output, sent to the mock server; the prompt unchanged; records say so."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import _cli
from reljudge.errors import EXIT_BAD_INPUT
from reljudge.io.judgments import read_judgments
from reljudge.judges.constrain import auto_mechanism, constraint_params
from reljudge.prompts import get_prompt
from reljudge.testing import MockLLMServer, MockReply


def run(out: Path, *args: str) -> tuple[int, str]:
    argv = ["run", "--output", str(out), "--no-cache", "--dataset", "dl19-sample", "--limit", "2", *args]
    ran = _cli.judge(*argv, env={"OPENAI_API_KEY": "sk-test"})
    return ran.returncode, ran.output


def test_fields_from_the_declared_output():
    umbrela = get_prompt("umbrela/bing-zeroshot").output
    assert constraint_params(umbrela, "grammar") == {
        "grammar": 'root ::= "##final score: 0" | "##final score: 1" | "##final score: 2" | "##final score: 3"'
    }
    assert constraint_params(get_prompt("binary/faggioli-yesno").output, "guided-choice") == {
        "guided_choice": ["Yes", "No"]
    }
    schema = constraint_params(get_prompt("binary/trec-assessor").output, "json-schema")["response_format"]
    assert schema["json_schema"]["schema"]["properties"]["label"]["enum"] == [0, 1]
    assert auto_mechanism("ollama", None) == "ollama-format"
    assert auto_mechanism("openai", None) == "json-schema"
    assert auto_mechanism("openai", "http://127.0.0.1:18080/v1") == "grammar"
    with pytest.raises(ValueError):
        constraint_params(get_prompt("exam/answerability").output, "grammar")


def test_grammar_sent_prompt_unchanged_records_marked(tmp_path):
    with MockLLMServer(lambda req: MockReply(text="##final score: 2")) as srv:
        code, output = run(
            tmp_path / "g",
            "--method",
            "umbrela",
            "--model",
            "openai/m",
            "--base-url",
            srv.openai_url,
            "--constrain",
            "auto",
        )
        assert code == 0, output
        plain = tmp_path / "p"
        code, _ = run(plain, "--method", "umbrela", "--model", "openai/m", "--base-url", srv.openai_url)
        assert code == 0
        constrained, unconstrained = srv.requests[:2], srv.requests[2:]
        assert all(r.body["grammar"].startswith('root ::= "##final score: 0"') for r in constrained)
        assert [r.messages for r in constrained] == [r.messages for r in unconstrained]
        assert all("grammar" not in r.body for r in unconstrained)
    records = read_judgments(tmp_path / "g")
    assert all(r.extra["constrained"] == "grammar" and r.label == 2 for r in records)
    assert all("constrained" not in r.extra for r in read_judgments(plain))


def test_ollama_format_and_json_answers(tmp_path):
    with MockLLMServer(lambda req: MockReply(text=json.dumps({"label": 1}))) as srv:
        code, output = run(
            tmp_path / "o",
            "--method",
            "binary",
            "--model",
            "ollama/m",
            "--base-url",
            srv.ollama_url,
            "--constrain",
            "auto",
        )
        assert code == 0, output
        assert all(r.body["format"]["properties"]["label"]["enum"] == [0, 1] for r in srv.requests)
    assert [r.label for r in read_judgments(tmp_path / "o")] == [1, 1]


def test_constrain_refused_where_it_cannot_apply(tmp_path):
    code, output = run(tmp_path / "x", "--method", "exam", "--model", "openai/m", "--constrain", "grammar")
    assert code == EXIT_BAD_INPUT and "pointwise" in output
    code, output = run(tmp_path / "y", "--method", "binary", "--model", "openai/m", "--constrain", "regex")
    assert code == EXIT_BAD_INPUT
