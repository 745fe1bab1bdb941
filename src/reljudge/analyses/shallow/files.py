"""Files of the shallow-pool analysis (``judge shallow``): the pools and pairs it writes, and the
judged pairs read back as preferences.

- a pool file: one line per (query, pooled passage), ``qid docid contributors``, the
  contributors comma-separated (the runs whose top passage it is, and ``qrels`` for q*);
- a pairs file: ``qid docidA docidB`` (the pool's pairs) or, for better than perfect,
  ``qid ref A|B|gold reference other``; both are the ``--pairs`` input of ``judge run --method
  pairwise`` and are read by `reljudge.io.pairs`;
- the outcomes of a pairwise run directory (or ``judgments.jsonl``): one per pair record,
  ``(qid, docid, docid_b, label, record number)`` with label 1 (docid preferred), 2 (docid_b), 0 (tie)
  or None (the record is not ``ok``). Records that compare no pair are counted, not returned;
- `load_preferences`: where the preferences of judged pairs come from: a pairwise run (``judge
  run --method pairwise --pairs``: both orders combined, a tie when they disagree) or the human
  grades (the higher grade wins, equal grades tie). Either way the pairs outside the pools (or
  the pairs file) asked about are counted, never silently used;
- the runs directory, the best-known qrels with their provenance, and the JSON reports.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from reljudge.analyses.shallow.btp import BtpPair
from reljudge.analyses.shallow.preference_outcomes import (
    TIE,
    Preferences,
    agreement,
    human_preferences,
    pair_key,
)
from reljudge.analyses.shallow.shallow_pools import REFERENCE, unordered_pairs
from reljudge.errors import InputError
from reljudge.io.atomic import atomic_write

#: the category columns of a btp pairs file: ``qid ref A|B|gold reference other``
REF_COLUMN = "ref"
CATEGORIES = ("A", "B", "gold")


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
        latest[(record.qid, first, second)] = (
            record.qid,
            a,
            b,
            None if label is None else int(label),
            number,
        )
    return list(latest.values()), other


def write_btp_pairs(pairs: Iterable[BtpPair], path: str | Path) -> int:
    """Write a btp pairs file (``qid ref A|B|gold reference other``) atomically; returns the
    number of pairs."""
    return write_pairs([(p.qid, REF_COLUMN, p.category, p.reference, p.other) for p in pairs], path)


def read_btp_pairs(path: Path) -> list[BtpPair]:
    """The pairs of a btp pairs file, each with its category."""
    from reljudge.io.pairs import read_pairs

    pairs, cats = read_pairs(path)
    out: list[BtpPair] = []
    for qid, docs in pairs.items():
        for a, b in docs:
            c = cats.get((qid, a, b))
            if c is None or c[0] != REF_COLUMN or c[1] not in CATEGORIES:
                raise InputError(
                    f"pair {qid} {a} {b} is not a 'qid ref A|B|gold reference other' line "
                    "(write the file with `judge shallow btp-pairs`)",
                    path,
                )
            out.append(BtpPair(qid, c[1], a, b))
    return out


def load_preferences(
    pairs: Iterable[tuple[str, str, str]],
    *,
    judged: Path | None = None,
    human_qrels: Path | None = None,
) -> tuple[Preferences, dict[str, int]]:
    """The preferences of ``pairs`` (``(qid, a, b)``, the pairs the analysis needs) and counts:
    pairs asked, judged records used, records outside ``pairs``, pairs without a record, records
    comparing no pair. The source is the pairwise run ``judged``, else the human grades; with
    both, the run is the source and ``info["agreement_with_human_grades"]`` compares the two."""
    if judged is None and human_qrels is None:
        raise InputError("give a preference source: --judged RUN_DIR and/or --human-qrels QRELS")
    wanted = {pair_key(q, a, b) for q, a, b in pairs}
    info: dict[str, Any] = {"pairs": len(wanted)}
    if judged is None:
        from reljudge.io.trec import read_qrels

        assert human_qrels is not None  # one source at least, checked above
        prefs = human_preferences(sorted(wanted), read_qrels(human_qrels))
        info["source_human_qrels"] = 1
        info["unjudged_no_grade"] = len(prefs.unjudged)
        return prefs, info
    records, other = pairwise_outcomes(judged)
    prefs = Preferences()
    outside = 0
    for qid, a, b, label, _ in records:
        if a == b:
            raise InputError(f"a pair record compares {a!r} with itself (topic {qid})", judged)
        if pair_key(qid, a, b) not in wanted:
            outside += 1
            continue
        winner = None if label is None else a if label == 1 else b if label == 2 else TIE
        prefs.add(qid, a, b, winner)
    have = set(prefs.outcomes) | prefs.failed
    info.update(
        records_used=len(have),
        records_outside=outside,
        records_not_pairs=other,
        not_judged=len(wanted - have),
        failed=len(prefs.failed),
    )
    if human_qrels is not None:
        from reljudge.io.trec import read_qrels

        human = human_preferences(sorted(wanted), read_qrels(human_qrels))
        info["agreement_with_human_grades"] = agreement(prefs, human)
    return prefs, info


def read_pool_preferences(
    pool: Path, judged: Path | None, human_qrels: Path | None
) -> tuple[Any, Any, dict[str, int]]:
    """The pools of a pool file, the preferences of all their pairs (`load_preferences`) and its
    counts."""
    pools = read_pool(pool)
    prefs, info = load_preferences(unordered_pairs(pools, pools), judged=judged, human_qrels=human_qrels)
    return pools, prefs, info


def read_runs(runs: Path, subset: list[str] | None = None) -> dict[str, Any]:
    """The TREC runs of a directory (only those named in ``subset``, when given); none may be
    named like the pseudo-run of q*."""
    from reljudge.io.trec import read_runs_dir

    found = read_runs_dir(runs)
    if REFERENCE in found:
        raise InputError(f"a run is named {REFERENCE!r}, the name of the pseudo-run of q*", runs)
    if subset:
        unknown = [r for r in subset if r not in found]
        if unknown:
            raise InputError(f"--runs-subset names unknown run(s): {', '.join(unknown[:5])}", runs)
        found = {r: found[r] for r in subset}
    return found


def write_best_known(
    best: Mapping[str, Mapping[str, int]], replaced: Iterable[tuple[BtpPair, str]], out: Path, source: str
) -> None:
    """Write the best-known qrels ``out`` and ``out.provenance.tsv`` (per replaced q*: the passage
    that beat it, its category and the judge ``source``)."""
    from reljudge.io.atomic import write_text_atomic
    from reljudge.io.trec import write_qrels

    lines = ["qid\tprevious\tbest_known\tcategory\tsource\n"]
    lines += [f"{p.qid}\t{p.reference}\t{new}\t{p.category}\t{source}\n" for p, new in replaced]
    write_qrels(best, out)
    write_text_atomic(Path(f"{out}.provenance.tsv"), "".join(lines))


def write_json(path: Path, report: Any) -> None:
    """Write a report as indented JSON (NaN as null, text unescaped), atomically."""
    from reljudge.io.atomic import write_text_atomic
    from reljudge.io.tables import json_ready

    write_text_atomic(path, json.dumps(json_ready(report), indent=2, ensure_ascii=False) + "\n")
