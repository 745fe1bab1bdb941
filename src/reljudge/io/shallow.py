"""Files of the shallow-pool pipeline (``judge shallow``): pools and the judged pairs read back.

- a pool file: one line per (query, pooled passage), ``qid docid contributors``, the
  contributors comma-separated (the runs whose top passage it is, and ``qrels`` for q*);
- the outcomes of a pairwise run directory (or ``judgments.jsonl``): one per pair record,
  ``(qid, docid, docid_b, label, record number)`` with label 1 (docid preferred), 2 (docid_b), 0 (tie)
  or None (the record is not ``ok``). Records that compare no pair are counted, not returned.

Pairs files themselves are `reljudge.io.pairs` (read) and `write_pairs` here (write).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from reljudge.errors import InputError
from reljudge.io.atomic import atomic_write


def write_pool(pools: Mapping[str, Mapping[str, Sequence[str]]], path: str | Path) -> None:
    """Write a pool file atomically, queries and passages in the order given."""
    with atomic_write(path) as handle:
        for qid, pool in pools.items():
            for docid, contributors in pool.items():
                handle.write(f"{qid}\t{docid}\t{','.join(contributors)}\n")


def read_pool(path: str | Path) -> dict[str, dict[str, list[str]]]:
    """Read a pool file (see the module docstring); bad lines are ``file:line`` errors."""
    from reljudge.io.lines import read_lines

    path = Path(path)
    pools: dict[str, dict[str, list[str]]] = {}
    for number, line in read_lines(path):
        parts = line.split()
        if not parts or line.lstrip().startswith("#"):
            continue
        if len(parts) != 3:
            raise InputError(f"expected 'qid docid contributors', found {len(parts)} columns", path, number)
        qid, docid, contributors = parts
        names = [c for c in contributors.split(",") if c]
        if not names:
            raise InputError("a pooled passage without contributors", path, number)
        pool = pools.setdefault(qid, {})
        if docid in pool:
            raise InputError(f"passage {docid!r} pooled twice for topic {qid!r}", path, number)
        pool[docid] = names
    if not pools:
        raise InputError("no pooled passages in file", path)
    return pools


def write_pairs(pairs: Iterable[Sequence[str]], path: str | Path) -> int:
    """Write a pairs file atomically: ``qid docidA docidB`` or, with categories,
    ``qid cat1 cat2 docid1 docid2`` (tab-separated); returns the number of pairs."""
    n = 0
    with atomic_write(path) as handle:
        for pair in pairs:
            if len(pair) not in (3, 5):
                raise ValueError(f"a pair is 3 or 5 fields, not {len(pair)}: {pair!r}")
            handle.write("\t".join(pair) + "\n")
            n += 1
    return n


def pairwise_outcomes(path: str | Path) -> tuple[list[tuple[str, str, str, int | None, int]], int]:
    """The pair records of a judgments file or run directory, the last record of each pair
    (``--retry-failed`` appends), as ``(qid, docid, docid_b, label, record number)``; and how many
    records compare no pair (pointwise records) and were left out."""
    from reljudge.io.judgments import resolve_judgments_path, scan_judgments

    path = resolve_judgments_path(path)
    latest: dict[tuple[str, str, str], tuple[str, str, str, int | None, int]] = {}
    other = 0
    for number, (_, record) in enumerate(scan_judgments(path), start=1):
        if record.docid is None or record.docid_b is None:
            other += 1
            continue
        label = record.label if record.status == "ok" else None
        if label is not None and label not in (0, 1, 2):
            raise InputError(f"pair record {number}: label {label!r} is not 1, 2 or 0 (tie)", path)
        a, b = record.docid, record.docid_b
        first, second = sorted((a, b))
        latest[(record.qid, first, second)] = (record.qid, a, b, None if label is None else int(label), number)
    return list(latest.values()), other
