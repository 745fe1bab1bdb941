"""The grid of a sweep: datasets × models × tasks × prompts, filtered with ``--only``."""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from reljudge.errors import InputError
from reljudge.sweep.config import ModelSpec, SweepConfig
from reljudge.sweep.prompts import SweepPrompt

ONLY_KEYS: tuple[str, ...] = ("dataset", "model", "task", "prompt", "group")
_UNSAFE = re.compile(r"[^A-Za-z0-9._+-]+")


def safe_name(text: str) -> str:
    """A directory-safe version of a name (``ollama/llama3.2`` -> ``ollama_llama3.2``)."""
    return _UNSAFE.sub("_", text).strip("_") or "_"


@dataclass(frozen=True)
class Cell:
    dataset: str
    model: str  # the model's label
    task: str
    prompt: SweepPrompt
    model_spec: ModelSpec

    @property
    def id(self) -> str:
        return f"{self.dataset}/{self.model}/{self.task}/{self.prompt.id}"

    def directory(self, root: Path) -> Path:
        return (
            root
            / "cells"
            / safe_name(self.dataset)
            / safe_name(self.model)
            / self.task
            / safe_name(self.prompt.id)
        )


def parse_only(items: Sequence[str]) -> dict[str, list[str]]:
    """``["model=a,b", "prompt=1*"]`` -> ``{"model": ["a", "b"], "prompt": ["1*"]}`` (globs allowed)."""
    out: dict[str, list[str]] = {}
    for item in items:
        for part in item.split():
            key, sep, value = part.partition("=")
            key = {"method": "task"}.get(key.strip(), key.strip())
            if not sep or key not in ONLY_KEYS or not value:
                raise InputError(
                    f"--only {part!r}: expected KEY=VALUE[,VALUE...] with KEY one of {', '.join(ONLY_KEYS)}"
                )
            out.setdefault(key, []).extend(v for v in value.split(",") if v)
    return out


def _keep(value: str, patterns: Sequence[str] | None) -> bool:
    return patterns is None or any(fnmatch.fnmatchcase(value, p) for p in patterns)


def expand_grid(
    config: SweepConfig, prompts: Sequence[SweepPrompt], only: Mapping[str, Sequence[str]] | None = None
) -> list[Cell]:
    """Every (dataset, model, task, prompt) cell, in a stable order."""
    only = only or {}
    tasks = list(config.methods) + sorted({j.scale for j in config.judges} - set(config.methods))
    cells = []
    for ds in config.datasets:
        if not _keep(ds.name, only.get("dataset")):
            continue
        for model in config.models:
            if not _keep(model.label, only.get("model")):
                continue
            for task in tasks:
                if not _keep(task, only.get("task")):
                    continue
                for prompt in prompts:
                    if (
                        prompt.task != task
                        or not _keep(prompt.id, only.get("prompt"))
                        or not _keep(prompt.group, only.get("group"))
                    ):
                        continue
                    cells.append(Cell(ds.name, model.label, task, prompt, model))
    if not cells:
        raise InputError(
            "the sweep has no cells (check --only and the methods of the prompts)", config.source
        )
    dirs: dict[Path, str] = {}
    for cell in cells:
        d = cell.directory(Path("."))
        if d in dirs and dirs[d] != cell.id:
            raise InputError(
                f"cells {dirs[d]!r} and {cell.id!r} map to the same directory; rename one", config.source
            )
        dirs[d] = cell.id
    return cells
