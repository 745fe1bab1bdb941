"""Backend capabilities (`reljudge.llm.backends.capabilities`): what a backend is and can do is an
attribute of the backend, asked by the callers, never a branch on its name elsewhere; and a job
resolves its model string once."""

from __future__ import annotations

import importlib
import re
from importlib import metadata
from pathlib import Path

import pytest

from reljudge.judges.constrain import MECHANISMS, auto_mechanism
from reljudge.llm.backends import BACKENDS, DEFAULT_BACKEND, Backend, capabilities, sdk_libraries
from reljudge.llm.pricing import PriceTable, is_free, model_cost
from reljudge.llm.routing import ResolvedModel, model_string, resolve_model

SRC = Path(__file__).resolve().parents[2] / "src" / "reljudge"


@pytest.mark.parametrize("name", list(BACKENDS))
def test_each_backend_says_what_it_is(name):
    backend = capabilities(name)
    assert backend.name == name
    module, _, cls = backend.adapter.partition(":")
    adapter = getattr(importlib.import_module(module), cls)
    assert issubclass(adapter, Backend) and adapter.name == name
    assert metadata.version(backend.sdk)  # the provider library it needs is installed
    for url in (None, "http://127.0.0.1:8080/v1", "https://api.openai.com/v1"):
        mechanism = backend.constraint_mechanism(url)
        assert mechanism is None or mechanism in MECHANISMS
    assert resolve_model(f"{name}/m").capabilities is backend


def test_the_facts_the_callers_ask():
    assert [b for b in BACKENDS if capabilities(b).free] == ["ollama"]
    assert is_free("ollama") and not is_free("openai") and not is_free("import")
    assert [b for b in BACKENDS if capabilities(b).sends_batches] == ["openai", "litellm"]
    assert sdk_libraries() == ("openai", "ollama", "litellm")
    assert DEFAULT_BACKEND == "openai" and resolve_model("gpt-4o").backend == DEFAULT_BACKEND
    with pytest.raises(ValueError, match="no known constrained-output mechanism for the litellm backend"):
        auto_mechanism("litellm", None)
    with pytest.raises(ValueError, match="unknown backend 'nope'"):
        capabilities("nope")
    with pytest.raises(ValueError, match="sends no batches"):
        capabilities("ollama").batch_service("m", base_url=None, api_key=None, timeout_s=1.0, redact=str)
    capabilities("litellm").check_batch_model("openai/gpt-4o-mini")
    with pytest.raises(ValueError, match="no bounded download"):
        capabilities("litellm").check_batch_model("azure/gpt-4o")


def test_a_missing_provider_library_is_named(monkeypatch):
    """The client turns the ValueError into an `InputError` naming the package to install."""
    import sys

    from reljudge.errors import InputError
    from reljudge.llm import ClientConfig, LLMClient

    monkeypatch.delitem(sys.modules, "reljudge.llm.backends.ollama", raising=False)
    monkeypatch.setitem(sys.modules, "ollama", None)  # `import ollama` fails as if not installed
    client = LLMClient(ClientConfig(model="ollama/llama3.2", cache_path=None))
    with pytest.raises(InputError, match=r"the ollama backend needs the ollama package.*pip install ollama"):
        client.open()


def test_model_string_is_the_inverse_of_resolving():
    for named in ("gpt-4o", "ollama/llama3.2", "litellm/anthropic/claude-x", "Qwen/Qwen2.5-7B"):
        resolved = resolve_model(named)
        assert resolve_model(model_string(resolved.backend, resolved.model)) == ResolvedModel(
            resolved.backend, resolved.model, model_string(resolved.backend, resolved.model)
        )


def test_a_resolved_model_is_priced_as_its_string():
    table = PriceTable({"my-model": {"input": 1.0, "output": 2.0}})
    for named in ("gpt-4o-mini", "openai/my-model", "ollama/llama3.2", "my-model-2"):
        assert table.quote(resolve_model(named)) == table.quote(named)
        assert model_cost(resolve_model(named), 1000, 1000, table) == model_cost(named, 1000, 1000, table)


#: a comparison of something with a backend's name (``backend == "ollama"``, ``"openai" != b``)
_NAMES = "|".join(re.escape(n) for n in BACKENDS)
_BRANCH = re.compile(rf"""(==|!=|\bin)\s*\(?\s*["']({_NAMES})["']|["']({_NAMES})["']\s*(==|!=)""")


def test_no_branch_on_a_backend_name_outside_the_backends():
    """Callers ask the backend (`Capabilities`), they never compare its name."""
    found = []
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        if rel.startswith(("llm/backends/", "testing/")):  # the adapters; the mock server's wire formats
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if _BRANCH.search(line):
                found.append(f"{rel}:{n}: {line.strip()}")
    assert not found, "\n".join(found)


def test_a_job_resolves_its_model_once(tmp_path, monkeypatch):
    """From `prepare` to the client and the prices: one resolution of the model string, and the
    manifest records the provider libraries the backends need."""
    import json

    import reljudge.llm.client as client_module
    import reljudge.llm.routing as routing
    from reljudge.run import RunConfig, run_job
    from reljudge.testing import MockLLMServer

    calls: list[str] = []
    original = routing.resolve_model

    def counting(model: str) -> ResolvedModel:
        calls.append(model)
        return original(model)

    monkeypatch.setattr(routing, "resolve_model", counting)
    monkeypatch.setattr(client_module, "resolve_model", counting)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with MockLLMServer() as server:
        config = RunConfig(
            method="binary",
            model="openai/mock-model",
            base_url=server.openai_url,
            dataset="dl19-sample",
            output=tmp_path / "run",
            use_cache=False,
            progress=False,
            limit=2,
            constrain="auto",
            max_cost=5.0,
            prices=_price_file(tmp_path),
        )
        summary = run_job(config)
    assert summary.state == "finished" and summary.records == 2
    assert calls == ["openai/mock-model"]
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text(encoding="utf-8"))
    assert set(sdk_libraries()) <= set(manifest["environment"]["libraries"])


def _price_file(tmp_path: Path) -> Path:
    path = tmp_path / "prices.yaml"
    path.write_text("mock-model: {input: 1.0, output: 2.0}\n", encoding="utf-8")
    return path
