"""``judge export``: judgment records -> one score set -> a qrels, CSV or JSONL file.

The formats themselves are io's (`reljudge.io.qrels_formats.to_qrels` and the float policy of
`reljudge.io.trec`, `reljudge.io.judgment_table.to_dataframe`); which records make which
document scores is the judging methods' business (`reljudge.judges.scoring`).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from reljudge.errors import InputError
from reljudge.io.judgment_table import to_dataframe
from reljudge.io.qrels_formats import to_qrels
from reljudge.io.trec import FLOAT_POLICIES, FloatPolicy
from reljudge.records import Judgment

EXPORT_FORMATS: tuple[str, ...] = ("qrels", "csv", "jsonl")


def export_source(
    source: str | Path,
    out: str | Path,
    *,
    to: str = "qrels",
    float_policy: FloatPolicy = "round",
    scale: float = 100.0,
    method: str | None = None,
    score_set: str | None = None,
) -> int:
    """``judge export``: the judgments of ``source`` (a run directory, a judgments file or a
    qrels-like file, `load_judgment_source`) written by `export_judgments`.

    A qrels comes from a score set, which needs every record of a judgments source (the stage
    records too): there ``method`` picks the set, not the records; elsewhere it filters them
    (and names the method of an imported qrels file)."""
    from reljudge.io.judgments import is_judgments_path

    by_set = to == "qrels" and is_judgments_path(source)
    records = load_judgment_source(source, method=None if by_set else method)
    return export_judgments(
        records, out, to=to, float_policy=float_policy, scale=scale, method=method, score_set=score_set
    )


def export_judgments(
    judgments: list[Judgment],
    out: str | Path,
    *,
    to: str = "qrels",
    float_policy: FloatPolicy = "round",
    scale: float = 100.0,
    method: str | None = None,
    score_set: str | None = None,
) -> int:
    """Write judgments as ``qrels``, ``csv`` (via `to_dataframe`) or ``jsonl``, atomically.
    Returns the number of lines/rows written.

    ``qrels``: the document scores of one score set of the records
    (`reljudge.judges.scoring.score_sets`: pointwise labels, pairwise win counts, EXAM and
    nugget scores), the one named ``score_set``, else the primary set of ``method`` or of the
    only method present (`reljudge.judges.scoring.select_set`), through `to_qrels` with
    ``float_policy``. Records of several keys: the last per key counts. ``csv``/``jsonl``: the
    records (of ``method`` when given)."""
    from reljudge.io.atomic import atomic_write
    from reljudge.io.trec import write_qrels

    if to not in EXPORT_FORMATS:
        raise InputError(f"unknown export format {to!r} (choose one of {', '.join(EXPORT_FORMATS)})")
    if float_policy not in FLOAT_POLICIES:
        raise InputError(f"unknown float policy {float_policy!r} (choose one of {', '.join(FLOAT_POLICIES)})")
    if to == "qrels":
        qrels = export_scores(judgments, method=method, score_set=score_set)
        qrels = to_qrels(qrels, float_policy=float_policy, scale=scale)
        if not qrels:
            raise InputError("no ok judgments give a score to export as qrels")
        write_qrels(qrels, out)
        return sum(len(docs) for docs in qrels.values())
    if method is not None:
        judgments = [j for j in judgments if j.method == method]
    if to == "csv":
        frame = to_dataframe(judgments)
        with atomic_write(out) as handle:
            frame.to_csv(handle, index=False)
        return len(frame)
    from reljudge.io.judgments import write_judgments

    return write_judgments(judgments, out)


def export_scores(
    judgments: Iterable[Judgment], *, method: str | None = None, score_set: str | None = None
) -> dict[str, dict[str, float]]:
    """The document scores ``export_judgments(..., to="qrels")`` writes, before the float policy
    (see there); `InputError` when the records cannot be aggregated or the set is unknown."""
    from reljudge.io.judgments import latest_by_key
    from reljudge.judges.scoring import score_sets, select_set

    try:
        sets = score_sets(latest_by_key(judgments))
        if not sets:
            return {}
        return sets[select_set(sets, name=score_set, method=method)].scores
    except ValueError as err:
        raise InputError(f"cannot export qrels: {err}") from None


def load_judgment_source(
    path: str | Path, *, method: str | None = None, model: str | None = None
) -> list[Judgment]:
    """Judgments from a run directory, a judgments file (``.jsonl``, ``.json``, ``.ndjson``: see
    `reljudge.io.judgments.is_judgments_path`), or a qrels-like file
    (imported with `judgments_from_qrels`, method = ``method`` or the file name up to its first
    dot). Records are de-duplicated (last per key wins) and filtered to ``method`` if given."""
    from reljudge.io.judgments import is_judgments_path, load_judgments
    from reljudge.io.qrels_formats import judgments_from_qrels
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
