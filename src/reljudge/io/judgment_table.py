"""Judgment records as a table: one flat row per record (`judgment_row`: record fields,
provenance, usage, ``params.*`` and ``extra.*``), as a pandas DataFrame (`to_dataframe`), the CSV
that ``judge export --to csv`` writes."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from reljudge.records import Judgment

if TYPE_CHECKING:
    import pandas

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
