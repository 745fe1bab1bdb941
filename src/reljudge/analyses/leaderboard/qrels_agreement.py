"""Agreement of a judge's qrels with truth qrels as relevant sets (pure), the set measures of
TREC AutoJudge's ``qrel-evaluate`` (autojudge-evaluate 1.1.0, ``nugget_doc_eval``):

per topic, a document is relevant on a side when its grade is at least that side's relevance
level (``judge_level``, ``truth_level``); a document one side has not judged has grade 0 there
(not relevant). A topic only one side judges counts with an empty relevant set on the other
(autojudge-evaluate's default, ``--on-missing default``). Then

- precision, recall and F1 of the judge's relevant set against the truth's, with TP, FP, FN:
  0 where one side has no relevant document (as autojudge-evaluate reports them), NaN where
  neither has one (autojudge-evaluate leaves such a topic out of its set-overlap table; here it
  is left out of the means);
- Jaccard |both| / |either| (NaN when neither side has a relevant document);
- the adjusted Rand index (scikit-learn's ``adjusted_rand_score``) of the two binary labellings
  of the topic's documents (the union of both sides' judged documents).

The summary has the mean over topics (macro) and, over all topics pooled, micro precision,
recall, F1 and Jaccard.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from reljudge.errors import MissingExtraError

Qrels = Mapping[str, Mapping[str, float]]


def _ari(truth: list[int], judge: list[int]) -> float:
    try:
        from sklearn.metrics import adjusted_rand_score
    except ImportError:
        raise MissingExtraError(
            "the adjusted Rand index needs scikit-learn; install it with: pip install 'reljudge[agreement]'"
        ) from None

    return float(adjusted_rand_score(truth, judge))


def _prf(tp: int, fp: int, fn: int) -> tuple[float, float, float, float]:
    if tp + fp + fn == 0:  # no relevant document on either side: nothing to agree on
        return math.nan, math.nan, math.nan, math.nan
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    jaccard = tp / (tp + fp + fn) if tp + fp + fn else math.nan
    return precision, recall, f1, jaccard


def qrels_agreement(
    judge: Qrels, truth: Qrels, *, judge_level: float = 1, truth_level: float = 1
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Per-topic rows and the summary (module docstring)."""
    rows: list[dict[str, Any]] = []
    totals = [0, 0, 0]
    for topic in sorted(set(judge) | set(truth)):
        j_docs, t_docs = judge.get(topic, {}), truth.get(topic, {})
        docs = sorted(set(j_docs) | set(t_docs))
        t_rel = [int(t_docs.get(d, 0) >= truth_level) for d in docs]
        j_rel = [int(j_docs.get(d, 0) >= judge_level) for d in docs]
        tp = sum(a & b for a, b in zip(t_rel, j_rel, strict=True))
        fp = sum(b and not a for a, b in zip(t_rel, j_rel, strict=True))
        fn = sum(a and not b for a, b in zip(t_rel, j_rel, strict=True))
        precision, recall, f1, jaccard = _prf(tp, fp, fn)
        totals = [totals[0] + tp, totals[1] + fp, totals[2] + fn]
        rows.append(
            {
                "topic": topic,
                "documents": len(docs),
                "precision": precision,
                "recall": recall,
                "f1": f1,
                "tp": tp,
                "fp": fp,
                "fn": fn,
                "jaccard": jaccard,
                "ari": _ari(t_rel, j_rel),
                "judge_has_topic": topic in judge,
                "truth_has_topic": topic in truth,
            }
        )
    summary: dict[str, Any] = {"topics": len(rows)}
    for key in ("precision", "recall", "f1", "jaccard", "ari"):
        values = [r[key] for r in rows if not math.isnan(r[key])]
        summary[f"mean_{key}"] = sum(values) / len(values) if values else math.nan
        summary[f"{key}_topics"] = len(values)
    micro = _prf(*totals)
    summary.update(
        {
            "micro_precision": micro[0],
            "micro_recall": micro[1],
            "micro_f1": micro[2],
            "micro_jaccard": micro[3],
            "tp": totals[0],
            "fp": totals[1],
            "fn": totals[2],
            "judge_only_topics": sorted(set(judge) - set(truth)),
            "truth_only_topics": sorted(set(truth) - set(judge)),
            "judge_level": judge_level,
            "truth_level": truth_level,
            "rule": f"relevant: judge grade >= {judge_level:g}, truth grade >= {truth_level:g}; a document a side "
            "did not judge is not relevant there; a topic one side lacks has an empty relevant set there",
        }
    )
    return rows, summary
