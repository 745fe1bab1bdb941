"""Citation scores of answers from ``citation-support`` records (pure computation).

Per answer (system, topic), after open-rag-eval's ``CitationMetric.compute``, with one difference:

- ``precision`` (open-rag-eval's weighted precision): the mean score (full 1, partial 0.5, no 0)
  over the *judged* citations of the answer -- every (sentence, cited passage) pair with an ``ok``
  record; None when the answer has no judged citation;
- ``recall`` (weighted recall): the sum over the answer's sentences of each sentence's support,
  divided by the number of sentences; a sentence's support is the best score among its judged
  citations (0 for a sentence that cites nothing or whose citations were not judged);
- ``f1``: the harmonic mean of the two; 0 when precision is None or both are 0 (open-rag-eval's 0);
- ``cited_share``: the share of sentences with at least one citation.

The difference: open-rag-eval judges only the *first* citation of each sentence (``citations[0]``)
and sums those scores for recall. Here every citation of a sentence is judged: a second citation
that does not support its sentence is a claim of support that fails, so it counts in precision;
recall takes each sentence's best citation, so that a sentence counts at most once and recall stays
within [0, 1]. For answers whose sentences cite at most one passage both give the same numbers.

Citations without a judged label (a ``skipped`` record: no passage text; or a failed or unparsed
answer) are left out of precision and counted in ``unjudged``. Only the records of an answer's
latest version count (its newest ``citations_sha256``: text, citations and references; records
from before that field: ``answer_sha256``), so that a passage the answer no longer cites is not
scored; an answer whose records do not yet cover all its
citations (an interrupted run) is left out and listed in ``incomplete``. Per system: the number of
topics and the means over its answers (precision over the answers where it is defined).

After the run they are written as `SCORE_FILES`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from reljudge.io.score_files import ScoreFiles
from reljudge.judges.answer_tables import (
    Versions,
    current_records,
    fmt,
    incomplete_line,
    qid_order,
    render_rows,
)

#: the method of the records scored (one definition, also the judge's name)
CITATION_METHOD = "citation-support"
SCORES: tuple[str, ...] = ("precision", "recall", "f1", "cited_share")
COUNTS: tuple[str, ...] = ("sentences", "cited_sentences", "citations", "judged", "unjudged")
#: the files of the citation scores of answers, written into the run directory after the run:
#:
#: - ``answer-citations-topics.csv``: ``system,qid,sentences,cited_sentences,citations,judged,unjudged,
#:   precision,recall,f1,cited_share`` (an undefined precision -- no judged citation -- is an empty cell);
#: - ``answer-citations-systems.csv``: ``system,topics,topics_without_judged``, the summed counts and
#:   the four means;
#: - ``answer-citations.json``: ``{"topics": [...], "systems": [...], "incomplete": [...]}`` (undefined
#:   scores are ``null``).
SCORE_FILES = ScoreFiles(
    "answer-citations-topics.csv",
    "answer-citations-systems.csv",
    "answer-citations.json",
    ("system", "qid", *COUNTS, *SCORES),
    ("system", "topics", "topics_without_judged", *COUNTS, *SCORES),
)


@dataclass
class CitationTable:
    """``topics`` rows (system, qid, counts, four scores), ``systems`` rows (system, topics,
    topics_without_judged, summed counts, four means) and the answers left out."""

    topics: list[dict[str, Any]]
    systems: list[dict[str, Any]]
    incomplete: list[tuple[str, str]] = field(default_factory=list)


def answer_scores(
    sentences: int, cited_sentences: int, pairs: Sequence[tuple[int, float | None]]
) -> dict[str, Any]:
    """The four scores of one answer from its ``(sentence, score or None)`` citation pairs."""
    judged = [s for _, s in pairs if s is not None]
    best: dict[int, float] = {}
    for sentence, score in pairs:
        if score is not None:
            best[sentence] = max(score, best.get(sentence, 0.0))
    precision = sum(judged) / len(judged) if judged else None
    recall = sum(best.values()) / sentences if sentences else 0.0
    if precision is None or precision + recall == 0:
        f1 = 0.0
    else:
        f1 = 2 * precision * recall / (precision + recall)
    return {
        "sentences": sentences,
        "cited_sentences": cited_sentences,
        "citations": len(pairs),
        "judged": len(judged),
        "unjudged": len(pairs) - len(judged),
        "precision": precision,
        "recall": recall,
        "f1": f1,
        "cited_share": cited_sentences / sentences if sentences else 0.0,
    }


def citation_table(
    records: Iterable[Any], systems: Sequence[str] | None = None, current: Versions | None = None
) -> CitationTable:
    """Per answer and per system scores from a run's records (the latest per key). ``current``:
    the ``citations_sha256`` of the answers the run was given (their records count; without it,
    those of each answer's newest version)."""
    groups: dict[tuple[str, str], list[Any]] = {}
    for r in records:
        if r.method == CITATION_METHOD and isinstance(r.extra.get("system"), str):
            groups.setdefault((r.extra["system"], r.qid), []).append(r)
    rows: dict[tuple[str, str], dict[str, Any]] = {}
    incomplete: list[tuple[str, str]] = []
    for (system, qid), mine in current_records(groups, _fingerprint, current).items():
        if not mine:
            incomplete.append((system, qid))
            continue
        pairs = [r for r in mine if r.extra.get("sentence") is not None]
        info = mine[0].extra
        expected = int(info.get("citations", 0))
        if len(pairs) < expected:
            incomplete.append((system, qid))
            continue
        scored = [(int(r.extra["sentence"]), float(r.label) if r.status == "ok" else None) for r in pairs]
        rows[(system, qid)] = {
            "system": system,
            "qid": qid,
            **answer_scores(int(info.get("sentences", 0)), int(info.get("cited_sentences", 0)), scored),
        }
    order = list(systems) if systems is not None else []
    order += sorted({s for s, _ in rows} - set(order))
    topic_rows = [
        rows[k] for s in order for k in sorted((k for k in rows if k[0] == s), key=lambda k: qid_order(k[1]))
    ]
    system_rows = []
    for s in order:
        mine = [r for r in topic_rows if r["system"] == s]
        if not mine:
            continue
        row: dict[str, Any] = {
            "system": s,
            "topics": len(mine),
            "topics_without_judged": sum(1 for r in mine if r["precision"] is None),
        }
        for name in COUNTS:
            row[name] = sum(r[name] for r in mine)
        for name in SCORES:
            values = [r[name] for r in mine if r[name] is not None]
            row[name] = sum(values) / len(values) if values else None
        system_rows.append(row)
    return CitationTable(topic_rows, system_rows, sorted(incomplete))


def _fingerprint(record: Any) -> Any:
    """The answer version a record was made from (its sentences, citations and references)."""
    return record.extra.get("citations_sha256") or record.extra.get("answer_sha256")


def render_citation_table(table: CitationTable) -> str:
    """The per-system means as text (one line per system)."""
    if not table.systems:
        return "citations: no answer scored yet"
    names = ["system", "topics", "citations", "judged", *SCORES]
    rows = [
        [str(r["system"]), str(r["topics"]), str(r["citations"]), str(r["judged"])]
        + [fmt(r[s]) for s in SCORES]
        for r in table.systems
    ]
    lines = render_rows(names, rows)
    unjudged = sum(r["unjudged"] for r in table.systems)
    if unjudged:
        lines.append(
            f"{unjudged} citation(s) without a label (no passage text, or no answer read) left out of precision"
        )
    if table.incomplete:
        lines.append(incomplete_line(table.incomplete, "judged on every citation"))
    return "\n".join(lines)
