"""Writing grid preferences judged by a model (``judge run --method grid-pairwise``): the
``prompt<TAB>system_x<TAB>system_y<TAB>pref`` TSV the grids analysis reads as human preferences
(`reljudge.io.grids.read_preferences`), with a header line it skips, written atomically."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from reljudge.io.atomic import atomic_write

#: the file a grid-pairwise run writes beside its qrels
PREFERENCES_FILE = "preferences.tsv"


def write_preferences(rows: Iterable[tuple[str, str, str, int]], path: str | Path) -> int:
    """Write the rows (prompt, system_x, system_y, pref in -2..2) in the order given; returns
    how many were written."""
    count = 0
    with atomic_write(path) as handle:
        handle.write("prompt\tsystem_x\tsystem_y\tpref\n")
        for prompt, x, y, pref in rows:
            handle.write(f"{prompt}\t{x}\t{y}\t{int(pref)}\n")
            count += 1
    return count


__all__ = ["PREFERENCES_FILE", "write_preferences"]
