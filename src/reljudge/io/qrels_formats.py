"""Qrels in the forms evaluation tools read, and back: grades from judgment records or document
scores (`to_qrels`, through the float policy of `reljudge.io.trec`), ``ir_measures.Qrel`` lists
and ``ranx.Qrels`` objects, and a qrels-like mapping (a published LLM judgment file) as judgment
records (`judgments_from_qrels`).

Failed judgments (status other than ``ok``) carry no label and are left out: a failure is never
turned into a grade.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from reljudge.errors import InputError
from reljudge.io.trec import FLOAT_POLICIES, FloatPolicy, Grade, Qrels, apply_float_policy, qrels_topics
from reljudge.records import Judgment, Provenance

logger = logging.getLogger(__name__)


def _pointwise(judgments: Iterable[Judgment], method: str | None) -> list[Judgment]:
    chosen: list[Judgment] = []
    methods: set[str] = set()
    structured = 0
    for judgment in judgments:
        if method is not None and judgment.method != method:
            continue
        if judgment.docid is None or judgment.docid_b is not None or judgment.item_id is not None:
            structured += 1
            continue
        methods.add(judgment.method)
        chosen.append(judgment)
    if len(methods) > 1:
        raise InputError(
            f"judgments of several methods ({', '.join(sorted(methods))}); choose one (method=... / --method)"
        )
    if not chosen and structured:
        raise InputError(
            "only pairwise or per-item judgments found; aggregate them to per-passage labels first"
        )
    return chosen


def to_qrels(
    judgments_or_scores: Iterable[Judgment] | Mapping[str, Mapping[str, Grade]],
    *,
    float_policy: FloatPolicy = "round",
    scale: float = 100.0,
    method: str | None = None,
) -> Qrels:
    """Qrels ``{qid: {docid: grade}}`` from judgment records or from a ``{qid: {docid: score}}``
    mapping, applying ``float_policy`` to the labels.

    From records: only pointwise ones (a ``docid``, no ``docid_b``/``item_id``) with status
    ``ok``; with several records per key the last wins; records of more than one method need
    ``method=``.
    """
    if float_policy not in FLOAT_POLICIES:
        raise InputError(f"unknown float policy {float_policy!r} (choose one of {', '.join(FLOAT_POLICIES)})")
    if isinstance(judgments_or_scores, Mapping):
        return dict(qrels_topics(judgments_or_scores, float_policy, scale=scale))
    from reljudge.io.judgments import latest_by_key

    qrels: Qrels = {}
    for judgment in latest_by_key(_pointwise(judgments_or_scores, method)):
        if judgment.status != "ok" or judgment.label is None:
            continue
        grade = apply_float_policy(judgment.label, float_policy, scale)
        qrels.setdefault(judgment.qid, {})[judgment.docid or ""] = grade
    if float_policy == "keep":
        fractional = sum(1 for docs in qrels.values() for g in docs.values() if isinstance(g, float))
        if fractional:
            logger.warning(
                "%d label(s) are not integers and are kept as floats: trec_eval, ranx and "
                "ir_measures truncate them to int (use --float round or scale for those tools)",
                fractional,
            )
    return qrels


def to_ir_measures_qrels(
    qrels: Mapping[str, Mapping[str, Grade]], *, float_policy: FloatPolicy = "round", scale: float = 100.0
) -> list[Any]:
    """A list of ``ir_measures.Qrel`` (integer relevance; floats go through ``float_policy``,
    where ``keep`` is not allowed because ir_measures would truncate)."""
    import ir_measures

    if float_policy == "keep":
        raise InputError("ir_measures needs integer relevance: use float_policy 'round' or 'scale'")
    ints = to_qrels(qrels, float_policy=float_policy, scale=scale)
    return [
        ir_measures.Qrel(qid, docid, int(grade))
        for qid, docs in ints.items()
        for docid, grade in docs.items()
    ]


def to_ranx_qrels(
    qrels: Mapping[str, Mapping[str, Grade]],
    *,
    float_policy: FloatPolicy = "round",
    scale: float = 100.0,
    name: str | None = None,
) -> Any:
    """A ``ranx.Qrels`` (ranx truncates float relevance, so floats go through ``float_policy``;
    ``keep`` is refused)."""
    try:
        from ranx import Qrels as RanxQrels
    except ImportError:  # pragma: no cover - depends on the installation
        raise InputError("ranx is not installed (pip install 'reljudge[ranx]')") from None
    if float_policy == "keep":
        raise InputError("ranx needs integer relevance: use float_policy 'round' or 'scale'")
    ints = to_qrels(qrels, float_policy=float_policy, scale=scale)
    result = RanxQrels.from_dict({qid: {d: int(g) for d, g in docs.items()} for qid, docs in ints.items()})
    if name:
        result.name = name
    return result


def judgments_from_qrels(
    qrels: Mapping[str, Mapping[str, Grade]],
    method: str,
    model: str | None = None,
    *,
    source: str | Path | None = None,
) -> list[Judgment]:
    """Treat a qrels-like mapping (e.g. a published LLM judgment file) as ``ok`` judgment records
    of ``method``; the labels (int or float) are kept unchanged."""
    provenance: dict[str, Any] = {"backend": "import", "model": model}
    if source is not None:
        provenance["source"] = str(source)
    records = []
    for qid, docs in qrels.items():
        for docid, grade in docs.items():
            records.append(
                Judgment(
                    qid=str(qid),
                    docid=str(docid),
                    method=method,
                    label=grade,
                    status="ok",
                    provenance=Provenance(**provenance),
                )
            )
    return records
