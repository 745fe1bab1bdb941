"""What each backend is and can do, known without importing its provider library.

A backend's adapter (`reljudge.llm.backends.base.Backend`) makes requests; its `Capabilities`
say everything the rest of reljudge asks about it, so that no caller branches on a backend's name:

- ``adapter`` and ``sdk``: where its adapter lives and the provider library it imports (which must
  be installed; a run's manifest records its version);
- ``free`` and ``price_provider``: whether a model no price lists costs nothing (a local server),
  and under which provider litellm's cost map lists its models (`reljudge.llm.pricing`);
- `constraint_mechanism`: its native way of constraining an answer to the labels
  (`reljudge.judges.constrain`);
- ``default_address``, ``key_variable`` and `not_found_hint`: what the hint after a fatal error
  says to check (`reljudge.llm.failfast.abort_hint`);
- ``sends_batches``, `check_batch_model` and `batch_service`: whether requests can go through a
  provider's Batch API, and its adapter (`reljudge.llm.batch`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from reljudge.llm.backends.base import normalise_base_url

__all__ = ["Capabilities", "LiteLLMCapabilities", "OllamaCapabilities", "OpenAICapabilities"]


class Capabilities:
    """A backend's facts (the defaults: a remote, priced provider with no native constraint and
    no batch service)."""

    #: the backend's name: the model-string prefix that selects it (`reljudge.llm.routing`)
    name: str = ""
    #: ``module:Class`` of its adapter, imported (with its provider library) when it is used
    adapter: str = ""
    #: the provider library (distribution) the adapter imports
    sdk: str = ""
    #: a model no price lists costs nothing: a local server (price known, 0)
    free: bool = False
    #: the provider whose keys in litellm's cost map price this backend's models (None: a bare
    #: model name, or a ``provider/`` its first segment names)
    price_provider: str | None = None
    #: where requests go when no base URL is given, as a hint names it
    default_address: str = "the provider's default address"
    #: where the API key is read from, as the hint after an authentication error names it
    key_variable: str = "the provider's key variable"
    #: whether requests can be sent through a provider's Batch API (`batch_service`)
    sends_batches: bool = False
    #: whether it sends image parts (OpenAI's ``image_url`` content parts, `reljudge.llm.images`)
    sends_images: bool = False
    #: whether its answers name the model as the provider served it, so that a mismatch with the
    #: model asked for can be refused (LiteLLM rewrites the names it reports)
    reports_served_model: bool = False
    #: what ``judge doctor`` says instead of checking the key (None: it checks `key_variable`)
    key_not_checked: str | None = None

    def model_list(self, base_url: str | None) -> tuple[str, str] | None:
        """(the URL that lists the models it serves, where its base URL came from) for ``judge
        doctor``; None when it has none to ask."""
        return None

    def served_names(self, listing: Any) -> list[str]:
        """The model names in the parsed answer of `model_list` (KeyError/TypeError when it is
        not a model list)."""
        raise KeyError("no model list")

    def list_not_found_hint(self) -> str:
        """What to check when `model_list` answers 404."""
        return "is this the API's base URL?"

    def constraint_mechanism(self, base_url: str | None) -> str | None:
        """Its native constrained-output mechanism at ``base_url`` (one of
        `reljudge.judges.constrain.MECHANISMS`), None when none is known."""
        return None

    def not_found_hint(self, base_url: str | None, model: str) -> str | None:
        """What to check after a 404 when it is this backend's own (None: the general hint)."""
        return None

    def check_batch_model(self, model: str) -> None:
        """ValueError, with the reason, when the requests of ``model`` (the provider's name) cannot
        go through this backend's batch service (one that `sends_batches`)."""

    def batch_service(
        self,
        model: str,
        *,
        base_url: str | None,
        api_key: str | None,
        timeout_s: float,
        redact: Callable[[str], str],
    ) -> Any:
        """Its Batch API adapter for ``model`` (the interface of
        `reljudge.llm.batch.service.BatchService`); ValueError when it has none."""
        raise ValueError(f"the {self.name} backend sends no batches")


def _url_path(base_url: str | None) -> str:
    """The path of a base URL, normalised (``http://h:1/v1/`` -> ``v1``)."""
    return normalise_base_url(base_url).partition("://")[2].partition("/")[2]


class OpenAICapabilities(Capabilities):
    """OpenAI's API, or any OpenAI-compatible server at ``--base-url``."""

    name = "openai"
    adapter = "reljudge.llm.backends.openai:OpenAIBackend"
    sdk = "openai"
    key_variable = "OPENAI_API_KEY"
    sends_batches = True
    sends_images = True
    reports_served_model = True

    def constraint_mechanism(self, base_url: str | None) -> str | None:
        """OpenAI's own API: structured outputs; another OpenAI-compatible server: a llama.cpp
        grammar (choose ``guided-choice`` for vLLM)."""
        return "json-schema" if not base_url or "api.openai.com" in base_url else "grammar"

    def not_found_hint(self, base_url: str | None, model: str) -> str | None:
        if base_url and not _url_path(base_url).endswith("v1"):
            return f"the base URL may need /v1 ({normalise_base_url(base_url)}/v1)"
        return None

    def model_list(self, base_url: str | None) -> tuple[str, str] | None:
        import os

        from_env = os.environ.get("OPENAI_BASE_URL")
        base = base_url or from_env or "https://api.openai.com/v1"
        where = "--base-url" if base_url else "$OPENAI_BASE_URL" if from_env else "default"
        return base.rstrip("/") + "/models", where

    def served_names(self, listing: Any) -> list[str]:
        return [str(item["id"]) for item in listing["data"]]

    def list_not_found_hint(self) -> str:
        return "does --base-url end in /v1?"

    def batch_service(
        self,
        model: str,
        *,
        base_url: str | None,
        api_key: str | None,
        timeout_s: float,
        redact: Callable[[str], str],
    ) -> Any:
        """The official SDK's Batch API (`reljudge.llm.batch.service`)."""
        from reljudge.llm.batch.service import BatchService

        return BatchService(base_url=base_url, api_key=api_key, timeout_s=timeout_s, redact=redact)


class OllamaCapabilities(Capabilities):
    """A local Ollama server: free, its own ``format`` field for constrained output."""

    name = "ollama"
    adapter = "reljudge.llm.backends.ollama:OllamaBackend"
    sdk = "ollama"
    free = True
    price_provider = "ollama"
    default_address = "the default Ollama address"

    def constraint_mechanism(self, base_url: str | None) -> str | None:
        return "ollama-format"

    key_not_checked = "none needed (ollama)"

    def not_found_hint(self, base_url: str | None, model: str) -> str | None:
        if _url_path(base_url).endswith("v1"):
            return "the ollama backend takes the server address without /v1"
        return f"is the model pulled? (ollama pull {model})"

    def model_list(self, base_url: str | None) -> tuple[str, str] | None:
        import os

        base = base_url or os.environ.get("OLLAMA_HOST") or "http://127.0.0.1:11434"
        if "://" not in base:
            base = f"http://{base}"
        return base.rstrip("/") + "/api/tags", "--base-url" if base_url else "the Ollama default"

    def served_names(self, listing: Any) -> list[str]:
        return [str(item["name"]) for item in listing["models"]]

    def list_not_found_hint(self) -> str:
        return "is this an Ollama server?"


class LiteLLMCapabilities(Capabilities):
    """Any provider LiteLLM supports; batches for the providers whose batch API LiteLLM speaks
    in OpenAI's format (`reljudge.llm.backends.litellm.batch_provider`)."""

    name = "litellm"
    adapter = "reljudge.llm.backends.litellm:LiteLLMBackend"
    sdk = "litellm"
    sends_batches = True
    sends_images = True  # OpenAI's content parts, translated by LiteLLM
    key_not_checked = "litellm reads the provider's own variable (e.g. ANTHROPIC_API_KEY); not checked"

    def check_batch_model(self, model: str) -> None:
        from reljudge.llm.backends.litellm import batch_provider

        batch_provider(model)

    def batch_service(
        self,
        model: str,
        *,
        base_url: str | None,
        api_key: str | None,
        timeout_s: float,
        redact: Callable[[str], str],
    ) -> Any:
        """LiteLLM's batch functions (`reljudge.llm.batch.litellm_service`)."""
        from reljudge.llm.batch.litellm_service import LitellmBatchService

        return LitellmBatchService(
            model, base_url=base_url, api_key=api_key, timeout_s=timeout_s, redact=redact
        )
