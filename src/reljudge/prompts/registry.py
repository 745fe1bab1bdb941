"""The built-in prompt templates: one YAML file per prompt under ``templates/``, id = its path
without ``.yaml`` (``templates/umbrela/bing-zeroshot.yaml`` is ``umbrela/bing-zeroshot``)."""

from __future__ import annotations

import difflib
from functools import lru_cache
from pathlib import Path

from reljudge.prompts.errors import PromptError
from reljudge.prompts.template import PromptTemplate

TEMPLATES_DIR = Path(__file__).resolve().parent / "templates"


@lru_cache(maxsize=1)
def _builtins() -> dict[str, PromptTemplate]:
    from reljudge.io.yamlsafe import load_yaml

    found: dict[str, PromptTemplate] = {}
    for path in sorted(TEMPLATES_DIR.rglob("*.yaml")):
        expected_id = path.relative_to(TEMPLATES_DIR).with_suffix("").as_posix()
        data = load_yaml(path.read_text(encoding="utf-8"), path)
        tpl = PromptTemplate.from_dict(data, path=path, builtin=True)
        if tpl.id != expected_id:
            raise PromptError(f"template id {tpl.id!r} does not match its file name ({expected_id!r})", path)
        found[tpl.id] = tpl
    return found


def list_prompts() -> list[PromptTemplate]:
    """All built-in templates, sorted by id."""
    return [t for _, t in sorted(_builtins().items())]


def get_prompt(id_or_path: str | Path) -> PromptTemplate:
    """A built-in template by id, or a user-defined template from a ``.yaml``/``.yml`` file."""
    key = str(id_or_path)
    builtins = _builtins()
    if key in builtins:
        return builtins[key]
    if key.endswith((".yaml", ".yml")) or Path(key).is_file():
        return PromptTemplate.from_file(key)
    close = difflib.get_close_matches(key, list(builtins), n=3, cutoff=0.5)
    hint = f"; did you mean {' or '.join(close)}?" if close else ""
    raise PromptError(f"unknown prompt {key!r}{hint} (see `judge prompts list`)")
