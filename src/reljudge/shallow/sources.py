"""Where the preferences of judged pairs come from: a pairwise run (``judge run --method pairwise
--pairs``: both orders combined, a tie when they disagree) or the human grades (the higher grade
wins, equal grades tie). Either way the pairs outside the pools (or the pairs file) asked about
are counted, never silently used."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from reljudge.errors import InputError
from reljudge.metrics.shallow import TIE, Preferences, agreement, human_preferences, pair_key


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
    from reljudge.io.shallow import pairwise_outcomes

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


def top_of_pool(pools: Mapping[str, Mapping[str, list[str]]]) -> dict[str, dict[str, str]]:
    """``{run: {qid: docid}}`` from a pool's contributors (the pseudo-run ``qrels`` included)."""
    out: dict[str, dict[str, str]] = {}
    for qid, pool in pools.items():
        for docid, contributors in pool.items():
            for run in contributors:
                out.setdefault(run, {})[qid] = docid
    return out
