"""Published prompt templates (verbatim, versioned, hash-pinned) and user-defined prompts.

from reljudge.prompts import get_prompt
tpl = get_prompt("umbrela/bing-zeroshot")
messages = tpl.render(query="...", document="...")   # [{"role": ..., "content": ...}, ...]
tpl.sha256, tpl.output.parse(answer_text)
"""

from reljudge.prompts.errors import PromptError
from reljudge.prompts.output import OutputSpec
from reljudge.prompts.registry import get_prompt, list_prompts
from reljudge.prompts.template import PromptTemplate, messages_sha256

__all__ = ["OutputSpec", "PromptError", "PromptTemplate", "get_prompt", "list_prompts", "messages_sha256"]
