"""The bench's memory: every full run of ``bench/run.py`` appends its figures to
``bench/history.jsonl`` (one JSON line: the commit, whether the tree had changes, the date, the
machine, its load before and after, and each figure with its target and status), so that a figure
that misses its target can say which commit last met it -- the range a regression came in.
Commit the file with the change the run measured. ``--quick`` runs are not recorded (their sizes
are not the targets')."""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

HISTORY = Path(__file__).resolve().parent / "history.jsonl"
ROOT = Path(__file__).resolve().parent.parent


def load() -> float:
    """The 1-minute load average (NaN where unknown)."""
    try:
        return os.getloadavg()[0]
    except OSError:
        return float("nan")


def commit() -> tuple[str, bool]:
    """(the checked-out commit, short; whether the tree has changes) -- ("unknown", False) outside git."""
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True, timeout=10
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=10,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown", False
    return head or "unknown", bool(dirty)


def entries(path: Path = HISTORY) -> list[dict[str, Any]]:
    """The recorded runs, oldest first (a line that cannot be read is skipped)."""
    if not path.exists():
        return []
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if isinstance(entry, dict) and isinstance(entry.get("rows"), list):
            out.append(entry)
    return out


def last_met(name: str, history: Sequence[dict[str, Any]]) -> str:
    """``commit (date)`` of the newest recorded run in which figure ``name`` met its target, or "never"."""
    for entry in reversed(history):
        for row in entry["rows"]:
            if (
                isinstance(row, dict)
                and row.get("name") == name
                and str(row.get("status", "")).startswith("ok")
            ):
                mark = "+changes" if entry.get("dirty") else ""
                return f"{entry.get('commit', '?')}{mark} ({entry.get('date', '?')})"
    return "never recorded"


def record(
    rows: Sequence[tuple[str, float, float, str]], machine: str, load_before: float, path: Path = HISTORY
) -> dict[str, Any]:
    """Append this run to the history; returns the entry."""
    head, dirty = commit()
    entry = {
        "commit": head,
        "dirty": dirty,
        "date": time.strftime("%Y-%m-%d %H:%M", time.gmtime()),
        "machine": machine,
        "load": [round(load_before, 2), round(load(), 2)],
        "rows": [
            {
                "name": n,
                "value": None if v != v else round(v, 4),
                "target": None if t != t else t,
                "status": s,
            }
            for n, v, t, s in rows
        ],
    }
    with path.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(entry, sort_keys=True) + "\n")
    return entry
