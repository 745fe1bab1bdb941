"""Steps ``btp-pairs`` and ``btp`` of ``judge shallow``: "better than perfect" (thesis §3.1.2),
and the optional best-known-answer update (SH-12) from the same judged pairs."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from reljudge.analyses.shallow.btp import (
    BtpPair,
    btp_pairs,
    category_b_test,
    gold_accuracy,
    reference_passages,
    tally,
)
from reljudge.analyses.shallow.preference_outcomes import TIE
from reljudge.errors import InputError

#: the category columns of a btp pairs file: ``qid ref A|B|gold reference other``
REF_COLUMN = "ref"
CATEGORIES = ("A", "B", "gold")


def _blank(corpus: Any, docid: str) -> bool:
    return docid not in corpus or not corpus[docid].strip()


def btp_pairs_step(
    *,
    qrels: Path,
    run: Path,
    out: Path,
    relevant: float = 1,
    choice: str = "first",
    corpus: Path | None = None,
    gold: int = 0,
    seed: int = 0,
) -> dict[str, Any]:
    """Write ``out/pairs.tsv`` (``qid ref A|B|gold reference other``, the ``--pairs`` input of
    ``judge run --method pairwise``) and ``out/btp-pairs.json``; return the report."""
    from reljudge.analyses.shallow.files import write_pairs
    from reljudge.io.atomic import write_text_atomic
    from reljudge.io.tables import json_ready
    from reljudge.io.trec import read_qrels, read_run

    grades = read_qrels(qrels)
    system = read_run(run)
    rankings = {q: system.ranked(q) for q in system}
    refs = reference_passages(grades, relevant=relevant, choice=choice, rankings=rankings)  # type: ignore[arg-type]
    made = btp_pairs(refs, rankings)
    skipped = {reason: len(qs) for reason, qs in made.skipped.items()}
    pairs = made.pairs
    if corpus is not None:
        from reljudge.io.corpus import load_corpus

        text = load_corpus(
            corpus, docids={d for p in pairs for d in (p.reference, p.other)} | set(refs.values())
        )
        no_ref = [p for p in pairs if _blank(text, p.reference)]
        no_other = [p for p in pairs if not _blank(text, p.reference) and _blank(text, p.other)]
        if no_ref:
            skipped["reference passage without text"] = len(no_ref)
        if no_other:
            skipped["compared passage without text"] = len(no_other)
        dropped = set(no_ref) | set(no_other)
        pairs = [p for p in pairs if p not in dropped]
    gold_pairs: list[BtpPair] = []
    if gold:
        rng = random.Random(seed)
        pool = list(pairs)
        if len({p.qid for p in pool}) < 2:
            raise InputError("gold pairs need at least two queries with a pair")
        for p in rng.sample(pool, min(gold, len(pool))):
            candidates = [
                o.reference for o in pool if o.qid != p.qid and o.reference not in grades.get(p.qid, {})
            ]
            if candidates:
                gold_pairs.append(BtpPair(p.qid, "gold", p.reference, rng.choice(candidates)))
    out.mkdir(parents=True, exist_ok=True)
    lines = [(p.qid, REF_COLUMN, p.category, p.reference, p.other) for p in [*pairs, *gold_pairs]]
    n = write_pairs(lines, out / "pairs.tsv")
    counts = {c: sum(1 for p in pairs if p.category == c) for c in ("A", "B")}
    total = counts["A"] + counts["B"]
    report = {
        "qrels": str(qrels),
        "run": str(run),
        "reference": {"choice": choice, "relevant": relevant},
        "queries_in_qrels": len(grades),
        "queries_with_reference": len(refs),
        "queries_without_reference": len(grades) - len(refs),
        "skipped": skipped,
        "categories": {
            c: {"queries": k, "share": k / total if total else float("nan")} for c, k in counts.items()
        },
        "gold_pairs": len(gold_pairs),
        "pairs": n,
        "calls_both_orders": 2 * n,
        "pairs_file": str(out / "pairs.tsv"),
    }
    write_text_atomic(out / "btp-pairs.json", _json(json_ready(report)))
    return report


def _json(value: Any) -> str:
    import json

    return json.dumps(value, indent=2, ensure_ascii=False) + "\n"


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


def btp_step(
    *,
    pairs: Path,
    judged: Path | None = None,
    human_qrels: Path | None = None,
    out: Path | None = None,
    update_out: Path | None = None,
) -> dict[str, Any]:
    """The tallies of a judged btp pairs file; with ``update_out``, the best-known qrels: q*
    replaced where the run's top passage won (for a pairwise run: in both orders)."""
    from reljudge.shallow.sources import load_preferences

    btp = read_btp_pairs(pairs)
    prefs, info = load_preferences(
        [(p.qid, p.reference, p.other) for p in btp], judged=judged, human_qrels=human_qrels
    )
    real = [p for p in btp if p.category != "gold"]
    gold = [p for p in btp if p.category == "gold"]
    tallies = tally(real, prefs)
    total = sum(t.queries for t in tallies.values())
    report: dict[str, Any] = {
        "pairs_file": str(pairs),
        "source": str(judged or human_qrels),
        "source_counts": info,
        "categories": {
            c: {**t.as_dict(), "share_of_queries": t.queries / total if total else float("nan")}
            for c, t in tallies.items()
        },
        "category_b_binomial": category_b_test(tallies["B"]),
    }
    if gold:
        report["gold"] = gold_accuracy(gold, prefs)
    if update_out is not None:
        report["update"] = _best_known(real, prefs, update_out, str(judged or human_qrels))
    if out is not None:
        from reljudge.io.atomic import write_text_atomic
        from reljudge.io.tables import json_ready

        write_text_atomic(out, _json(json_ready(report)))
    return report


def _best_known(pairs: list[BtpPair], prefs: Any, out: Path, source: str) -> dict[str, Any]:
    """Write ``out`` (one best-known passage per query of the pairs, grade 1) and
    ``out.provenance.tsv`` (the replaced q*, the passage that beat it, the judge)."""
    from reljudge.io.atomic import write_text_atomic
    from reljudge.io.trec import write_qrels

    best: dict[str, dict[str, int]] = {}
    lines = ["qid\tprevious\tbest_known\tcategory\tsource\n"]
    replaced = 0
    for p in pairs:
        w = prefs.outcome(p.qid, p.reference, p.other)
        new = p.other if p.category == "B" and w not in (None, TIE) and w == p.other else p.reference
        best[p.qid] = {new: 1}
        if new != p.reference:
            replaced += 1
            lines.append(f"{p.qid}\t{p.reference}\t{new}\t{p.category}\t{source}\n")
    write_qrels(best, out)
    write_text_atomic(Path(f"{out}.provenance.tsv"), "".join(lines))
    return {
        "queries": len(best),
        "replaced": replaced,
        "qrels": str(out),
        "provenance": f"{out}.provenance.tsv",
    }
