"""Similarity of generated answers to judged passages (thesis §5.1; spec S7 (1)–(2); (3)–(4) are
`reljudge.analyses.answers.common_scale`). Pure.

Sim is the **cosine** of two vectors. Every function takes an `EmbeddingSource` that holds the
vectors of both the judged passages (keyed by docid) and the answers (keyed by any id the
caller chooses, e.g. `answer_id`); ids without a vector are left out and counted.

- `pick_targets`: one target per topic among its passages of grade ≥ ``min_grade``: seeded
  random (``mode="random"``) or the highest grade first (``mode="top-grade-first"``, a seeded
  choice within that grade).
- `cross_grade`: cos(target, p) for every *other* judged passage p of the topic, grouped by
  the grade of p (an encoder that separates relevance makes the mean fall with the grade).
- `answer_grades`: per system and grade, the mean over topics of (the mean over the judged
  passages p of that grade of cos(answer, p)): macro over topics.
- `top_grade_targets`: per topic its passages at its highest grade (≥ ``min_grade``), the
  targets of the common scale of runs and generators (`reljudge.analyses.answers.common_scale`).
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from reljudge.vectors.embedding_source import EmbeddingSource

Scores = Mapping[str, Mapping[str, float]]
#: ``{system: {qid: id of the answer's vector}}``
AnswerIds = Mapping[str, Mapping[str, str]]


def answer_id(system: str, qid: str) -> str:
    """The id under which an answer's vector is kept beside the passages' (tab-separated, so it
    never equals a docid read from a TREC file)."""
    return f"answer\t{system}\t{qid}"


def _unit(matrix: np.ndarray) -> np.ndarray:
    matrix = np.asarray(matrix, dtype=np.float64)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return np.divide(matrix, norms, out=np.zeros_like(matrix), where=norms > 0)


def cosines(vector: np.ndarray, matrix: np.ndarray) -> np.ndarray:
    """cos(vector, each row of matrix); 0 for a zero vector."""
    if matrix.size == 0:
        return np.zeros(0)
    return _unit(matrix) @ _unit(np.asarray(vector)[None, :])[0]


def pick_targets(
    qrels: Scores, *, min_grade: float = 2, mode: str = "random", seed: int = 0
) -> dict[str, str]:
    """One target docid per topic that has a passage of grade ≥ ``min_grade``."""
    if mode not in ("random", "top-grade-first"):
        raise ValueError(f"target mode {mode!r}: expected random or top-grade-first")
    out: dict[str, str] = {}
    for qid, docs in qrels.items():
        pool = sorted(d for d, g in docs.items() if g >= min_grade)
        if not pool:
            continue
        if mode == "top-grade-first":
            top = max(docs[d] for d in pool)
            pool = [d for d in pool if docs[d] == top]
        out[qid] = random.Random(f"{seed}:{qid}").choice(pool)
    return out


@dataclass
class GradeStats:
    """Cosines grouped by grade: ``values[grade]`` and the ids that had no vector."""

    values: dict[float, list[float]] = field(default_factory=dict)
    missing: list[tuple[str, str]] = field(default_factory=list)

    def summary(self) -> list[dict]:
        rows = []
        for grade in sorted(self.values, reverse=True):
            v = np.asarray(self.values[grade])
            p5, q1, med, q3, p95 = np.percentile(v, [5, 25, 50, 75, 95]) if v.size else (np.nan,) * 5
            rows.append({"grade": grade, "n": int(v.size), "mean": float(v.mean()) if v.size else np.nan,
                         "p5": float(p5), "q1": float(q1), "median": float(med), "q3": float(q3),
                         "p95": float(p95)})  # fmt: skip
        return rows


def cross_grade(qrels: Scores, targets: Mapping[str, str], source: EmbeddingSource,
                texts: Mapping[str, str] | None = None) -> GradeStats:  # fmt: skip
    """cos(target, p) for every other judged passage p of each topic, by the grade of p."""
    stats = GradeStats()
    for qid, target in targets.items():
        docs = qrels.get(qid, {})
        others = [d for d in docs if d != target]
        tv, _, tmiss = source.lookup([target], texts)
        if tmiss:
            stats.missing.append((qid, target))
            continue
        matrix, found, miss = source.lookup(others, texts)
        stats.missing.extend((qid, d) for d in miss)
        for d, c in zip(found, cosines(tv[0], matrix), strict=True):
            stats.values.setdefault(float(docs[d]), []).append(float(c))
    return stats


def _answer_vector(source: EmbeddingSource, aid: str, texts: Mapping[str, str] | None) -> np.ndarray | None:
    v, _, miss = source.lookup([aid], texts)
    return None if miss else v[0]


def answer_grades(qrels: Scores, answers: AnswerIds, source: EmbeddingSource,
                  texts: Mapping[str, str] | None = None) -> dict[str, dict[float, float]]:  # fmt: skip
    """``{system: {grade: mean over topics of mean_p cos(answer, p)}}`` (macro over topics)."""
    out: dict[str, dict[float, float]] = {}
    for system, by_qid in answers.items():
        per_grade: dict[float, list[float]] = {}
        for qid, aid in by_qid.items():
            docs = qrels.get(qid)
            vec = _answer_vector(source, aid, texts) if docs else None
            if vec is None or not docs:
                continue
            matrix, found, _ = source.lookup(list(docs), texts)
            sims = cosines(vec, matrix)
            for grade in {docs[d] for d in found}:
                mask = np.array([docs[d] == grade for d in found])
                per_grade.setdefault(float(grade), []).append(float(sims[mask].mean()))
        out[system] = {g: float(np.mean(v)) for g, v in sorted(per_grade.items(), reverse=True)}
    return out


def top_grade_targets(qrels: Scores, *, min_grade: float = 2) -> dict[str, list[str]]:
    """Per topic, its passages at its highest grade, when that grade is ≥ ``min_grade``."""
    out: dict[str, list[str]] = {}
    for qid, docs in qrels.items():
        if docs and (top := max(docs.values())) >= min_grade:
            out[qid] = sorted(d for d, g in docs.items() if g == top)
    return out
