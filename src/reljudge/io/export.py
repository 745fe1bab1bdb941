"""From judgment records to the formats evaluation tools read, and back.

Float labels and the ``float_policy``
-------------------------------------
Several methods give non-integer labels (EXAM means, nugget scores). trec_eval parses the
relevance column as an integer and ranx and ir_measures (pytrec_eval) *truncate* floats, so
0.9 silently becomes 0. `to_qrels` therefore makes the choice explicit:

- ``"round"`` (default): round half up to the nearest integer (0.5 -> 1, 2.5 -> 3);
- ``"scale"``: multiply by ``scale`` (default 100) and round half up: keeps the order of
  fractional scores (0.3 -> 30) for gain-based measures, at the cost of a new gain scale;
- ``"keep"``: keep floats as they are (fine for rank-based tools such as compatibility, and
  for reljudge's own metrics); a warning is logged when a label is not integral, because
  trec_eval / ranx would truncate it.

Integral floats (2.0) always become ints. Failed judgments (status other than ``ok``) carry no
label and are left out: a failure is never turned into a grade.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from reljudge.errors import InputError
from reljudge.io.trec import Grade, Qrels
from reljudge.records import Judgment, Provenance

if TYPE_CHECKING:
    import pandas

logger = logging.getLogger(__name__)

FloatPolicy = Literal["round", "scale", "keep"]
FLOAT_POLICIES: tuple[str, ...] = ("round", "scale", "keep")


def _round_half_up(value: float) -> int:
    return int(math.floor(value + 0.5))


def apply_float_policy(grade: Grade, policy: FloatPolicy = "round", scale: float = 100.0) -> Grade:
    """One label under a float policy (see the module docstring)."""
    if policy not in FLOAT_POLICIES:
        raise InputError(f"unknown float policy {policy!r} (choose one of {', '.join(FLOAT_POLICIES)})")
    if isinstance(grade, bool):
        grade = int(grade)
    if policy == "scale":
        return _round_half_up(grade * scale)
    if isinstance(grade, int):
        return grade
    if grade.is_integer():
        return int(grade)
    if policy == "round":
        return _round_half_up(grade)
    return grade


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
    qrels: Qrels = {}
    if isinstance(judgments_or_scores, Mapping):
        for qid, docs in judgments_or_scores.items():
            qrels[str(qid)] = {str(d): apply_float_policy(g, float_policy, scale) for d, g in docs.items()}
    else:
        from reljudge.io.judgments import latest_by_key

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


_PROVENANCE_COLUMNS = (
    "backend",
    "model",
    "prompt_id",
    "prompt_sha256",
    "messages_sha256",
    "latency_s",
    "cached",
    "attempts",
    "tool_version",
    "timestamp",
)
_USAGE_COLUMNS = ("prompt_tokens", "completion_tokens", "calls", "cost_usd")
BASE_COLUMNS: tuple[str, ...] = (
    "qid",
    "docid",
    "docid_b",
    "item_id",
    "method",
    "label",
    "status",
    "parse",
    "raw",
    "error",
    *_PROVENANCE_COLUMNS,
    *_USAGE_COLUMNS,
)


def _flat(value: Any) -> Any:
    if isinstance(value, (dict, list, tuple)):
        import json

        return json.dumps(value, ensure_ascii=False, sort_keys=True)
    return value


def judgment_row(judgment: Judgment) -> dict[str, Any]:
    """One flat dict per record: record fields, provenance fields, usage, ``params.*`` and
    ``extra.*`` (nested values as JSON text)."""
    prov = judgment.provenance
    row: dict[str, Any] = {
        "qid": judgment.qid,
        "docid": judgment.docid,
        "docid_b": judgment.docid_b,
        "item_id": judgment.item_id,
        "method": judgment.method,
        "label": judgment.label,
        "status": judgment.status,
        "parse": judgment.parse,
        "raw": judgment.raw,
        "error": judgment.error,
    }
    for name in _PROVENANCE_COLUMNS:
        row[name] = getattr(prov, name)
    for name in _USAGE_COLUMNS:
        row[name] = getattr(prov.usage, name)
    for name, value in sorted(prov.params.items()):
        row[f"params.{name}"] = _flat(value)
    for name, value in sorted((prov.model_extra or {}).items()):
        row[f"provenance.{name}"] = _flat(value)
    for name, value in sorted(judgment.extra.items()):
        row[f"extra.{name}"] = _flat(value)
    return row


def to_dataframe(judgments: Iterable[Judgment]) -> pandas.DataFrame:
    """A pandas DataFrame, one row per record, provenance flattened into columns."""
    import pandas as pd

    rows = [judgment_row(j) for j in judgments]
    columns = list(BASE_COLUMNS)
    for row in rows:
        for name in row:
            if name not in columns:
                columns.append(name)
    frame = pd.DataFrame(rows, columns=columns)
    return frame


EXPORT_FORMATS: tuple[str, ...] = ("qrels", "csv", "jsonl")


def load_judgment_source(
    path: str | Path, *, method: str | None = None, model: str | None = None
) -> list[Judgment]:
    """Judgments from a run directory, a judgments file (``.jsonl``, ``.json``, ``.ndjson``: see
    `reljudge.io.judgments.is_judgments_path`), or a qrels-like file
    (imported with `judgments_from_qrels`, method = ``method`` or the file name up to its first
    dot). Records are de-duplicated (last per key wins) and filtered to ``method`` if given."""
    from reljudge.io.judgments import is_judgments_path, load_judgments
    from reljudge.io.trec import read_qrels

    path = Path(path)
    if not path.exists():
        raise InputError("file or directory not found", path)
    if is_judgments_path(path):
        records = load_judgments(path, latest=True)
        if method is not None:
            records = [j for j in records if j.method == method]
            if not records:
                raise InputError(f"no judgments of method {method!r}", path)
        return records
    qrels = read_qrels(path)
    return judgments_from_qrels(qrels, method or path.name.split(".")[0], model, source=path)
