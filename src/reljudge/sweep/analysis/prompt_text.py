"""Lexical diversity of prompt texts (thesis Fig. 4.6, spec S9a): per prompt × task × message
(system / user), the unique terms once placeholders (``{query}``, …) are removed, the text is
lowercased and cut into ``[a-z0-9']+`` tokens; per group × message the distribution of those
counts (mean, median, quartiles) and the size of the group's union vocabulary (`prompt_diversity`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping
from typing import Any

import numpy as np

PLACEHOLDER = re.compile(r"\{[A-Za-z_][A-Za-z0-9_]*\}")
TOKEN = re.compile(r"[a-z0-9']+")
MESSAGES: tuple[str, ...] = ("system", "user")
TASKS: tuple[str, ...] = ("binary", "graded", "pairwise")


def terms(text: str) -> list[str]:
    """The tokens of ``text`` with placeholders removed, lowercased."""
    return TOKEN.findall(PLACEHOLDER.sub(" ", text).lower())


def prompt_diversity(
    collection: Mapping[str, Any],
    group_of: Callable[[str], str],
    exclude: Collection[str] = (),
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """``(rows, summary)``: one row per prompt × task × message with its unique and total terms;
    one summary row per group × message over the prompts' tasks (``n`` texts, mean / median /
    quartiles of the unique-term counts, ``vocabulary``: unique terms of the group's texts together).

    ``collection`` maps a prompt id to ``{task: {"system": …, "user": …}}`` (the published
    ``prompts.json``); ids in ``exclude`` and missing or non-text messages are left out."""
    rows: list[dict[str, Any]] = []
    vocab: dict[tuple[str, str], set[str]] = {}
    for pid, entry in collection.items():
        if pid in exclude or not isinstance(entry, Mapping):
            continue
        group = group_of(pid)
        for task in TASKS:
            messages = entry.get(task)
            if not isinstance(messages, Mapping):
                continue
            for message in MESSAGES:
                text = messages.get(message)
                if not isinstance(text, str):
                    continue
                found = terms(text)
                unique = set(found)
                vocab.setdefault((group, message), set()).update(unique)
                rows.append(
                    {
                        "prompt": pid,
                        "group": group,
                        "task": task,
                        "message": message,
                        "unique_terms": len(unique),
                        "terms": len(found),
                    }
                )
    summary = []
    for (group, message), words in sorted(vocab.items()):
        counts = np.array(
            [r["unique_terms"] for r in rows if r["group"] == group and r["message"] == message]
        )
        q1, median, q3 = np.percentile(counts, [25, 50, 75])
        summary.append(
            {
                "group": group,
                "message": message,
                "texts": int(counts.size),
                "mean": float(counts.mean()),
                "median": float(median),
                "q1": float(q1),
                "q3": float(q3),
                "min": int(counts.min()),
                "max": int(counts.max()),
                "vocabulary": len(words),
            }
        )
    return rows, summary
