"""What the score tables of generated answers share (nuggets and citation support; pure).

- `current_records`: of each answer's (system, topic) records, those made from one version of it:
  the version the run was given (``current``, when known), else the newest one recorded;
- `qid_order`: topics in numeric order, then the others by name;
- `render_rows`: a table as aligned text columns.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

#: the answers' fingerprints a run was given: ``{(system, qid): sha256}``
Versions = Mapping[tuple[str, str], str]


def current_records(
    groups: Mapping[tuple[str, str], Sequence[Any]],
    fingerprint: Callable[[Any], Any],
    current: Versions | None = None,
) -> dict[tuple[str, str], list[Any]]:
    """Each answer's records of one version: those whose ``fingerprint`` is the answer's in
    ``current`` (the answer as the run read it; an answer reverted to an earlier text counts that
    text's records), else the fingerprint of its newest record (by timestamp). An answer of
    ``current`` without a record of its version maps to an empty list."""
    out: dict[tuple[str, str], list[Any]] = {}
    for key, found in groups.items():
        if current is not None and key in current:
            version = current[key]
        else:
            version = fingerprint(max(found, key=lambda r: r.provenance.timestamp))
        out[key] = [r for r in found if fingerprint(r) == version]
    return out


def qid_order(qid: str) -> tuple[int, int | str]:
    """Sort key of a topic id: numbers first, numerically, then the others by name."""
    return (0, int(qid)) if qid.isdigit() else (1, qid)


def render_rows(names: Sequence[str], rows: Iterable[Sequence[str]]) -> list[str]:
    """A header and rows as lines of left-aligned columns separated by two spaces."""
    rows = list(rows)
    widths = [max(len(n), *(len(row[i]) for row in rows)) for i, n in enumerate(names)]
    lines = ["  ".join(n.ljust(w) for n, w in zip(names, widths, strict=True))]
    lines += ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) for row in rows]
    return lines


def fmt(value: float | None) -> str:
    """A score with four decimals, ``-`` when undefined."""
    return "-" if value is None else f"{value:.4f}"


def incomplete_line(incomplete: Sequence[tuple[str, str]], what: str, shown: int = 10) -> str:
    """The answers left out, named (the first ``shown``)."""
    names = ", ".join(f"{s}/{q}" for s, q in incomplete[:shown])
    more = f" and {len(incomplete) - shown} more" if len(incomplete) > shown else ""
    return f"{len(incomplete)} answer(s) not yet {what} left out (incomplete): {names}{more}"
