"""Prompt registry, rendering rules, user-defined prompts and the `judge prompts` commands."""

from __future__ import annotations

import json

import pytest

from _cli import judge
from reljudge.errors import InputError
from reljudge.prompts import OutputSpec, PromptError, PromptTemplate, get_prompt, list_prompts


def test_registry_lists_builtins_with_provenance():
    templates = list_prompts()
    assert [t.id for t in templates] == sorted(t.id for t in templates)
    for t in templates:
        assert t.builtin and t.version and t.licence
        assert t.source.get("repo") and t.source.get("file") and t.source.get("commit")
        assert len(t.sha256) == 64
        assert t.messages[-1]["role"] == "user"


def test_output_contracts_of_builtins():
    assert get_prompt("umbrela/bing-zeroshot").output == OutputSpec(
        "graded", range=(0, 3), marker="##final score:"
    )
    assert get_prompt("exam/self-rating").output == OutputSpec("graded", range=(0, 5))
    assert get_prompt("binary/faggioli-yesno").output.style == "yesno"
    assert get_prompt("exam/answerability").output.style == "answerability"
    assert get_prompt("nuggets/assign").output.vocabulary == ("support", "partial_support", "not_support")
    assert get_prompt("nuggets/assign-2grade").output.vocabulary == ("support", "not_support")
    assert get_prompt("nuggets/score").output.vocabulary == ("vital", "okay")
    assert get_prompt("exam/question-generation").output.type == "questions"
    assert get_prompt("nuggets/create").output.type == "nuggets"


def test_render_missing_variable_is_a_clear_error():
    tpl = get_prompt("umbrela/bing-zeroshot")
    with pytest.raises(PromptError, match=r"missing value for document \(placeholder \{passage\}\)"):
        tpl.render(query="q")
    assert isinstance(PromptError("x"), InputError)


def test_render_accepts_roles_placeholder_names_and_passage_alias():
    tpl = get_prompt("umbrela/bing-zeroshot")
    by_role = tpl.render(query="q", document="d")
    assert by_role == tpl.render(query="q", passage="d")
    clarke = get_prompt("pairwise/clarke")
    assert clarke.render(question="q", passage_a="a", passage_b="b") == clarke.render(
        query="q", documentA="a", documentB="b"
    )


def test_render_is_single_pass_and_leaves_other_braces():
    tpl = get_prompt("binary/trec-assessor")
    user = tpl.render(query="{document}", document='{"a": 1} {query}')[-1]["content"]
    assert 'Query:{document}\nPassage:{"a": 1} {query}\n' in user


def test_render_does_not_modify_template():
    tpl = get_prompt("nuggets/score")
    before = tpl.sha256
    tpl.render(query="q", nuggets=["a"], num_nuggets=1)
    assert tpl.sha256 == before and "{num_nuggets}" in tpl.messages[-1]["content"]


def test_nuggets_render_as_python_list_repr():
    user = get_prompt("nuggets/score").render(query="q", nuggets=["a b", "c"], num_nuggets=2)[-1]["content"]
    assert "Nugget List: ['a b', 'c']" in user and "label each of the 2 nuggets" in user


def test_custom_prompt_from_messages():
    tpl = PromptTemplate.from_messages(
        "my/graded",
        "Be strict.",
        'Query: {query}\nPassage: {document}\nAnswer as JSON {"score": int}.',
        output="graded:0-3",
    )
    assert tpl.variables == {"query": "query", "document": "document"}
    msgs = tpl.render(query="q", document="d")
    assert msgs == [
        {"role": "system", "content": "Be strict."},
        {"role": "user", "content": 'Query: q\nPassage: d\nAnswer as JSON {"score": int}.'},
    ]
    assert tpl.output.parse('{"score": 2}').label == 2


def test_custom_pairwise_needs_both_documents():
    with pytest.raises(PromptError, match=r"needs the placeholder \{documentB\}"):
        PromptTemplate.from_messages("p", None, "{query} {documentA}", output="pairwise")
    ok = PromptTemplate.from_messages("p", None, "{query} {documentA} {documentB}", output="pairwise")
    assert ok.output.type == "pairwise"


def test_custom_prompt_rejects_unknown_placeholder_unless_allowed():
    with pytest.raises(PromptError, match=r"unknown placeholder\(s\) \{qeury\}"):
        PromptTemplate.from_messages("c", None, "{qeury} {query} {document}", output="binary")
    tpl = PromptTemplate.from_messages(
        "c", None, "{qeury} {query} {document}", output="binary", allow_unknown_placeholders=True
    )
    assert tpl.render(query="q", document="d")[-1]["content"] == "{qeury} q d"


def test_custom_binary_needs_document():
    with pytest.raises(PromptError, match=r"needs the placeholder \{document\}"):
        PromptTemplate.from_messages("c", None, "Query: {query}", output="binary:yesno")


@pytest.mark.parametrize(
    "short, expected",
    [
        ("binary", OutputSpec("binary", style="digit")),
        ("binary:yesno", OutputSpec("binary", style="yesno")),
        ("graded:0-5", OutputSpec("graded", range=(0, 5))),
        ("pairwise", OutputSpec("pairwise")),
        ("labels:vital,okay", OutputSpec("labels", vocabulary=("vital", "okay"))),
        ("questions", OutputSpec("questions")),
    ],
)
def test_output_short_forms(short, expected):
    assert OutputSpec.coerce(short) == expected


@pytest.mark.parametrize(
    "bad", ["graded:3-0", "graded:x", "binary:maybe", "labels", "ranking", "pairwise:1-2"]
)
def test_bad_output_specs(bad):
    with pytest.raises(PromptError):
        OutputSpec.coerce(bad)


def test_custom_prompt_from_yaml_file(tmp_path):
    path = tmp_path / "mine.yaml"
    path.write_text(
        'id: mine/yesno\noutput: binary:yesno\nsystem: You judge.\nuser: |\n  Q: {query}\n  P: {passage}\n  {"answer": "Yes"}\n',
        encoding="utf-8",
    )
    tpl = get_prompt(str(path))
    assert tpl.id == "mine/yesno" and not tpl.builtin
    assert tpl.render(query="q", document="d")[-1]["content"] == 'Q: q\nP: d\n{"answer": "Yes"}\n'


def test_yaml_errors_name_the_file(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("id: x\nuser: [unclosed\n", encoding="utf-8")
    with pytest.raises(InputError) as err:
        PromptTemplate.from_file(bad)
    assert str(bad) in str(err.value)
    missing = tmp_path / "nooutput.yaml"
    missing.write_text("user: '{query} {document}'\n", encoding="utf-8")
    with pytest.raises(InputError, match="needs an 'output'"):
        PromptTemplate.from_file(missing)
    unknown = tmp_path / "extra.yaml"
    unknown.write_text("output: binary\nuser: '{query} {document}'\ntemprature: 0\n", encoding="utf-8")
    with pytest.raises(InputError, match="unknown field"):
        PromptTemplate.from_file(unknown)


def test_unknown_prompt_suggests_close_ids():
    with pytest.raises(PromptError, match="did you mean umbrela/bing-zeroshot"):
        get_prompt("umbrela/bing-zeroshoot")


def test_output_spec_dispatches_to_parsers():
    assert get_prompt("umbrela/bing-zeroshot").output.parse("##final score: 2").label == 2
    assert get_prompt("binary/faggioli-yesno").output.parse("No").label == 0
    assert get_prompt("pairwise/clarke").output.parse("Passage 2").label == 2
    assert get_prompt("exam/self-rating").output.parse("4").label == 4
    assert get_prompt("exam/answerability").output.parse("unanswerable").label == 0
    assert get_prompt("nuggets/assign").output.parse('["support", "not_support"]', expected_len=2).items == (
        "support",
        "not_support",
    )
    assert get_prompt("nuggets/create").output.parse('["a", "b"]').items == ("a", "b")


# --- CLI ---------------------------------------------------------------------------------------


def test_cli_list_shows_every_prompt():
    res = judge("prompts", "list")
    assert res.returncode == 0, res.output
    lines = {line.split()[0]: line for line in res.stdout.splitlines()[1:]}
    assert set(lines) == {t.id for t in list_prompts()}
    assert lines["umbrela/bing-zeroshot"].split()[1:3] == ["umbrela", "castorini/umbrela"]
    assert lines["nuggets/assign"].split()[1:] == ["nuggets", "castorini/nuggetizer", "Apache-2.0"]
    # what a user needs only: no file paths inside the project or upstream, no hashes
    assert ".md" not in res.stdout and ".yaml" not in res.stdout and "shared/" not in res.stdout
    data = json.loads(judge("prompts", "list", "--json").output)
    assert {d["id"] for d in data} == {t.id for t in list_prompts()}


def test_cli_show_prints_metadata_and_raw_template():
    res = judge("prompts", "show", "umbrela/bing-zeroshot")
    assert res.returncode == 0, res.output
    tpl = get_prompt("umbrela/bing-zeroshot")
    assert (
        tpl.sha256 in res.output and "Passage: {passage}" in res.output and "castorini/umbrela" in res.output
    )


def test_cli_render_with_vars_prints_exact_messages():
    res = judge(
        "prompts",
        "render",
        "pairwise/clarke",
        "--query",
        "q",
        "--var",
        "documentA=a",
        "--var",
        "documentB=b",
        "--json",
    )
    assert res.returncode == 0, res.output
    assert json.loads(res.output) == get_prompt("pairwise/clarke").render(
        query="q", documentA="a", documentB="b"
    )
    res = judge("prompts", "render", "umbrela/bing-zeroshot", "--query", "q", "--passage", "p")
    assert "Query: q\nPassage: p\n" in res.output


def test_cli_errors_exit_2():
    for args in (
        ["prompts", "render", "nuggets/score", "--query", "q"],
        ["prompts", "show", "nope/none"],
        ["prompts", "render", "binary/trec-assessor", "--var", "oops"],
    ):
        proc = judge(*args)
        assert proc.returncode == 2, (args, proc.stderr)
        assert proc.stderr.startswith("error: ")
