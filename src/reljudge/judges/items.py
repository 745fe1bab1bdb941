"""The items a judge works on: the pooled (topic, passage) pairs in pool order, and why a topic or
a passage cannot be judged (a missing or empty text: the judge records it as ``skipped``)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from reljudge.judges.base import JudgeInputs


def passage_problem(corpus: Mapping[str, str], docid: str) -> str | None:
    """Why a passage cannot be judged (missing or empty text), or None when it can."""
    text = corpus.get(docid)
    if text is None:
        return f"no text for passage {docid!r} in the corpus"
    if not text.strip():
        return f"passage {docid!r} is empty"
    return None


def topic_problem(topics: Mapping[str, str], qid: str) -> str | None:
    text = topics.get(qid)
    if text is None:
        return f"no query text for topic {qid!r}"
    if not text.strip():
        return f"query text of topic {qid!r} is empty"
    return None


def pool_items(inputs: JudgeInputs) -> Iterable[tuple[str, str]]:
    """(qid, docid) for every pooled document, in pool order, without duplicates per topic."""
    for qid, docids in inputs.pool.items():
        seen: set[str] = set()
        for docid in docids:
            if docid not in seen:
                seen.add(docid)
                yield qid, docid
