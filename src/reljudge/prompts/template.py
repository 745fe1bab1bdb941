"""Prompt templates: verbatim message texts with named placeholders and an output contract.

Placeholder syntax. A template lists its placeholders under ``variables`` (placeholder name ->
role). Rendering replaces exactly the tokens ``{name}`` for those names, in one pass, and leaves
every other brace alone. Published prompts contain literal braces (JSON examples such as
``{ "grade": int }``), so ``str.format`` is not used: nothing needs escaping, and a value that
itself contains ``{query}`` is inserted as is, never expanded again.

Roles. Published prompts name their placeholders differently (``{passage}``, ``{document}``,
``{context}``, ``{passage_a}``); each placeholder maps to a role (``query``, ``document``,
``documentA``, ``documentB``, ``question``, ``context``, ``nuggets``, ``num_nuggets``,
``nuggets_length``, ``max_nuggets``, ``statement``, ``citation``). `render` accepts either the
role or the placeholder name, so a judge can render any pointwise prompt with
``render(query=..., document=...)``.
``passage`` is accepted as another name for ``document``. Non-string values are inserted with
``str()``, so a list of nuggets appears as its Python repr, as the AutoNuggetizer does.

The SHA-256 of a template is computed over its raw messages (see `messages_sha256`), never typed
by hand; it identifies the exact prompt text in judgment provenance.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reljudge.errors import InputError, shown
from reljudge.prompts.errors import PromptError, listed
from reljudge.prompts.output import OutputSpec
from reljudge.records import messages_sha256

ROLES: tuple[str, ...] = (
    "query",
    "document",
    "documentA",
    "documentB",
    "question",
    "context",
    "nuggets",
    "num_nuggets",
    "nuggets_length",
    "max_nuggets",
    "statement",
    "citation",
)
ROLE_ALIASES: dict[str, str] = {"passage": "document", "passageA": "documentA", "passageB": "documentB"}

# Roles a user-defined prompt must contain for its output type. A tuple inside the tuple means
# "one of these".
REQUIRED_ROLES: dict[str, tuple[str | tuple[str, ...], ...]] = {
    "binary": (("query", "question"), "document"),
    "graded": (("query", "question"), "document"),
    "pairwise": ("query", "documentA", "documentB"),
    "questions": ("query",),
    "nuggets": ("query",),
    "labels": ("query", "nuggets"),
    "choice": (),
    "answer": ("query",),
}

_TOKEN = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


@dataclass(frozen=True)
class PromptTemplate:
    """A chat prompt: ordered messages with placeholders, an output contract and provenance."""

    id: str
    messages: tuple[dict[str, str], ...]
    output: OutputSpec
    variables: Mapping[str, str]  # placeholder name -> role
    version: str | None = None
    title: str | None = None
    source: Mapping[str, str] = field(default_factory=dict)
    licence: str | None = None
    notes: str | None = None
    path: Path | None = None
    builtin: bool = False
    sha256: str = field(init=False, default="")
    #: each message's content split at its placeholders, for `render`: (role, parts) with
    #: parts = (text, name, text, name, ..., text)
    _parts: tuple[tuple[str, tuple[str, ...]], ...] = field(init=False, default=(), repr=False, compare=False)

    def __post_init__(self) -> None:
        where = self.path
        if not self.id or not isinstance(self.id, str):
            raise PromptError("a prompt needs a non-empty id", where)
        if not self.messages:
            raise PromptError(f"prompt {shown(self.id)} has no messages", where)
        for msg in self.messages:
            if msg.get("role") not in ("system", "user", "assistant") or not isinstance(
                msg.get("content"), str
            ):
                raise PromptError(
                    f"prompt {shown(self.id)}: each message needs a role (system/user/assistant) and a text",
                    where,
                )
        if self.messages[-1]["role"] != "user":
            raise PromptError(f"prompt {shown(self.id)}: the last message must be the user message", where)
        text = "\n".join(m["content"] for m in self.messages)
        for name, role in self.variables.items():
            if role not in ROLES:
                raise PromptError(
                    f"prompt {shown(self.id)}: placeholder {{{name}}} has unknown role {shown(role)}", where
                )
            if "{" + name + "}" not in text:
                raise PromptError(
                    f"prompt {shown(self.id)}: declared placeholder {{{name}}} does not occur in the messages",
                    where,
                )
        object.__setattr__(self, "messages", tuple(dict(m) for m in self.messages))
        object.__setattr__(self, "variables", dict(self.variables))
        object.__setattr__(self, "sha256", messages_sha256(self.messages))
        if self.variables:
            # the one-pass substitution of `render`: a value is inserted as is, never expanded
            pattern = re.compile(r"\{(" + "|".join(re.escape(n) for n in self.variables) + r")\}")
            parts = tuple((m["role"], tuple(pattern.split(m["content"]))) for m in self.messages)
            object.__setattr__(self, "_parts", parts)

    # --- construction -------------------------------------------------------------------------

    @classmethod
    def from_messages(
        cls,
        id: str,
        system: str | None,
        user: str,
        output: OutputSpec | Mapping[str, Any] | str,
        *,
        variables: Mapping[str, str] | None = None,
        allow_unknown_placeholders: bool = False,
        **meta: Any,
    ) -> PromptTemplate:
        """A user-defined prompt. Placeholders are ``{query}``, ``{document}`` (or ``{passage}``),
        ``{documentA}``, ``{documentB}``, ``{question}``, ``{nuggets}`` ... (see ROLES); the ones the
        output type needs must be present. A ``{word}`` that is not a known placeholder is an error
        (it is usually a typo) unless ``allow_unknown_placeholders`` is set, in which case it stays
        literal text."""
        messages = []
        if system:
            messages.append({"role": "system", "content": system})
        messages.append({"role": "user", "content": user})
        spec = OutputSpec.coerce(output)
        path = meta.get("path")
        if variables is None:
            variables = _detect_variables(id, messages, allow_unknown_placeholders, path)
        _check_required(id, spec, variables, path)
        return cls(id=id, messages=tuple(messages), output=spec, variables=variables, **meta)

    @classmethod
    def from_dict(
        cls, data: Mapping[str, Any], *, path: Path | None = None, builtin: bool = False
    ) -> PromptTemplate:
        """Build from the mapping of a template file (built-in or user-defined)."""
        if not isinstance(data, Mapping):
            raise PromptError("a prompt file must hold a mapping (id, output, messages or system/user)", path)
        known = {
            "id",
            "version",
            "title",
            "source",
            "licence",
            "license",
            "output",
            "variables",
            "notes",
            "messages",
            "system",
            "user",
        }
        unknown = set(data) - known
        if unknown:
            raise PromptError(f"unknown field(s) in prompt file: {listed(unknown)}", path)
        pid = data.get("id") or (path.stem if path is not None else None)
        if not isinstance(pid, str) or not pid:
            raise PromptError("a prompt needs an 'id'", path)
        if "output" not in data:
            raise PromptError(
                f"prompt {shown(pid)} needs an 'output' (e.g. 'graded:0-3' or {{type: binary}})", path
            )
        try:
            spec = OutputSpec.coerce(data["output"])
        except PromptError as err:
            raise PromptError(err.message, path) from None
        if "messages" in data:
            if "system" in data or "user" in data:
                raise PromptError("give either 'messages' or 'system'/'user', not both", path)
            raw = data["messages"]
            if not isinstance(raw, list) or not all(isinstance(m, Mapping) for m in raw):
                raise PromptError("'messages' must be a list of {role, content}", path)
            messages = [{"role": m.get("role"), "content": m.get("content")} for m in raw]
        else:
            user = data.get("user")
            if not isinstance(user, str):
                raise PromptError(f"prompt {shown(pid)} needs a 'user' message text", path)
            system = data.get("system")
            if system is not None and not isinstance(system, str):
                raise PromptError("'system' must be a text", path)
            messages = ([{"role": "system", "content": system}] if system else []) + [
                {"role": "user", "content": user}
            ]
        variables = data.get("variables")
        if variables is not None and (
            not isinstance(variables, Mapping)
            or not all(isinstance(k, str) and isinstance(v, str) for k, v in variables.items())
        ):
            raise PromptError("'variables' must map placeholder names to roles", path)
        if variables is None:
            variables = _detect_variables(pid, messages, False, path)
        if not builtin:
            _check_required(pid, spec, variables, path)
        source = data.get("source") or {}
        if isinstance(source, str):
            source = {"paper": source}
        return cls(
            id=pid,
            messages=tuple(messages),
            output=spec,
            variables=variables,
            version=None if data.get("version") is None else str(data.get("version")),
            title=data.get("title"),
            source={str(k): str(v) for k, v in dict(source).items()},
            licence=data.get("licence", data.get("license")),
            notes=data.get("notes"),
            path=path,
            builtin=builtin,
        )

    @classmethod
    def from_file(cls, path: str | Path) -> PromptTemplate:
        """Load a user-defined prompt from a YAML file (same layout as the built-in templates, or
        the short form ``id`` / ``output`` / ``system`` / ``user``)."""
        from reljudge.io.yamlsafe import load_yaml, read_yaml_text

        p = Path(path)
        try:
            data = load_yaml(read_yaml_text(p, "prompt file"), p)
        except PromptError:
            raise
        except InputError as err:  # the same error, as the PromptError callers of templates catch
            raise PromptError(err.message, err.path, err.line) from None
        return cls.from_dict(data, path=p)

    # --- use ----------------------------------------------------------------------------------

    @property
    def placeholders(self) -> tuple[str, ...]:
        return tuple(self.variables)

    @property
    def roles(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(self.variables.values()))

    def render(self, **values: Any) -> list[dict[str, str]]:
        """The chat messages with every placeholder filled.

        Each placeholder takes the value given under its own name or under its role (``passage``
        counts as ``document``). Extra values are ignored. A missing value raises `PromptError`.
        """
        given = {ROLE_ALIASES.get(k, k): v for k, v in values.items() if v is not None}
        given.update({k: v for k, v in values.items() if v is not None and k in self.variables})
        filled: dict[str, str] = {}
        missing = []
        for name, role in self.variables.items():
            if name in values and values[name] is not None:
                filled[name] = str(values[name])
            elif role in given:
                filled[name] = str(given[role])
            else:
                missing.append(name if name == role else f"{role} (placeholder {{{name}}})")
        if missing:
            raise PromptError(f"prompt {shown(self.id)}: missing value for {', '.join(missing)}")
        if not filled:
            return [dict(m) for m in self.messages]
        # every declared placeholder is filled here (else PromptError above): join the split
        # texts (odd positions are placeholder names)
        return [
            {
                "role": role,
                "content": "".join([filled[part] if i % 2 else part for i, part in enumerate(parts)]),
            }
            for role, parts in self._parts
        ]

    def raw_text(self) -> str:
        """The template as shown by `judge prompts show`: each message under a role header."""
        return "\n".join(f"--- {m['role']} ---\n{m['content']}" for m in self.messages)

    def metadata(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "version": self.version,
            "title": self.title,
            "output": self.output.to_dict(),
            "variables": dict(self.variables),
            "source": dict(self.source),
            "licence": self.licence,
            "sha256": self.sha256,
            "builtin": self.builtin,
            "path": str(self.path) if self.path is not None else None,
        }


def _detect_variables(
    pid: str, messages: list[dict[str, Any]], allow_unknown: bool, path: Path | None
) -> dict[str, str]:
    found: dict[str, str] = {}
    unknown: list[str] = []
    for m in messages:
        content = m.get("content")
        if not isinstance(content, str):
            continue
        for tok in _TOKEN.findall(content):
            role = ROLE_ALIASES.get(tok, tok)
            if role in ROLES:
                found[tok] = role
            elif tok not in unknown:
                unknown.append(tok)
    if unknown and not allow_unknown:
        raise PromptError(
            f"prompt {shown(pid)}: unknown placeholder(s) {listed(('{' + u + '}' for u in unknown), sort=False)}; "
            f"known: {', '.join('{' + r + '}' for r in ROLES)} (and {{passage}})",
            path,
        )
    return found


def _check_required(pid: str, spec: OutputSpec, variables: Mapping[str, str], path: Path | None) -> None:
    have = set(variables.values())
    for need in REQUIRED_ROLES[spec.type]:
        options = need if isinstance(need, tuple) else (need,)
        if not have.intersection(options):
            wanted = " or ".join("{" + o + "}" for o in options)
            raise PromptError(
                f"prompt {shown(pid)}: a {spec.type} prompt needs the placeholder {wanted}", path
            )
