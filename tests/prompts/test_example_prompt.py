"""The custom-prompt example the docs document (docs/methods/custom.md): the page shows the file as it is, the file
loads, and `judge run --method custom` with it labels from the model's answers (mock server)."""

from __future__ import annotations

from pathlib import Path

from _cli import judge
from reljudge.io.judgments import read_judgments
from reljudge.prompts.template import PromptTemplate
from reljudge.testing import MockLLMServer, responders

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "prompts" / "my-prompt.yaml"


def test_the_docs_show_the_example_file_verbatim():
    readme = (ROOT / "docs" / "methods" / "custom.md").read_text()
    assert "```yaml\n" + EXAMPLE.read_text() + "```" in readme


def test_example_prompt_loads_and_judges(tmp_path):
    template = PromptTemplate.from_file(EXAMPLE)
    assert template.id == "my-lab/graded-v1"
    assert (template.output.type, template.output.range, template.output.marker) == (
        "graded",
        (0, 3),
        "Score:",
    )
    assert dict(template.variables) == {"q": "query", "p": "document"}
    out = tmp_path / "run"
    with MockLLMServer(responders.fixed("The passage answers part of it.\nScore: 2")) as srv:
        argv = ["run", "--method", "custom", "--prompt", str(EXAMPLE), "--model", "openai/mock"]
        argv += [
            "--base-url",
            srv.openai_url,
            "--dataset",
            "dl19-sample",
            "--limit",
            "5",
            "--no-cache",
            "--out",
            str(out),
        ]
        result = judge(*argv, env={"OPENAI_API_KEY": "sk-test"})
        assert result.returncode == 0, result.output
        sent = srv.requests[0].messages
    assert sent[0] == {"role": "system", "content": "You are a careful relevance assessor."}
    assert sent[1]["content"].startswith("Query: ")
    records = read_judgments(out)
    assert [(r.status, r.label) for r in records] == [("ok", 2)] * 5
