"""The prompts of a sweep: built-in ids, inline templates and prompt collection files.

A collection file (JSON or YAML) maps prompt-set ids to per-task templates, as the published
prompt-sensitivity collection does::

    {"0": {"participant_name": "human-0",
           "binary":   {"system": "...", "user": "... {query} ... {document}"},
           "graded":   {...},
           "pairwise": {"system": "...", "user": "... {query} {documentA} {documentB}"}}, ...}

A task whose entry is missing or null is simply not offered by that prompt set. The group of a
prompt (for the per-group summary) is ``group:`` when given, else the part of
``participant_name`` before its first ``-`` in lower case (``human-3`` -> ``human``,
``LLM-GPT4`` -> ``llm``), else the name itself (``umbrela``).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reljudge.errors import InputError, shown
from reljudge.sweep.config import TASKS, JudgeEntry, SweepConfig, check_placeholders
from reljudge.sweep.yamlines import load_file_with_lines

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class SweepPrompt:
    """One prompt for one task."""

    id: str
    task: str
    group: str
    system: str
    user: str
    source: str  # file:line it came from
    name: str | None = None  # participant name / title
    builtin: str | None = None  # the built-in prompt id, when it is one
    judge: JudgeEntry | None = None  # a whole judging method (`reljudge.sweep.judges`), not a prompt


@dataclass(frozen=True)
class SkippedPrompt:
    id: str
    task: str
    reason: str
    source: str


def group_of(name: str | None, fallback: str = "custom") -> str:
    if not name:
        return fallback
    head, sep, _ = name.partition("-")
    return head.strip().lower() if sep and head.strip() else name.strip()


def load_collection(
    path: Path,
    *,
    tasks: tuple[str, ...] = TASKS,
    ids: list[str] | None = None,
    exclude: list[str] | None = None,
    invalid: str = "error",
    group: str | None = None,
) -> tuple[list[SweepPrompt], list[SkippedPrompt]]:
    """The prompts of a collection file, checked (see the module docstring)."""
    data, lines = load_file_with_lines(path)
    if not isinstance(data, dict):
        raise InputError("a prompt collection must map prompt ids to task templates", path, lines.get(()))
    keys = {str(k): k for k in data}
    if ids is not None:
        unknown = [i for i in ids if i not in keys]
        if unknown:
            raise InputError(f"prompt id(s) {unknown} are not in the collection", path)
    excluded = set(exclude or ())
    prompts: list[SweepPrompt] = []
    skipped: list[SkippedPrompt] = []
    for sid, key in keys.items():
        if (ids is not None and sid not in ids) or sid in excluded:
            continue
        entry = data[key]
        if not isinstance(entry, dict):
            raise InputError(f"prompt {shown(sid)}: expected a mapping of tasks", path, lines.get((key,)))
        name = entry.get("participant_name") or entry.get("name")
        name = str(name) if name is not None else None
        unknown_keys = sorted(set(entry) - set(TASKS) - {"participant_name", "name", "group"}, key=str)
        if unknown_keys:
            raise InputError(
                f"prompt {shown(sid)}: unknown key(s) {shown(unknown_keys)}",
                path,
                lines.get((key, unknown_keys[0])),
            )
        grp = group or entry.get("group") or group_of(name)
        for task in tasks:
            spec = entry.get(task)
            if spec is None:
                continue
            where = f"{path}:{lines.get((key, task))}"
            if not isinstance(spec, dict) or "user" not in spec or set(spec) - {"system", "user"}:
                raise InputError(
                    f"prompt {shown(sid)} {task}: expected {{system, user}} messages",
                    path,
                    lines.get((key, task)),
                )
            system = str(spec.get("system") or "")
            user = str(spec.get("user") or "")
            problem = check_placeholders(task, system, user)
            if problem:
                if invalid == "skip":
                    skipped.append(SkippedPrompt(sid, task, problem, where))
                    continue
                raise InputError(
                    f"prompt {shown(sid)} {problem} (set 'invalid: skip' to leave such prompts out)",
                    path,
                    lines.get((key, task, "user")),
                )
            prompts.append(SweepPrompt(sid, task, grp, system, user, where, name=name))
    for s in skipped:
        logger.warning("%s: prompt %s (%s) left out: %s", s.source, s.id, s.task, s.reason)
    return prompts, skipped


def _builtin(
    source_id: str, prompt_id: str, group: str, where: str, path: str, line: int | None
) -> list[SweepPrompt]:
    """A built-in prompt (reljudge.prompts) as a sweep prompt of the task its output implies."""
    from reljudge.prompts import get_prompt

    try:
        template = get_prompt(source_id)
    except InputError as err:
        raise InputError(err.message, path, line) from None
    except KeyError:
        raise InputError(f"unknown built-in prompt {shown(source_id)}", path, line) from None
    spec = getattr(template, "output", None)
    output = str(getattr(spec, "type", spec) or "")
    task = {"binary": "binary", "graded": "graded", "pairwise": "pairwise"}.get(output)
    if task is None:
        raise InputError(
            f"built-in prompt {shown(source_id)} has output {shown(output)}; a sweep takes binary, graded or pairwise prompts",
            path,
            line,
        )
    system, user = _template_messages(template)  # placeholders are checked by the template itself
    return [SweepPrompt(prompt_id, task, group, system, user, where, name=source_id, builtin=source_id)]


def _template_messages(template: Any) -> tuple[str, str]:
    """(system, user) texts of a `PromptTemplate`."""
    system = getattr(template, "system", None)
    user = getattr(template, "user", None)
    if isinstance(user, str):
        return str(system or ""), user
    messages = getattr(template, "messages", None) or ()
    sys_parts = [
        m.content if hasattr(m, "content") else m["content"] for m in messages if _role(m) == "system"
    ]
    user_parts = [
        m.content if hasattr(m, "content") else m["content"] for m in messages if _role(m) == "user"
    ]
    return "\n".join(sys_parts), "\n".join(user_parts)


def _role(message: Any) -> str:
    return message.role if hasattr(message, "role") else message["role"]


def resolve_prompts(config: SweepConfig) -> tuple[list[SweepPrompt], list[SkippedPrompt]]:
    """All prompts of the sweep for its methods; ids must be unique per task."""
    source = config.source or "<sweep>"
    tasks = tuple(t for t in TASKS if t in config.methods)
    prompts: list[SweepPrompt] = []
    skipped: list[SkippedPrompt] = []
    for i, entry in enumerate(config.prompts):
        line = config.line("prompts", i)
        if entry.file:
            found, left = load_collection(
                config.path(entry.file),
                tasks=tasks,
                ids=entry.ids,
                exclude=entry.exclude,
                invalid=entry.invalid,
                group=entry.group,
            )
            if entry.id:  # a prefix that keeps ids of several collections apart
                found = [
                    SweepPrompt(f"{entry.id}.{p.id}", p.task, p.group, p.system, p.user, p.source, p.name)
                    for p in found
                ]
            prompts += found
            skipped += left
        elif entry.builtin:
            found = _builtin(
                entry.builtin,
                entry.id or entry.builtin,
                entry.group or "builtin",
                f"{source}:{line}",
                source,
                line,
            )
            prompts += [p for p in found if p.task in tasks]
        else:
            for task in TASKS:
                messages = getattr(entry, task)
                if messages is None or task not in tasks:
                    continue
                tline = config.line("prompts", i, task, "user")
                problem = check_placeholders(task, messages.system, messages.user)
                if problem:
                    raise InputError(f"prompt {shown(entry.id)} {problem}", source, tline)
                prompts.append(
                    SweepPrompt(
                        entry.id or "",
                        task,
                        entry.group or "custom",
                        messages.system,
                        messages.user,
                        f"{source}:{tline}",
                    )
                )
    seen: dict[tuple[str, str], SweepPrompt] = {}
    for p in prompts:
        other = seen.get((p.task, p.id))
        if other is not None:
            raise InputError(
                f"prompt id {shown(p.id)} ({p.task}) is defined twice (also at {other.source}); give a collection an 'id' prefix",
                source,
            )
        seen[(p.task, p.id)] = p
    if config.prompts and not prompts:
        raise InputError(f"no prompts for the methods {list(tasks)}", source, config.line("prompts"))
    return prompts, skipped
