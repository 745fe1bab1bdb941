"""`LabelView`: the fields of a `Judgment` that label aggregation reads, and `iter_label_views`,
which reads them from a judgments file without building whole records.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from reljudge.io.judgment_lines import parse_line, resolve_judgments_path
from reljudge.records import Judgment, Key


class _LabelFields(BaseModel):
    """The `LabelView` fields of a judgment line (the rest of the line is skipped, not built)."""

    model_config = ConfigDict(extra="ignore")

    qid: str
    docid: str | None = None
    docid_b: str | None = None
    item_id: str | None = None
    method: str
    label: int | float | None = None
    status: str = "ok"


def iter_label_views(path: str | Path, label_methods: Collection[str]) -> Iterator[LabelView | Judgment]:
    """Every record of a judgments file in order: those of ``label_methods`` as `LabelView`s,
    read without building (or checking) the rest of the record, at about half the cost of
    `iter_judgments`; the others in full. Meant for a file whose records were checked when
    they were written (a run's own file at the end of the run): a label line is checked only
    for these fields; any other line that does not read as a record is an `InputError`."""
    path = resolve_judgments_path(path)
    labels = frozenset(label_methods)
    strings: dict[str, str] = {}
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            if not raw.strip():
                continue
            try:
                fields: _LabelFields | None = _LabelFields.model_validate_json(raw)
            except ValidationError:
                fields = None
            if fields is not None and fields.method in labels:
                yield LabelView(
                    strings.setdefault(fields.qid, fields.qid),
                    fields.docid,
                    fields.docid_b,
                    fields.item_id,
                    strings.setdefault(fields.method, fields.method),
                    fields.label,
                    fields.status,
                )
                continue
            record = parse_line(raw, path, number, last=not raw.endswith(b"\n"))
            if record is None:  # a torn last line, skipped with a warning
                return
            yield LabelView.of(record, strings) if record.method in labels else record


@dataclass(slots=True)
class LabelView:
    """The fields of a `Judgment` that label aggregation reads (``qid``, ``docid``, ``docid_b``,
    ``item_id``, ``method``, ``label``, ``status``; ``ok``, ``key``), without the raw answer and
    provenance: a few dozen bytes instead of a few kilobytes, for aggregating many records."""

    qid: str
    docid: str | None
    docid_b: str | None
    item_id: str | None
    method: str
    label: int | float | None
    status: str

    @classmethod
    def of(cls, record: Judgment, strings: dict[str, str] | None = None) -> LabelView:
        intern = strings.setdefault if strings is not None else (lambda s, _d: s)
        return cls(
            intern(record.qid, record.qid),
            record.docid,
            record.docid_b,
            record.item_id,
            intern(record.method, record.method),
            record.label,
            record.status,
        )

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def key(self) -> Key:
        return (self.method, self.qid, self.docid or "", self.docid_b or "", self.item_id or "")
