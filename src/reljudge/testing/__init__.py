"""Test support: a real mock LLM HTTP server (OpenAI + Ollama APIs) with scriptable responders.

>>> from reljudge.testing import MockLLMServer, responders
>>> with MockLLMServer(responders.fixed("1")) as srv:      # doctest: +SKIP
...     srv.openai_url, srv.ollama_url, srv.calls
"""

from reljudge.testing import responders
from reljudge.testing.auto import AutoResponder, default_rules
from reljudge.testing.exchange import MockReply, MockRequest, Responder, count_tokens
from reljudge.testing.responders import FaultInjector, PerPrompt, Scripted
from reljudge.testing.rules import Rule, passage_text, stable_choice
from reljudge.testing.server import MockLLMServer

__all__ = [
    "AutoResponder",
    "FaultInjector",
    "MockLLMServer",
    "MockReply",
    "MockRequest",
    "PerPrompt",
    "Responder",
    "Rule",
    "Scripted",
    "count_tokens",
    "default_rules",
    "passage_text",
    "responders",
    "stable_choice",
]
